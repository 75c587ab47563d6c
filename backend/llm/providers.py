"""litellm custom providers: ``offline/<name>`` (the project's deterministic model) and ``scripted/<name>``
(fixed replies per task, for tests). Both are reached through exactly the code path a hosted model uses."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import backend  # noqa: F401
import litellm
from litellm import CustomLLM
from litellm.types.utils import ModelResponse

from backend.llm.tokens import approx_tokens

_registered = False
_lock = threading.Lock()


def _fields(kwargs: dict[str, Any]) -> dict[str, Any]:
    return dict((kwargs.get("litellm_params") or {}).get("metadata") or {})


def _fill(resp: ModelResponse, model: str, text: str, messages: list[dict[str, str]]) -> ModelResponse:
    resp.choices[0].message.content = text
    resp.model = model
    prompt = approx_tokens(" ".join(str(m.get("content", "")) for m in messages))
    resp.usage = litellm.Usage(prompt_tokens=prompt, completion_tokens=approx_tokens(text),
                               total_tokens=prompt + approx_tokens(text))
    return resp


class OfflineLLM(CustomLLM):
    """The offline model: answers from the prompt and the task fields only (see backend.llm.offline).
    ``offline/chatty`` gives the same reply dressed as chat models write it (``backend.llm.chatty``); any other
    ``offline/<name>`` is the plain reader."""

    def completion(self, model, messages, *args, **kwargs) -> ModelResponse:
        from backend.llm.offline import respond

        from backend.llm.offline.check import PromptMismatch

        fields = _fields(kwargs)
        try:
            text = respond(messages, fields)
        except PromptMismatch as err:  # the request itself is wrong: a 400, never retried as a connection error
            raise litellm.exceptions.BadRequestError(str(err), model=f"offline/{model}", llm_provider="offline") from err
        if model == "chatty":
            from backend.llm.chatty import dress

            text = dress(text, messages, fields)
        return _fill(kwargs["model_response"], f"offline/{model}", text, messages)

    async def acompletion(self, model, messages, *args, **kwargs) -> ModelResponse:
        # CPU-bound (embeddings release the GIL): run in a thread so concurrent calls overlap
        return await asyncio.to_thread(self.completion, model, messages, *args, **kwargs)


Script = dict[str, str | list[str] | Callable[[dict[str, Any]], str]]


class ScriptedLLM(CustomLLM):
    """Replies from a script keyed by task: a string, a list consumed in order, or a function of the fields."""

    def __init__(self) -> None:
        super().__init__()
        self.script: Script = {}
        self.received: list[dict[str, Any]] = []  # every request's fields, for assertions
        self._lock = threading.Lock()

    def _take(self, fields: dict[str, Any], model: str) -> str | Callable[[dict[str, Any]], str]:
        """Record the request and pick its script entry (a list is consumed here, in arrival order)."""
        task = fields.get("task", "")
        with self._lock:
            self.received.append(fields)
            entry = self.script.get(task, self.script.get("*"))
            if entry is None:
                raise litellm.exceptions.BadRequestError(f"scripted model has no reply for task {task!r}",
                                                         model=model, llm_provider="scripted")
            if isinstance(entry, list):
                return entry.pop(0) if len(entry) > 1 else entry[0]
            return entry

    def completion(self, model, messages, *args, **kwargs) -> ModelResponse:
        fields = _fields(kwargs)
        entry = self._take(fields, model)
        text = entry(fields) if callable(entry) else entry
        return _fill(kwargs["model_response"], f"scripted/{model}", text, messages)

    async def acompletion(self, model, messages, *args, **kwargs) -> ModelResponse:
        # A reply function may block (tests simulate latency with time.sleep): run it in a thread so
        # concurrent calls overlap as they would against a real provider. Lists and strings are still
        # taken on the event loop, so a list is consumed in the order the calls arrive.
        fields = _fields(kwargs)
        entry = self._take(fields, model)
        text = await asyncio.to_thread(entry, fields) if callable(entry) else entry
        return _fill(kwargs["model_response"], f"scripted/{model}", text, messages)


SCRIPTED = ScriptedLLM()


@contextmanager
def scripted(script: Script) -> Iterator[ScriptedLLM]:
    """Install a script for ``scripted/<any>`` models for the duration of a ``with`` block."""
    register()
    SCRIPTED.script, SCRIPTED.received = {k: (list(v) if isinstance(v, list) else v) for k, v in script.items()}, []
    try:
        yield SCRIPTED
    finally:
        SCRIPTED.script = {}


def register() -> None:
    """Add our providers to litellm once per process, keeping any the user registered."""
    global _registered
    with _lock:
        if _registered:
            return
        existing = [p for p in (litellm.custom_provider_map or []) if p.get("provider") not in ("offline", "scripted")]
        litellm.custom_provider_map = existing + [
            {"provider": "offline", "custom_handler": OfflineLLM()},
            {"provider": "scripted", "custom_handler": SCRIPTED},
        ]  # litellm reads the map on every call (utils.custom_llm_setup)
        _registered = True
