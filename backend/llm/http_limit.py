"""A size limit on every model HTTP response: a body larger than ``MAX_RESPONSE_BYTES`` is refused, not read whole.

Any analyst may name an endpoint, and a reply is read into memory before anything can look at its length: a 600 KB
reply, or a 100 MB body, would be held whole (and then read, scored, cached). ``limited()`` scopes the limit to one
model call: ``backend.llm.client`` enters it around each ``litellm.completion`` / ``acompletion``. Inside it, every
``httpx`` response body read (``Response.iter_bytes`` / ``aiter_bytes``, which ``read``/``aread`` and streaming both
go through) is refused with ``ResponseTooLarge``

* before a byte of the body is read, when its ``Content-Length`` says it is over the limit, and
* as soon as the bytes read pass the limit otherwise (a chunked body, a lying or missing ``Content-Length``, a
  compressed body counted as it is decoded).

The connection is then closed with the rest of the body unread. Outside a model call nothing changes (the embedding
model's download, a chroma server, the sign-in provider read as before). Every provider litellm reaches over httpx is
covered, whichever client or transport it builds: the openai SDK's (``openai/`` models: ``serve-model``, vLLM,
llama.cpp's server, OpenAI itself, the ``local/`` model) and litellm's own handlers (``hosted_vllm/``, ``ollama/``,
Anthropic, Gemini…), over httpx's transport or litellm's aiohttp one. The in-process ``offline/`` and ``scripted/``
providers send nothing over HTTP; their replies, like every reply, are capped where they are received
(``client.MAX_REPLY_CHARS``).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

#: The largest model response body read: a chat completion carries its reply (at most ``client.MAX_REPLY_CHARS``
#: = 32,000 characters; JSON-escaped non-ASCII text takes up to 12 bytes a character, ~380 KB) and a little JSON
#: around it. 1 MiB is ample for any reply a task may take and keeps one call's memory bounded.
MAX_RESPONSE_BYTES = 1 << 20

_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("model_response_limit", default=None)
_installed = False
_install_lock = threading.Lock()


class ResponseTooLarge(Exception):
    """A model endpoint's response body passed ``MAX_RESPONSE_BYTES``: refused, its rest unread."""

    def __init__(self, limit: int, declared: int | None = None):
        said = f"declared {declared:,} bytes" if declared is not None else "sent more"
        super().__init__(f"the endpoint's response was larger than the {limit:,}-byte limit ({said}): "
                         "refused unread; no reply any task asks for is that long")
        self.limit, self.declared = limit, declared


@contextlib.contextmanager
def limited(limit: int = MAX_RESPONSE_BYTES) -> Iterator[None]:
    """Within this block (this thread, or the tasks an async call starts from it) response bodies are limited to
    ``limit`` bytes."""
    install()
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def _declared(response: httpx.Response, limit: int) -> None:
    """Refuse a body whose ``Content-Length`` is over the limit, before reading any of it."""
    value = response.headers.get("content-length", "")
    if value.strip().isdigit() and int(value) > limit:
        raise ResponseTooLarge(limit, int(value))


def install() -> None:
    """Wrap ``httpx.Response.iter_bytes`` and ``aiter_bytes`` once per process with the scoped limit (a no-op for a
    response read outside ``limited``)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        import httpx  # here, not at import: a page that only reads the reply cache never loads it

        plain, aplain = httpx.Response.iter_bytes, httpx.Response.aiter_bytes

        def iter_bytes(self: httpx.Response, chunk_size: int | None = None) -> Iterator[bytes]:
            limit = _LIMIT.get()
            if limit is None:
                yield from plain(self, chunk_size)
                return
            _declared(self, limit)
            seen = 0
            for chunk in plain(self, chunk_size):
                seen += len(chunk)
                if seen > limit:
                    self.close()
                    raise ResponseTooLarge(limit)
                yield chunk

        async def aiter_bytes(self: httpx.Response, chunk_size: int | None = None) -> AsyncIterator[bytes]:
            limit = _LIMIT.get()
            if limit is None:
                async for chunk in aplain(self, chunk_size):
                    yield chunk
                return
            _declared(self, limit)
            seen = 0
            async for chunk in aplain(self, chunk_size):
                seen += len(chunk)
                if seen > limit:
                    await self.aclose()
                    raise ResponseTooLarge(limit)
                yield chunk

        httpx.Response.iter_bytes, httpx.Response.aiter_bytes = iter_bytes, aiter_bytes
        _installed = True
