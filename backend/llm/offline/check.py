"""The cross-check of the prompt against the task fields.

The offline model answers from the prompt alone. When the client also sends the task's fields (in-process, or
``serve-model`` with ``send_task_fields``), they only check the reading: the template recognised must be the sent
task's, and every input read from the prompt must agree with the one sent. A disagreement means the prompt does not
carry what the method thinks it sends (a document dropped, the wrong round's history): with
``CONFLICTLENS_OFFLINE_CHECK=strict`` (the test suite's setting) it raises ``PromptMismatch`` naming the task and the
field; otherwise it is logged once per task and field, and the model still answers from the prompt.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from backend.llm.offline.common import is_memory_source
from backend.llm.offline.registry import Fields, PromptReader

MODE_ENV = "CONFLICTLENS_OFFLINE_CHECK"
log = logging.getLogger(__name__)
_warned: set[tuple[str, str]] = set()


class PromptMismatch(ValueError):
    """The prompt and the task fields disagree (see the module docstring)."""


def strict() -> bool:
    return os.environ.get(MODE_ENV, "").strip().lower() == "strict"


def _flat(value: Any) -> str:
    return re.sub(r"\s+", " ", "" if value is None else str(value)).strip()


def _texts(value: Any) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else [] if value is None else [value]
    return [_flat(i.get("text") if isinstance(i, dict) else i) for i in items]


def same_text(a: Any, b: Any) -> bool:
    """Equal once whitespace is normalised (None reads as "")."""
    return _flat(a) == _flat(b)


def same_list(a: Any, b: Any) -> bool:
    """Item by item (passages by their text)."""
    return _texts(a) == _texts(b)


def same_joined(a: Any, b: Any) -> bool:
    """The same text once joined: for prompts that join items with line breaks (a passage may hold several lines)."""
    return _flat(" ".join(_texts(a))) == _flat(" ".join(_texts(b)))


def same_passages(a: Any, b: Any) -> bool:
    """The same texts in the same order, and, where the prompt labels a passage's source, memory where memory."""
    if not same_list(a, b):
        return False
    return all(not isinstance(p, dict) or not p.get("source") or not isinstance(q, dict)
               or is_memory_source(p["source"]) == is_memory_source(q.get("source"))
               for p, q in zip(a or [], b or []))


def _same(reader: PromptReader, key: str, value: Any) -> Any:
    if key in reader.same:
        return reader.same[key]
    if key == "passages":
        return same_passages
    return same_list if isinstance(value, (list, tuple)) else same_text


def _show(value: Any) -> str:
    text = _flat(value)
    return repr(text if len(text) <= 100 else text[:97] + "...")


def _difference(read: Any, sent: Any) -> str:
    if not isinstance(read, (list, tuple)) and not isinstance(sent, (list, tuple)):
        return f"the prompt has {_show(read)}, the fields {_show(sent)}"
    a, b = _texts(read), _texts(sent)
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    first = (f"item {i + 1} reads {_show(a[i]) if i < len(a) else 'nothing'} in the prompt, "
             f"{_show(b[i]) if i < len(b) else 'nothing'} in the fields")
    return f"the prompt has {len(a)} item(s), the fields {len(b)}; {first}"


def disagreements(reader: PromptReader, read: Fields, sent: Fields) -> list[tuple[str, str]]:
    """(field, what differs) for every input read from the prompt that the fields state otherwise."""
    if sent.get("task") != reader.task:
        return [("task", f"the prompt is {reader.template!r}, a prompt of task {reader.task!r}, but the fields name "
                         f"task {sent.get('task')!r}")]
    out = []
    for key, value in read.items():
        if key == "task" or key not in sent:
            continue
        if not _same(reader, key, value)(value, sent[key]):
            out.append((key, _difference(value, sent[key])))
    return out


def _report(task: str, field: str, message: str) -> None:
    if strict():
        raise PromptMismatch(message)
    if (task, field) not in _warned:
        _warned.add((task, field))
        log.warning("%s (logged once per task and field)", message)


def cross_check(reader: PromptReader, read: Fields, sent: Fields) -> None:
    for key, what in disagreements(reader, read, sent):
        _report(str(sent.get("task")), key, f"offline model, task {sent.get('task')!r} ({reader.template}): the prompt "
                                            f"and the task fields disagree on {key!r}: {what}")


def unrecognised(task: str) -> None:
    """A prompt that matches no template came with the fields of a task only a template can carry."""
    _report(task, "task", f"offline model, task {task!r}: the prompt matches no template registered for it (nor any "
                          f"other), so its inputs cannot be read from it; register a PromptReader beside its handler")
