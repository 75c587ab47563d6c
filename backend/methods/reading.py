"""Two readings of the same replies: ``tolerant`` (the project's readers, the default) and ``paper`` (each paper's
own rule, or its released code's where the code decides).

A model's reply is read at a *decision*: the option BRIDGE's responder chose, whether RC-RAG keeps its answer, the
answer a MADAM-RAG agent gave, the final pick of Astute RAG, the answer RA-RAG's misalignment filter scores. The
tolerant readers read chat-style replies (Markdown, a sentence around the answer, JSON) that the papers' rules
would reject or read otherwise; that is the right default for users, but it must not be invisible. So every
decision is read both ways (readers are pure functions of the reply: the other reading costs no model call), the
run's ``reading`` decides, and each decision the other reading would have made differently is recorded on the
result (``MethodResult.reading_differences``) and shown by the views ("2 of this method's decisions depend on the
tolerant reader: …"). ``decisions_read`` counts the decisions read, so a share can be given.

A difference is recorded at the decision where it happens; what follows it (a later prompt built from the other
answer) is not simulated: that would need new model calls. ``backend.evaluate`` runs the other reading as a whole
when asked (``other_reading``), from the reply cache.

Where each method's ``paper`` rule comes from is written in its reader's docstring (the method's ``parse`` module).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from backend.schema.result import ReadingDifference

Reading = Literal["tolerant", "paper"]
READINGS: tuple[Reading, ...] = ("tolerant", "paper")
DEFAULT_READING: Reading = "tolerant"

#: What each reading is, in the words of the CLI's help and the app's setting.
READING_HELP = {"tolerant": "the project's readers: chat-style replies (Markdown, a sentence around the answer, "
                            "JSON) are read as the papers' formats where they can be (the default)",
                "paper": "each paper's own rule, or its released code's: a reply not in the paper's format is read "
                         "as the paper's code would read it (often: no answer)"}

T = TypeVar("T")


def other(reading: Reading) -> Reading:
    return "paper" if reading == "tolerant" else "tolerant"


def check(reading: str) -> Reading:
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
    return reading  # type: ignore[return-value]


def shown(value: Any) -> str:
    """A decision's value as the views show it (short text: a reply's reading is never a long object)."""
    if value is None:
        return "nothing (unreadable)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return "; ".join(shown(v) for v in value) if value else "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass
class Readings:
    """One run's reading and its record: ``decide`` reads a reply both ways and returns the run's reading's value."""

    reading: Reading = DEFAULT_READING
    decisions: int = 0
    differences: list[ReadingDifference] = field(default_factory=list)

    def __post_init__(self) -> None:
        check(self.reading)

    def decide(self, step: str, tolerant: T, paper: T, *, call_id: str | None = None,
               key: Callable[[T], Any] = lambda v: v, show: Callable[[T], str] | None = None,
               what: str = "") -> T:
        """The value this run's reading takes of one decision, of the two readings' values (already read: readers
        are pure functions of the reply). ``key``: what is compared (the decision, not the reader's notes: e.g.
        ``lambda p: p.value`` for a ``Parsed``); ``show``: how a value is shown (default: ``shown(key(value))``);
        ``what``: the decision in a few words ("option", "keep or discard")."""
        self.decisions += 1
        used, unused = (tolerant, paper) if self.reading == "tolerant" else (paper, tolerant)
        if key(tolerant) != key(paper):
            render = show or (lambda v: shown(key(v)))
            self.differences.append(ReadingDifference(step=step, call_id=call_id, what=what, used=render(used),
                                                      other=render(unused)))
        return used

    def same(self, step: str, value: T, *, call_id: str | None = None) -> T:
        """A decision both readings read alike by construction (one rule for both): counted, never different."""
        self.decisions += 1
        return value


__all__ = ["Reading", "READINGS", "DEFAULT_READING", "READING_HELP", "Readings", "other", "check", "shown"]
