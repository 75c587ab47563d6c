"""How a method's model replies were read (``LLMCall.read_status``), where the user looks at the method.

A reply the reader could not read sends the method down its paper's default branch, so the page would explain a
decision the model never made: every page showing a method's result says so in a warning naming the default the method
used (the reader's note), with the raw replies one click away (an expander). Lenient reads (the value was read, with an
assumption the note states) get a quiet caption. Pure shaping (``unreadable_text``, ``lenient_text``, ``groups``) plus
two small ``render_*`` functions that place it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from backend.methods import title as method_title
from backend.report.text import plural
from backend.schema import LLMCall, MethodResult
from components.calls import role
from components.safe import md

RoleOf = Callable[[LLMCall], str]


@dataclass(frozen=True)
class ReadGroup:
    """Calls of one role whose replies were read the same way (same status and note)."""

    role: str
    note: str
    calls: tuple[LLMCall, ...]


def with_status(calls: Iterable[LLMCall], status: str) -> list[LLMCall]:
    return [c for c in calls if c.read_status == status]


def groups(calls: Iterable[LLMCall], status: str, role_of: RoleOf = role) -> list[ReadGroup]:
    """The calls read with ``status``, grouped by (role, note) in the order they were made."""
    found: dict[tuple[str, str], list[LLMCall]] = {}
    for call in with_status(calls, status):
        found.setdefault((role_of(call), call.read_note or "no note"), []).append(call)
    return [ReadGroup(r, note, tuple(cs)) for (r, note), cs in found.items()]


def _replies(n: int) -> str:
    return f"{plural(n, 'reply', 'replies')} {'was' if n == 1 else 'were'}"


def unreadable_text(calls: Sequence[LLMCall], role_of: RoleOf = role) -> list[str]:
    """The warning's lines (empty: every reply was read): a headline, and per (role, note) what was missing and the
    default the method used, e.g. "2 replies were not in the expected format (Soft Bias Allocator): no probabilities
    found; the method used its default: r_p = 0.5"."""
    found = groups(calls, "unreadable", role_of)
    if not found:
        return []
    head = f"{_replies(sum(len(g.calls) for g in found))} not in the expected format"
    if len(found) == 1:
        return [f"{head} ({found[0].role}): {found[0].note}"]
    return [f"{head}:"] + [f"{len(g.calls)} × {g.role}: {g.note}" for g in found]


def lenient_text(calls: Sequence[LLMCall], role_of: RoleOf = role, limit: int = 3) -> str | None:
    """One line on the replies read leniently and what was assumed (the first ``limit`` notes), or None."""
    found = groups(calls, "lenient", role_of)
    if not found:
        return None
    notes = [f"{g.role}: {g.note}" + (f" (× {len(g.calls)})" if len(g.calls) > 1 else "") for g in found[:limit]]
    more = f"; and {plural(len(found) - limit, 'other')}" if len(found) > limit else ""
    return f"{_replies(sum(len(g.calls) for g in found))} read leniently — " + "; ".join(notes) + more


def raw_reply(call: LLMCall) -> str:
    """The reply as the model wrote it: its text, or for one cut off at max_tokens while repeating itself
    (``LLMCall.cut_off``: the method got no reply) the text it wrote."""
    return call.cut_off if call.cut_off is not None else call.response or ""


def render_read_status(st, calls: Sequence[LLMCall], role_of: RoleOf = role, title: str | None = None) -> None:
    """A warning for the unreadable replies among ``calls`` with each raw reply in an expander, then a caption for
    the lenient ones; nothing when every reply was read exactly. ``title``: the method's name, for a page that shows
    several. The notes hold pieces of model output, so every line is shown literally."""
    lines = unreadable_text(calls, role_of)
    prefix = f"{title}: " if title else ""
    if lines:
        st.warning("  \n".join(md(prefix + lines[0] if i == 0 else line) for i, line in enumerate(lines)),
                   icon=":material/warning:")
        bad = with_status(calls, "unreadable")
        with st.expander(f"{prefix}the {plural(len(bad), 'reply', 'replies')} not in the expected format"):
            for call in bad:
                st.markdown(f"**{md(role_of(call))}** · {md(call.id)}")
                st.caption(md(call.read_note or ""))
                # a reply that looped until max_tokens reached the method as no reply: its text is kept beside
                st.code(raw_reply(call), language=None, wrap_lines=True)
    if (lenient := lenient_text(calls, role_of)) is not None:
        st.caption(md(prefix + lenient))


def render_results_read_status(st, results: Mapping[str, MethodResult]) -> None:
    """``render_read_status`` for each method of a page that shows several (Inspect), titled by the method."""
    for name, result in results.items():
        render_read_status(st, result.calls, title=method_title(name))
