"""The task contract between methods and models.

Every model call names a ``task``. The method renders a full prompt (all a hosted model needs) and also
passes the task's structured fields as call metadata. The offline model answers from the prompt (it reads the
task's inputs back out of it) and uses the fields only to cross-check that reading and as its memory
(``backend.llm.offline``). A hosted model never sees the metadata. The fields never carry ground truth: only the
question, passages with their source labels, the simulated memory (``internal_knowledge``) and what
earlier calls produced.

The general tasks several methods share are declared here; a method's own tasks are declared in its
``MethodSpec`` (``backend.methods.spec``), which registers them into ``TASKS`` when the method module is imported.
``reader`` is the function the method itself reads the reply with, called as ``reader(reply, **fields)`` (the call's
fields; a reader ignores those it does not need, and a declaration maps them onto a method reader's own arguments
with a lambda, e.g. ``lambda text, options, **_: parse_option(text, len(options))``); the offline model must emit
what it reads, and ``tests/llm/test_offline_tasks.py`` checks every registered task. ``read_reply`` runs the reader
on every completed call (the call records the read's status: ``LLMCall.read_status``). ``schema`` is the reply as a
JSON object, for structured output (``backend.llm.structured``), and ``as_schema`` writes the reader's value back as
that object; ``tests/llm/test_structured.py`` checks that each task's JSON reply reads as its text reply does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from backend.llm.formats import IDK, Parsed, exact, parse_passages, parse_short_answer, parse_yes_no, unreadable


@dataclass(frozen=True)
class TaskSpec:
    name: str
    fields: tuple[str, ...]   # metadata keys besides "task" and "question"
    reader: Callable[..., Any]  # reads the reply: the very function the method calls
    summary: str
    #: the reply as a JSON object, for models that take a JSON schema (``backend.llm.structured``; asked for only
    #: with ``LLMConfig.structured_output`` on): a pydantic model whose fields the reader reads as it reads the text
    #: format's labels
    schema: type[BaseModel] | None = None
    #: the reader's value as that object, called as ``as_schema(value, reply=..., fields=...)`` (the text reply and
    #: the call's fields, for an object that needs more than the value); ``serve-model`` answers a structured request
    #: with its text reply, read by ``reader`` and dumped through this
    as_schema: Callable[..., BaseModel] | None = None
    #: the most tokens this reply format needs ([ours], for a local model only): a ``local/`` model's ``max_tokens`` is
    #: capped at it, so a small model that loops (it repeats one sentence until cut off) stops early; a hosted model
    #: keeps the method's own (the paper's) ``max_tokens``. None: no cap.
    reply_tokens: int | None = None


# The general tasks' JSON replies (structured output), keyed as their readers read a JSON object.

class ShortAnswerReply(BaseModel):
    answer: str = Field(description="the answer in a few words, or \"I don't know\"")


class YesNoReply(BaseModel):
    answer: Literal["yes", "no"]


class PassagesReply(BaseModel):
    passages: list[str] = Field(description="the passages written from memory; an empty list when nothing is known")


def _short_answer(answer: str | None, **_) -> ShortAnswerReply:
    return ShortAnswerReply(answer=IDK if answer is None else answer)


_SHORT = dict(schema=ShortAnswerReply, as_schema=_short_answer)

#: passages are ``[{"id": str, "source": str, "text": str}, ...]`` in prompt order (numbered from 1)
TASKS: dict[str, TaskSpec] = {t.name: t for t in [
    TaskSpec("ping", (), parse_short_answer, "reply with the single word 'ready'", **_SHORT),
    TaskSpec("closed_book", ("memory",), parse_short_answer,
             "answer from memory only; 'I don't know' without memory", **_SHORT, reply_tokens=64),
    TaskSpec("keyword_answer", ("passages",), parse_short_answer,
             "essential keywords from the passages, or 'I don't know'", **_SHORT, reply_tokens=64),
    TaskSpec("entailment", ("premise", "hypothesis"), parse_yes_no,
             "does answer A entail answer B for the question",
             schema=YesNoReply, as_schema=lambda entailed, **_: YesNoReply(answer="yes" if entailed else "no"),
             reply_tokens=16),
    TaskSpec("generate_passage", ("memory", "max_passages"), parse_passages,
             "write passages from memory, or 'I don't know'", schema=PassagesReply,
             # what was dropped goes back too (an "I don't know", passages past the limit): read again, it drops alike
             as_schema=lambda p, **_: PassagesReply(passages=p.kept + [text for text, _ in p.dropped]),
             reply_tokens=384),
]}


def register_task(task: TaskSpec) -> None:
    """Add a method's task (``MethodSpec`` does it). The same declaration again (its module re-imported) replaces
    it; a name taken by another declaration is an error."""
    known = TASKS.get(task.name)
    if known is not None and (known.fields, _where(known.reader)) != (task.fields, _where(task.reader)):
        raise ValueError(f"task {task.name!r} is declared twice: by {_where(known.reader)} and {_where(task.reader)}")
    TASKS[task.name] = task


def read_reply(task: str, reply: str, fields: dict[str, Any], structured: bool = False) -> Parsed | None:
    """How ``task``'s reader reads ``reply`` given the call's ``fields`` (the client records it on every call with a
    reply). Readers never raise: one that does is a bug, reported as unreadable with the exception. None for a reader
    that does not say how it read (returns no ``Parsed``).

    ``structured``: the call asked for the task's JSON schema. Readers take a JSON object as a lenient read of the
    papers' text formats; a reply that is the JSON object asked for, read as written (the reader's value, written back
    through ``as_schema``, is the reply's object), is exact. One the reader had to adjust (Markdown inside a value, a
    refusal read as "I don't know", probabilities renormalised…) stays lenient with the reader's note."""
    spec = TASKS[task]
    try:
        parsed = spec.reader(reply, **fields)
    except Exception as exc:  # noqa: BLE001 - recorded on the call, not raised: the method reads the reply itself
        return unreadable(None, f"the reader of {task!r} raised {type(exc).__name__}: {exc} (a bug)")
    if not isinstance(parsed, Parsed):
        return None
    if structured and parsed.status == "lenient" and _as_written(spec, parsed.value, reply, fields):
        return exact(parsed.value)
    return parsed


def _as_written(spec: TaskSpec, value: Any, reply: str, fields: dict[str, Any]) -> bool:
    """Is ``reply`` an object of ``spec.schema`` that ``value``, written back through ``as_schema``, reproduces?"""
    if spec.schema is None or spec.as_schema is None:
        return False
    try:
        sent = spec.schema.model_validate_json(reply)
        back = spec.as_schema(value, reply=reply, fields=fields)
    except Exception:  # noqa: BLE001 - not JSON, not the schema, or a value the schema cannot hold: not as written
        return False
    return back.model_dump(mode="json") == sent.model_dump(mode="json")


def _where(reader: Callable[..., Any]) -> str:
    return f"{getattr(reader, '__module__', '?')}.{getattr(reader, '__qualname__', repr(reader))}"


#: Metadata keys that may never reach a model (a test asserts the client refuses them).
FORBIDDEN_FIELDS = frozenset({"gold_answers", "wrong_answers", "label", "labels", "true_reliability",
                              "coverage", "meta", "scenario", "gold", "true_answer"})
