"""Which offline handler answers which task. A handler module registers its own (``register_handlers``); the
package imports every module here, so a method's offline handlers need no list to be edited."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Fields = dict[str, Any]
Handler = Callable[[Fields], str]

HANDLERS: dict[str, Handler] = {}


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
