"""Loading and checking the reply corpus: one YAML file per reader (``tests/llm/replies/*.yaml``), each case a reply
as a chat model wrote it, the reader's arguments, the value it must yield and the status the read must report.

A file names its reader by dotted path (``"package.module:function"``) and may give default ``kwargs`` (alias
``fields``: the call's fields, as a ``TaskSpec`` reader gets them); a case may override both. ``expect`` maps paths
into the reader's result (``value``, ``value[0]``, ``value.answer``, ``value.kept``...) to the expected values
(``value: X`` is short for ``expect: {value: X}``); tuples compare as lists and floats approximately. ``family``
(alias ``style``) names the model family whose habits the reply shows. Any reader that returns
``backend.llm.formats.Parsed`` works, so another method's readers join by adding a file (see ``README.md``).
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from backend.llm.formats import STATUSES, Parsed

FOLDER = Path(__file__).parent
_STEP = re.compile(r"\.(\w+)|\[(-?\d+)\]")


@dataclass(frozen=True)
class Case:
    file: str
    id: str
    family: str
    reader: str                  # "package.module:function"
    reply: str | None
    kwargs: dict[str, Any] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    status: str = "exact"
    note: str | None = None      # a substring the read's note must contain (any case)
    error: str | None = None     # the file could not be loaded (reported by its one case, not at collection)

    @property
    def name(self) -> str:
        return f"{self.file}:{self.id}"


def resolve(dotted: str) -> Callable[..., Any]:
    module, _, name = dotted.partition(":")
    return getattr(importlib.import_module(module), name)


def load(folder: Path = FOLDER) -> list[Case]:
    """Every case of every ``*.yaml`` file in ``folder``, in file order."""
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            spec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:   # one broken file fails its own test, not every file's collection
            cases.append(Case(file=path.stem, id="(file)", family="", reader="", reply=None, error=str(exc)))
            continue
        defaults = {**(spec.get("fields") or {}), **(spec.get("kwargs") or {})}
        for raw in spec.get("cases") or []:
            expect = dict(raw.get("expect") or {})
            if "value" in raw:
                expect["value"] = raw["value"]
            cases.append(Case(file=path.stem, id=str(raw["id"]), family=str(raw.get("family", raw.get("style", ""))),
                              reader=raw.get("reader", spec.get("reader")), reply=raw.get("reply"),
                              kwargs={**defaults, **(raw.get("fields") or {}), **(raw.get("kwargs") or {})},
                              expect=expect, status=raw.get("status", "exact"), note=raw.get("note")))
    return cases


#: The model families a reader's cases must cover, as ``family`` / ``style`` names them.
FAMILIES = {"gpt-4o": ("gpt",), "claude": ("claude",), "llama-3": ("llama",), "qwen": ("qwen",)}


def families(case: Case) -> set[str]:
    named = case.family.lower()
    return {family for family, words in FAMILIES.items() if any(w in named for w in words)}


def pick(result: Any, path: str) -> Any:
    """``path`` (``value``, ``value[0]``, ``value.answer``) applied to ``result``."""
    head = re.match(r"\w+", path).group(0)
    current = getattr(result, head)
    for attr, index in _STEP.findall(path[len(head):]):
        current = getattr(current, attr) if attr else current[int(index)]
    return current


def same(got: Any, want: Any) -> bool:
    if isinstance(want, float) or (isinstance(got, float) and isinstance(want, int) and not isinstance(want, bool)):
        return isinstance(got, (int, float)) and math.isclose(got, want, abs_tol=1e-9)
    if isinstance(got, (list, tuple)) and isinstance(want, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    return got == want


def problems(case: Case) -> list[str]:
    """What is wrong with ``case``'s read (empty when it reads as expected)."""
    if case.error:
        return [f"{case.file}.yaml does not load: {case.error}"]
    if case.status not in STATUSES:
        return [f"status {case.status!r} is none of {STATUSES}"]
    result = resolve(case.reader)(case.reply, **case.kwargs)
    if not isinstance(result, Parsed):
        return [f"{case.reader} returned {type(result).__name__}, not Parsed"]
    found = []
    for path, want in case.expect.items():
        got = pick(result, path)
        if not same(got, want):
            found.append(f"{path}: got {got!r}, want {want!r}")
    if result.status != case.status:
        found.append(f"status: got {result.status!r} ({result.note}), want {case.status!r}")
    if case.note and case.note.lower() not in (result.note or "").lower():
        found.append(f"note {result.note!r} does not say {case.note!r}")
    if result.status == "unreadable" and "default" not in (result.note or ""):
        found.append(f"an unreadable read must name the default the method used: {result.note!r}")
    if result.status != "exact" and not result.note:
        found.append("a lenient or unreadable read must say why")
    return found
