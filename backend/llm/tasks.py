"""The task contract between methods and models.

Every model call names a ``task``. The method renders a full prompt (all a hosted model needs) and also
passes the task's structured fields as call metadata; the offline model reads those fields instead of
parsing prose. A hosted model never sees the metadata. The fields never carry ground truth: only the
question, passages with their source labels, the simulated memory (``internal_knowledge``) and what
earlier calls produced.

The general tasks several methods share are declared here; a method's own tasks are declared in its
``MethodSpec`` (``backend.methods.spec``), which registers them into ``TASKS`` when the method module is imported.
``reader`` is the function the method itself reads the reply with, called as ``reader(reply, **fields)`` (the call's
fields; a reader ignores those it does not need, and a declaration maps them onto a method reader's own arguments
with a lambda, e.g. ``lambda text, options, **_: parse_option(text, len(options))``); the offline model must emit
what it reads, and ``tests/llm/test_offline_tasks.py`` checks every registered task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backend.llm.formats import parse_passages, parse_short_answer, parse_yes_no


@dataclass(frozen=True)
class TaskSpec:
    name: str
    fields: tuple[str, ...]   # metadata keys besides "task" and "question"
    reader: Callable[..., Any]  # reads the reply: the very function the method calls
    summary: str


#: passages are ``[{"id": str, "source": str, "text": str}, ...]`` in prompt order (numbered from 1)
TASKS: dict[str, TaskSpec] = {t.name: t for t in [
    TaskSpec("ping", (), parse_short_answer, "reply with the single word 'ready'"),
    TaskSpec("closed_book", ("memory",), parse_short_answer,
             "answer from memory only; 'I don't know' without memory"),
    TaskSpec("keyword_answer", ("passages",), parse_short_answer,
             "essential keywords from the passages, or 'I don't know'"),
    TaskSpec("entailment", ("premise", "hypothesis"), parse_yes_no,
             "does answer A entail answer B for the question"),
    TaskSpec("generate_passage", ("memory", "max_passages"), parse_passages,
             "write passages from memory, or 'I don't know'"),
]}


def register_task(task: TaskSpec) -> None:
    """Add a method's task (``MethodSpec`` does it). The same declaration again (its module re-imported) replaces
    it; a name taken by another declaration is an error."""
    known = TASKS.get(task.name)
    if known is not None and (known.fields, _where(known.reader)) != (task.fields, _where(task.reader)):
        raise ValueError(f"task {task.name!r} is declared twice: by {_where(known.reader)} and {_where(task.reader)}")
    TASKS[task.name] = task


def _where(reader: Callable[..., Any]) -> str:
    return f"{getattr(reader, '__module__', '?')}.{getattr(reader, '__qualname__', repr(reader))}"


#: Metadata keys that may never reach a model (a test asserts the client refuses them).
FORBIDDEN_FIELDS = frozenset({"gold_answers", "wrong_answers", "label", "labels", "true_reliability",
                              "coverage", "meta", "scenario", "gold", "true_answer"})
