"""Which offline handler answers which task, and which prompt reader recognises which prompt template.

A handler module registers its own handlers (``register_handlers``) and, beside them, one ``PromptReader`` per prompt
template its tasks are asked with (``register_readers``): the offline model recognises the task from the prompt text
and reads the task's inputs back out of it, so a method's prompts are what its offline runs exercise. The package
imports every module here, so a method's offline handlers and readers need no list to be edited."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Fields = dict[str, Any]
Handler = Callable[[Fields], str]

HANDLERS: dict[str, Handler] = {}


@dataclass(frozen=True)
class PromptReader:
    """One prompt template of a task: ``read`` recognises it (None: not this template; use precompiled regexes, it
    runs on every call) and returns the task's inputs as the prompt states them (the same keys as the task's fields).

    ``remember``: the task also draws on the model's own memory (never in the prompt): it adds ``memory`` (and
    whatever else it recalls) to the inputs, from the model's knowledge (``knowledge.Knowledge``).
    ``same``: how an input read from the prompt is compared with the one the client sent (``check.agree`` has the
    defaults: texts with whitespace normalised, passages by text and memory-or-external source)."""

    task: str
    template: str                                       # names the template in errors, e.g. "MADAM agent, round 1"
    read: Callable[[Any], Fields | None]               # prompt.Prompt -> the inputs, or None
    remember: Callable[[Fields, Any], Fields] | None = None
    same: Mapping[str, Callable[[Any, Any], bool]] = field(default_factory=dict)


#: Every registered reader, tried in registration order; the first that recognises a prompt reads it.
READERS: list[PromptReader] = []


def register_readers(*readers: PromptReader) -> tuple[PromptReader, ...]:
    """Add prompt readers (a reader of the same template again, its module reloaded, replaces the old one)."""
    for reader in readers:
        known = [i for i, r in enumerate(READERS) if (r.task, r.template) == (reader.task, reader.template)]
        if known:
            READERS[known[0]] = reader
        else:
            READERS.append(reader)
    return readers


def forget_readers(task: str) -> None:
    READERS[:] = [r for r in READERS if r.task != task]


def register_handlers(handlers: dict[str, Handler]) -> dict[str, Handler]:
    """Add ``{task: handler}``; returns it, so a module can keep its own mapping by name."""
    for task, handler in handlers.items():
        known = HANDLERS.get(task)
        if known is not None and f"{known.__module__}.{known.__qualname__}" != \
                f"{handler.__module__}.{handler.__qualname__}":
            raise ValueError(f"task {task!r} already has the offline handler {known.__module__}.{known.__qualname__}")
        HANDLERS[task] = handler
    return handlers


def forget_handler(task: str) -> None:
    HANDLERS.pop(task, None)
    forget_readers(task)
