"""The one owner of model calls (after DSPy's LM): litellm underneath, cache, retries, limits, call log.

Every method gets an ``LLMClient`` from its run context and calls ``complete``/``acomplete`` with the
rendered messages, a step name, the task name and the task's structured fields (``backend.llm.tasks``).
The client

* checks the fields carry no ground truth (``FORBIDDEN_FIELDS``),
* answers from the request cache when it can (``backend.llm.cache``; modes live/record/replay/off),
* otherwise calls ``litellm.completion`` with an explicit timeout, no provider-side retries, and its own
  bounded retries with exponential backoff and jitter (tenacity) on 429/5xx/timeouts/connection errors,
* bounds concurrency (a semaphore per client; async and threads alike),
* records every call, failed ones included, as an ``LLMCall``, with what it cost (``backend.llm.pricing``:
  litellm's completion cost; a cache hit costs $0 and records what it saved), with how the task's reader read its reply
  (``read_status``: exact / lenient / unreadable, a cache hit too) and whether it asked for the task's JSON schema
  (``structured``: ``LLMConfig.structured_output`` on a model that supports it, ``backend.llm.structured``),
* surfaces every failure as ``LLMError`` carrying the provider's message (API keys redacted) and, when the
  config names one, the endpoint (``[api_base URL]``; ``backend.llm.failures`` turns it into advice).

API keys come from the environment (litellm reads them) or are passed in (a key typed for an api_base); they
are never part of a cache key, an ``LLMCall``, a trace or a log line. Which key a call may carry is
``backend.llm.keys``: the server's keys go to their provider's own endpoint or an api_base the deployment allows,
any other api_base gets only a key typed for it (``LLMClient._key``, just before a call is sent).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import os
import sqlite3
import sys
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tenacity
from pydantic import BaseModel, Field

import backend  # noqa: F401  (LITELLM_LOCAL_MODEL_COST_MAP before litellm is imported)
from backend import deployment
from backend.errors import mask_secrets
from backend.limits import STOPPED_TEXT, Stopped
from backend.llm import cache as cache_mod
from backend.llm import http_limit
from backend.llm.cache import CachedReply, CallCache, request_key
from backend.llm.keys import PLACEHOLDER_KEY, SUBSTITUTED, KeyRefused, api_key_for
from backend.llm.pricing import is_free, reply_cost
from backend.llm.structured import response_format, supports_json_schema
from backend.llm.tasks import FORBIDDEN_FIELDS, TASKS, read_reply
from backend.llm.tokens import approx_tokens
from backend.llm.urls import BadURL, request_url, sendable
from backend.llm.urls import endpoint, endpoint_hash  # noqa: F401  (their old home: the one parser is urls)
from backend.paths import default_cache_dir
from backend.schema import LLMCall

OFFLINE_MODEL = "offline/reader"


#: Set once a call has needed litellm: ``backend.warmup`` then loads it before its other loads, which would only
#: compete with that import (the GIL) while the call, a first look's first result, waits for it.
LITELLM_WANTED = threading.Event()


def _litellm():
    """litellm with the project's providers registered, imported by the first call that needs it: it takes ~2 CPU-s,
    which a page that only shows results, or a run answered from the reply cache, never pays."""
    LITELLM_WANTED.set()
    import litellm

    from backend.llm import providers

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    providers.register()
    return litellm


class LLMConfig(BaseModel):
    model: str = OFFLINE_MODEL
    api_base: str | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = Field(60.0, gt=0)
    num_retries: int = Field(2, ge=0)
    backoff_s: float = Field(0.5, ge=0)      # first retry wait; doubles up to backoff_max_s, with jitter
    backoff_max_s: float = Field(8.0, ge=0)
    concurrency: int = Field(4, ge=1)
    cache_mode: str = "live"
    #: Send the task fields in the request body too (for ``python -m backend serve-model``, which runs
    #: the offline model behind HTTP: they cross-check its reading of the prompt). Off for every real provider.
    send_task_fields: bool = False
    #: Ask each task for its JSON schema where the model supports it (``backend.llm.structured``). Off by default:
    #: the papers' reply formats are what the methods were published with.
    structured_output: bool = False
    #: The local model's server (``local/<name>``, ``backend.llm.local``): context tokens per slot, slots, generation
    #: threads. A prompt longer than the context is cut by ``backend.llm.local.context.RULE``.
    local_ctx: int = Field(8192, ge=256)
    local_parallel: int = Field(2, ge=1)
    local_threads: int = Field(1, ge=1)

    @property
    def local(self) -> bool:
        """A ``local/<name>`` model: llama.cpp on this CPU, started on first use (``backend.llm.local``)."""
        return self.model.startswith("local/")

    @property
    def structured(self) -> bool:
        """Whether calls ask for their task's JSON schema: the setting is on and the model can honour it."""
        return self.structured_output and supports_json_schema(self.model, self.api_base)

    @property
    def identity(self) -> str:
        """The model as cache keys name it: two servers may serve the same name, so the endpoint is part of it,
        as a hash of its scheme, host, port and path (``endpoint_hash``; never the URL itself); the offline reader
        with a hash of its code (``reader_version``), so an upgraded reader never reads an older one's replies."""
        if self.model.startswith("offline/") and not self.api_base:  # the reader's code is its version
            from backend.llm.reader_version import reader_version

            return f"{self.model}#{reader_version()}"
        if self.local:  # its weights are its identity, whatever port serves them (a replay needs no server)
            from backend.llm.local import identity

            return identity(self.model)
        base = self.api_base or _environment_base(self.model)
        if not base:
            return self.model
        return f"{self.model}@{endpoint_hash(base)}"


def _environment_base(model: str) -> str | None:
    """The endpoint litellm takes from the environment when no api_base is given (an ``openai/`` model pointed at a
    server by ``OPENAI_API_BASE`` / ``OPENAI_BASE_URL``): it decides where the reply came from just as well."""
    if not model.startswith("openai/"):
        return None
    return os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL") or None


class LLMError(RuntimeError):
    """A model call failed. ``kind``: timeout, rate_limit, server, connection, auth, bad_request,
    replay_miss, truth_leak, too_large (a response body past ``http_limit.MAX_RESPONSE_BYTES``), other. ``call`` is
    the recorded failed call (if any)."""

    def __init__(self, kind: str, message: str, model: str, call: LLMCall | None = None):
        super().__init__(f"{model}: {kind}: {message}")
        self.kind, self.message, self.model, self.call = kind, message, model, call


RETRYABLE_KINDS = frozenset({"timeout", "rate_limit", "server", "connection"})
#: A local server is this machine's CPU: a timeout or a 5xx retried only doubles its load. Only a lost connection (the
#: server stopped: the next attempt starts it again) is retried.
LOCAL_RETRYABLE_KINDS = frozenset({"connection"})
#: The local model's speed before any was measured (a busy 2-core machine, dependencies.md §9): timeouts scale with
#: it, so a long reply on a slow machine is not cut short.
SLOW_PROMPT_PER_S, SLOW_GENERATED_PER_S = 20.0, 2.0


def _transport_failure(exc: BaseException) -> str | None:
    """Return "timeout" or "connection" if a transport failure caused ``exc`` (walks the chain), else None."""
    import openai

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, openai.APITimeoutError):  # a subclass of APIConnectionError: test it first
            return "timeout"
        if isinstance(exc, (openai.APIConnectionError, ConnectionError)):
            return "connection"
        exc = exc.__cause__ or exc.__context__
    return None


def _too_large(exc: BaseException | None) -> http_limit.ResponseTooLarge | None:
    """The ``ResponseTooLarge`` behind ``exc`` (walks the chain: the openai SDK and litellm wrap it as a "Connection
    error."), else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, http_limit.ResponseTooLarge):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def classify(exc: BaseException) -> str:
    from backend.llm.local.context import PromptTooLong
    from backend.llm.local.server import LocalModelError
    from backend.llm.local.weights import WeightsError

    if isinstance(exc, (LocalModelError, WeightsError)):
        return "unavailable"
    if isinstance(exc, BadURL):  # an api_base refused by backend.llm.urls: nothing was sent
        return "bad_request"
    if isinstance(exc, PromptTooLong):
        return "context"
    if _too_large(exc) is not None:  # a body past MAX_RESPONSE_BYTES: the same request would only send it again
        return "too_large"
    text = str(exc).lower()
    if "missing credentials" in text or "api key" in text and "missing" in text:
        return "auth"  # litellm reports a missing OpenAI key as a 500; retrying cannot help
    if "litellm" not in sys.modules:  # no litellm exception can exist yet: classifying never imports it
        return "timeout" if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) else "other"
    e = _litellm().exceptions
    if isinstance(exc, e.InternalServerError) and (transport := _transport_failure(exc.__context__)):
        return transport  # litellm's openai provider reports an unreachable server as a 500 "Connection error."
    for types, kind in ((e.Timeout, "timeout"), (e.RateLimitError, "rate_limit"),
                        ((e.AuthenticationError, e.PermissionDeniedError), "auth"),
                        ((e.BadRequestError, e.NotFoundError, e.UnsupportedParamsError), "bad_request"),
                        ((e.InternalServerError, e.ServiceUnavailableError, e.BadGatewayError), "server"),
                        (e.APIConnectionError, "connection")):
        if isinstance(exc, types):
            return kind
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return "timeout"
    return "other"


def _secrets(explicit: str | None) -> list[str]:
    """Every key we might hold: the one passed in and the environment's ``*_API_KEY``/``*_TOKEN`` values."""
    found = [v for k, v in os.environ.items() if k.upper().endswith(("_API_KEY", "_TOKEN")) and len(v) >= 8]
    return ([explicit] if explicit else []) + found


def redact(text: str, secret: str | None = None) -> str:
    """The provider's message, without any key and without litellm's traceback and bug-report link."""
    for value in _secrets(secret):
        text = text.replace(value, "***")
    text = text.split("\nTraceback (most recent call last)")[0]
    text = text.split("\nThis looks like a bug in LiteLLM")[0].strip()
    text = mask_secrets(text)  # an address it repeats keeps no password or token parameter
    return text if len(text) <= 800 else text[:800] + " …"


@dataclass
class _Request:
    base: dict[str, Any]      # what the call record needs: key, step, task, messages, parents, fields, start
    kwargs: dict[str, Any]    # what litellm gets
    attempts: int = 0
    queued_s: float | None = None  # waited for a local server slot


class CallLog:
    """Thread-safe list of every call of a session (the Model calls page reads it)."""

    def __init__(self) -> None:
        self._calls: list[LLMCall] = []
        self._lock = threading.Lock()

    def add(self, call: LLMCall) -> None:
        with self._lock:
            self._calls.append(call)

    def all(self) -> list[LLMCall]:
        with self._lock:
            return list(self._calls)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()


def default_cache(cache_dir: str | Path | None = None) -> CallCache:
    """The request cache in ``cache_dir`` (default: the per-user cache folder)."""
    return CallCache(Path(cache_dir or default_cache_dir()) / "llm_cache.sqlite")


class LLMClient:
    def __init__(self, config: LLMConfig | None = None, *, cache: CallCache | None = None,
                 api_key: str | None = None, log: CallLog | None = None, method: str | None = None,
                 dataset: str | None = None, question_id: str | None = None, stop: threading.Event | None = None):
        self.config = config or LLMConfig()
        #: set once the run's owner is gone (``backend.limits``): no call is sent after it, those in flight finish
        self.stop = stop
        if self.config.cache_mode not in cache_mod.CACHE_MODES:
            raise ValueError(f"cache_mode must be one of {cache_mod.CACHE_MODES}, got {self.config.cache_mode!r}")
        if self.config.cache_mode != "off" and cache is None:
            raise ValueError("a CallCache is needed unless cache_mode='off'")
        self.cache = cache
        self.method = method
        self.dataset, self.question_id = dataset, question_id  # recorded on every call (the Model calls page)
        self._api_key = api_key
        self._log = log
        self._calls: list[LLMCall] = []
        self._ids: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread_slots = threading.BoundedSemaphore(self.config.concurrency)
        self._loop_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # loop -> Semaphore

    def for_method(self, method: str, *, dataset: str | None = None, question_id: str | None = None) -> LLMClient:
        """A client for one method run: same config, cache, key and session log; its own call list. Its calls
        record the dataset and question they served (no question: dataset-level work such as RA-RAG's stage 1)."""
        return LLMClient(self.config, cache=self.cache, api_key=self._api_key, log=self._log, method=method,
                         dataset=dataset, question_id=question_id, stop=self.stop)

    @property
    def identity(self) -> str:
        """The model as this client's cache keys name it: ``LLMConfig.identity`` and, for calls that carry a typed key
        (``api_key``: the sidebar's key for an api_base, ``$CONFLICTLENS_API_KEY``), a tag of that key's holder
        (``backend.llm.holder``): a reply someone paid for with their key is never served to a caller without it."""
        typed = (self._api_key or "").strip()
        if not typed or self.config.local:  # a local model's calls carry no key of the caller's
            return self.config.identity
        from backend.llm.holder import tag

        folder = self.cache.path.parent if self.cache is not None else default_cache_dir()
        return f"{self.config.identity}~key:{tag(typed, folder)}"

    @property
    def calls(self) -> list[LLMCall]:
        with self._lock:
            return list(self._calls)

    def first_run_s(self, calls: Sequence[LLMCall], wall_s: float) -> float | None:
        """The wall time of the run that made these replies, for a run that read any of them from the cache (its
        own wall time is then mostly a cache read); None when not recorded. A run that made every reply itself is
        recorded here for later ones, keyed by its method and its requests (the call ids carry the request keys,
        so another model, endpoint or prompt is another run)."""
        if not calls or self.cache is None or any(c.error for c in calls):
            return None
        key = hashlib.sha256("\n".join([self.method or ""] + sorted(c.id for c in calls)).encode()).hexdigest()
        try:  # a timing is a nicety: a locked or full cache must not cost the method its result
            if any(c.cache_hit for c in calls):
                return self.cache.get_run(key) if self.config.cache_mode in ("live", "replay") else None
            if self.config.cache_mode in ("live", "record"):
                self.cache.put_run(key, self.config.model, wall_s)
        except sqlite3.Error:
            return None
        return None

    # -- the request ------------------------------------------------------------------------------

    def _fields(self, task: str, question: str, fields: dict[str, Any] | None) -> dict[str, Any]:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
        fields = dict(fields or {})
        leaked = FORBIDDEN_FIELDS & set(fields)
        if leaked:
            raise LLMError("truth_leak", f"ground-truth fields {sorted(leaked)} may not reach a model",
                           self.config.model)
        return {"task": task, "question": question, **fields}

    def _kwargs(self, messages: list[dict[str, str]], fields: dict[str, Any], max_tokens: int,
                fmt: dict[str, Any] | None = None) -> dict[str, Any]:
        cfg = self.config
        kwargs: dict[str, Any] = {
            "model": cfg.model, "messages": messages, "temperature": cfg.temperature, "max_tokens": max_tokens,
            "timeout": cfg.timeout_s, "num_retries": 0, "max_retries": 0, "metadata": fields,
        }
        if cfg.api_base and not cfg.local:  # the canonical URL, the one hashed and checked (backend.llm.urls)
            kwargs["api_base"] = request_url(cfg.api_base)  # its api_key is decided by ``_key``, when the call is sent
        if cfg.send_task_fields:
            kwargs["extra_body"] = {"conflictlens_task": fields}
        if fmt is not None:
            kwargs["response_format"] = fmt
        return kwargs

    def _key(self) -> str | None:
        """The ``api_key`` this client's calls carry (``backend.llm.keys.api_key_for``; None: litellm reads the
        server's key from the environment). Decided per call, just before it is sent (an admin's edit of the settings
        applies at once; a cache hit never imports litellm); a refusal is an "auth" ``LLMError``, sent nowhere."""
        cfg = self.config
        if deployment.current().allows_keys_to(cfg.api_base):
            return api_key_for(None, self._api_key, keys_allowed=True)
        litellm = _litellm()
        sent = (self._api_key or "").strip() or PLACEHOLDER_KEY
        try:
            _, provider, dynamic, _ = litellm.get_llm_provider(cfg.model, api_base=request_url(cfg.api_base),
                                                               api_key=sent)
        except Exception:  # noqa: BLE001 - litellm fails the call the same way, before sending anything
            provider = dynamic = None
        in_process = provider in {p.get("provider") for p in litellm.custom_provider_map or []}
        try:
            key = api_key_for(provider, self._api_key, keys_allowed=False, in_process=in_process)
        except KeyRefused as err:
            raise LLMError("auth", str(err), cfg.model) from None
        if key is not None and dynamic is not None and dynamic != key:  # litellm would swap in a key of its own
            raise LLMError("auth", SUBSTITUTED, cfg.model)
        return key

    def _sent(self, req: _Request) -> dict[str, Any]:
        """What litellm gets for ``req``: its arguments and the key it may carry (``_key``)."""
        try:
            key = self._key()
        except LLMError as err:
            raise self._fail(err, req) from err
        return req.kwargs if key is None else {**req.kwargs, "api_key": key}

    def _retrying(self, cls):
        cfg = self.config
        if cfg.local:  # litellm reports a server gone mid-request as a 500 "Connection error.": that is a lost one too
            def retryable(e):
                kind = classify(e)
                return kind in LOCAL_RETRYABLE_KINDS or ("connection error" in str(e).lower() and kind != "too_large")
        else:
            def retryable(e):
                return classify(e) in RETRYABLE_KINDS
        return cls(stop=tenacity.stop_after_attempt(cfg.num_retries + 1),
                   wait=tenacity.wait_exponential_jitter(initial=cfg.backoff_s, max=cfg.backoff_max_s,
                                                         jitter=cfg.backoff_s),
                   retry=tenacity.retry_if_exception(retryable), reraise=True)

    def _reply(self, resp: Any) -> CachedReply:
        from backend.llm.local.runaway import repetition

        choice = resp.choices[0]
        text = choice.message.content or ""
        usage = getattr(resp, "usage", None)
        prompt = getattr(usage, "prompt_tokens", 0) or 0
        completion = getattr(usage, "completion_tokens", 0) or 0
        extra: dict[str, Any] = {}
        if getattr(choice, "finish_reason", None):
            extra["finish_reason"] = choice.finish_reason
        timings = getattr(resp, "timings", None)  # llama.cpp's own account of the reply
        if isinstance(timings, dict):
            extra["server_s"] = round(((timings.get("prompt_ms") or 0) + (timings.get("predicted_ms") or 0)) / 1000, 4)
            extra["cached_tokens"] = int(timings.get("cache_n") or 0)
            if self.config.local:
                from backend.llm.local import throughput

                throughput.record(self.config.identity.rpartition("#")[2], timings)
        if len(text) > MAX_REPLY_CHARS:  # longer than max_tokens allows any task: the endpoint ignored it
            text = _over_limit(text, extra)
        elif extra.get("finish_reason") == "length":
            if unit := repetition(text):
                # it looped until max_tokens cut it: not an answer. The method gets no reply (its reader's default)
                extra["cut_off"], extra["cut_why"] = text[:2000], f"while repeating {unit!r}"
                text = ""
            elif self.config.structured and not _json_object(text):
                # cut off inside the JSON object it was asked for: a fragment ("{", half a value) is no answer either
                extra["cut_off"], extra["cut_why"] = text[:2000], "inside the JSON object it was asked for"
                text = ""
        return CachedReply(text, prompt, completion or approx_tokens(text), reply_cost(resp, self.config.model),
                           extra=extra or None)

    def _new_id(self, step: str, key: str) -> str:
        base = f"{self.method + ':' if self.method else ''}{step}:{key[:8]}"
        with self._lock:
            n = self._ids.get(base, 0) + 1
            self._ids[base] = n
        return base if n == 1 else f"{base}#{n}"

    def _record(self, call: LLMCall) -> LLMCall:
        with self._lock:
            self._calls.append(call)
        if self._log is not None:
            self._log.add(call)
        return call

    def _begin(self, messages, task, step, question, fields, parents, max_tokens) -> LLMCall | _Request:
        """Validate, key and look up a request: a recorded cache hit, or what to send to the provider. Raises
        ``backend.limits.Stopped`` once the run's owner is gone: nothing more is sent, nor recorded."""
        self._check_stop()
        fields = self._fields(task, question, fields)
        max_tokens = max_tokens or self.config.max_tokens
        if self.config.local and TASKS[task].reply_tokens:  # a small model that loops stops at its format's size
            max_tokens = min(max_tokens, TASKS[task].reply_tokens)
        start, started_at = time.perf_counter(), time.time()
        fmt = response_format(task) if self.config.structured else None  # the task's JSON schema, when asked for
        cut = None
        try:
            if self.config.local:  # a prompt longer than the context is cut by the stated rule before it is keyed
                messages, cut = self._fit_context(messages, fields, max_tokens)
            # keyed by model *and* endpoint (and a typed key's holder): one server's replies never answer for another
            # serving the same name, nor a reply someone paid for with their key a caller without it
            key = request_key(self.identity, messages, self.config.temperature, max_tokens, fields, fmt)
        except Exception as exc:  # noqa: BLE001 - the local model cannot take it, or a refused api_base
            kind = classify(exc)
            if kind not in ("unavailable", "context") and not isinstance(exc, BadURL):
                raise
            req = _Request(dict(key=hashlib.sha256(repr(messages).encode()).hexdigest(), step=step, task=task,
                                messages=messages, parents=parents, fields=fields, structured=fmt is not None,
                                start=start, started_at=started_at, prompt_cut=None), {})
            raise self._fail(LLMError(kind, str(exc), self.config.model), req) from None
        req = _Request(dict(key=key, step=step, task=task, messages=messages, parents=parents, fields=fields,
                            structured=fmt is not None, start=start, started_at=started_at,
                            prompt_cut=cut.model_dump() if cut else None),
                       self._kwargs(messages, fields, max_tokens, fmt))
        try:
            hit = self._from_cache(key)
        except LLMError as err:
            raise self._fail(err, req) from err
        if hit is not None:
            return self._record(self._make_call(reply=hit, hit=True, attempts=0, **req.base))
        return req

    def _check_stop(self) -> None:
        """Raise ``Stopped`` once the run's owner is gone: checked before a request is keyed and again before each
        attempt is sent (a call queued for a slot when the owner left is never sent)."""
        if self.stop is not None and self.stop.is_set():
            raise Stopped(STOPPED_TEXT)

    # -- the local model ---------------------------------------------------------------------------

    def _local_server(self):
        from backend.llm.local import local_name
        from backend.llm.local.server import ensure

        cfg = self.config
        return ensure(local_name(cfg.model), parallel=cfg.local_parallel, ctx=cfg.local_ctx, threads=cfg.local_threads)

    def _local_gate(self) -> threading.BoundedSemaphore:
        from backend.llm.local import local_name
        from backend.llm.local.server import slots

        return slots(local_name(self.config.model), self.config.local_parallel)

    def _fit_context(self, messages, fields, max_tokens):
        """``backend.llm.local.context.fit`` with the server's own template and tokenizer (asked only for a prompt
        long enough to need it)."""
        from backend.llm.local.context import fit

        def count(msgs: list[dict[str, str]]) -> int:
            import httpx

            url = self._local_server().url
            prompt = httpx.post(f"{url}/apply-template", json={"messages": msgs}, timeout=60).json()["prompt"]
            return len(httpx.post(f"{url}/tokenize", json={"content": prompt}, timeout=60).json()["tokens"])

        return fit(messages, fields, context_tokens=self.config.local_ctx, reply_tokens=max_tokens, count=count)

    def _local_sent(self, req: _Request) -> dict[str, Any]:
        """What litellm gets for a local call: the server (started, or started again, here) and a timeout that
        scales with the tokens asked for at the speed measured on this machine."""
        from backend.llm.local import route, throughput

        server = self._local_server()
        kwargs = {**req.kwargs, **route(server)}
        measured = throughput.measured(server.digest)
        prompt_per_s, generated_per_s = ((measured.prompt_per_s, measured.generated_per_s) if measured
                                         else (SLOW_PROMPT_PER_S, SLOW_GENERATED_PER_S))
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in req.kwargs["messages"]) / 3
        expected = prompt_tokens / prompt_per_s + req.kwargs["max_tokens"] / generated_per_s
        kwargs["timeout"] = max(self.config.timeout_s, 3 * expected + 10)
        return kwargs

    def _from_cache(self, key: str) -> CachedReply | None:
        mode = self.config.cache_mode
        if mode in ("live", "replay") and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None and len(hit.response) > MAX_REPLY_CHARS:  # cached before replies were capped
                extra = dict(hit.extra or {})
                hit = dataclasses.replace(hit, response=_over_limit(hit.response, extra), extra=extra)
            if hit is not None:
                return hit
            if mode == "replay":
                raise LLMError("replay_miss", f"no cached reply for request {key[:12]} (cache {self.cache.path}); "
                               "run once in live or record mode first", self.config.model)
        return None

    def _done(self, req: _Request, reply: CachedReply) -> LLMCall:
        call = self._make_call(reply=reply, hit=False, attempts=req.attempts, queued_s=req.queued_s, **req.base)
        if self.config.cache_mode in ("live", "record") and self.cache is not None:
            # with the call's latency: a later hit shows how long the reply took to make, not its cache read
            self.cache.put(req.base["key"], self.config.model, dataclasses.replace(reply, latency_s=call.latency_s))
        return self._record(call)

    def _make_call(self, *, key, step, task, messages, parents, fields, structured, reply=None, error=None, start,
                   started_at, hit, attempts, prompt_cut=None, queued_s=None):
        # how the task's reader reads the reply, recorded once per call (a cache hit too): the trace then shows every
        # reply the method could not read, whatever the method made of it
        read = read_reply(task, reply.response, fields, structured) if reply else None
        extra = (reply.extra if reply else None) or {}
        read_status, read_note = (read.status, read.note) if read else (None, None)
        if extra.get("cut_off") is not None:  # it looped until max_tokens: read as no reply, whatever the reader says
            read_status = "unreadable"
            where = extra.get("cut_at", "max_tokens")  # or the reply limit (``_over_limit``)
            read_note = (f"cut off at {where} {extra.get('cut_why', '')}: read as no reply"
                         + (f"; {read.note}" if read and read.note else ""))
        return LLMCall(id=self._new_id(step, key), step=step, task=task, method=self.method, dataset=self.dataset,
                       question_id=self.question_id,
                       model=self.config.model, messages=messages,
                       response=reply.response if reply else None, error=error,
                       prompt_tokens=reply.prompt_tokens if reply else 0,
                       completion_tokens=reply.completion_tokens if reply else 0,
                       latency_s=round(time.perf_counter() - start, 6), cache_hit=hit,
                       parents=list(parents), attempts=attempts, started_at=started_at, ended_at=time.time(),
                       read_status=read_status, read_note=read_note, structured=structured,
                       finish_reason=extra.get("finish_reason"), cut_off=extra.get("cut_off"), prompt_cut=prompt_cut,
                       server_s=extra.get("server_s"), cached_tokens=extra.get("cached_tokens"), queued_s=queued_s,
                       **self._cost(reply, hit))

    def _cost(self, reply: CachedReply | None, hit: bool) -> dict[str, float | None]:
        """A cache hit costs nothing and saved what the call cost when it was made (and carries how long it took
        then); a failed call is free only on the free models (the provider reported no usage to price)."""
        if hit:
            return {"cost_usd": 0.0, "saved_usd": reply.cost_usd if reply else None,
                    "recorded_latency_s": reply.latency_s if reply else None}
        if reply is None:
            return {"cost_usd": 0.0 if is_free(self.config.model) else None}
        return {"cost_usd": reply.cost_usd}

    def _fail(self, exc: BaseException, req: _Request) -> LLMError:
        kind = exc.kind if isinstance(exc, LLMError) else classify(exc)
        said = exc.message if isinstance(exc, LLMError) else str(_too_large(exc) or exc)  # not "Connection error."
        message = redact(said, self._api_key)
        if self.config.api_base and kind not in ("replay_miss", "truth_leak") and sendable(self.config.api_base):
            message += f" [api_base {endpoint(self.config.api_base)}]"  # so the failure names where it went
        call = self._record(self._make_call(error=f"{kind}: {message}", hit=False, attempts=req.attempts,
                                            **req.base))
        return LLMError(kind, message, self.config.model, call)

    # -- public API -------------------------------------------------------------------------------

    def complete(self, messages: list[dict[str, str]], *, task: str, step: str, question: str,
                 fields: dict[str, Any] | None = None, parents: Sequence[str] = (),
                 max_tokens: int | None = None) -> LLMCall:
        """One call (blocking). Returns the recorded call; raises ``LLMError`` (the call is still recorded)."""
        req = self._begin(messages, task, step, question, fields, parents, max_tokens)
        if isinstance(req, LLMCall):
            return req
        local = self.config.local
        kwargs = None if local else self._sent(req)

        def attempt():
            self._check_stop()
            req.attempts += 1
            with http_limit.limited():  # a body past MAX_RESPONSE_BYTES is refused unread
                return _litellm().completion(**(self._local_sent(req) if local else kwargs))

        try:
            waited = time.perf_counter()
            with self._local_gate() if local else self._thread_slots:
                req.queued_s = round(time.perf_counter() - waited, 4) if local else None
                reply = self._reply(self._retrying(tenacity.Retrying)(attempt))
        except Stopped:
            raise  # not a failed call: never sent (or, stopped between retries, not tried again)
        except Exception as exc:  # noqa: BLE001 - every failure becomes one LLMError
            raise self._fail(exc, req) from exc
        return self._done(req, reply)

    async def acomplete(self, messages: list[dict[str, str]], *, task: str, step: str, question: str,
                        fields: dict[str, Any] | None = None, parents: Sequence[str] = (),
                        max_tokens: int | None = None) -> LLMCall:
        """Like ``complete`` but async; at most ``config.concurrency`` calls run at once per event loop."""
        req = self._begin(messages, task, step, question, fields, parents, max_tokens)
        if isinstance(req, LLMCall):
            return req
        local = self.config.local
        kwargs = None if local else self._sent(req)

        async def attempt():
            self._check_stop()
            req.attempts += 1
            sent = await asyncio.to_thread(self._local_sent, req) if local else kwargs  # may start the server
            timeout = sent["timeout"]
            # litellm's timeout covers the HTTP exchange only, not its hop through the loop's executor before it:
            # bound the whole attempt, so no attempt outlives the timeout whatever it waits for
            try:
                with http_limit.limited():  # the task wait_for starts copies the limit with the context
                    return await asyncio.wait_for(_litellm().acompletion(**sent), timeout)
            except TimeoutError:
                raise TimeoutError(f"no reply within the call's timeout of {timeout:g} s") from None

        try:
            async with self._local_slot(req) if local else self._slots():
                reply = self._reply(await self._retrying(tenacity.AsyncRetrying)(attempt))
        except asyncio.CancelledError:
            if req.attempts:  # requests went out: the call is recorded, as cancelled
                self._fail(asyncio.CancelledError("cancelled: the caller stopped waiting for this call"), req)
            raise
        except Stopped:
            raise  # as in ``complete``
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, req) from exc
        return self._done(req, reply)

    @contextlib.asynccontextmanager
    async def _local_slot(self, req: _Request):
        """A local server slot, shared by every client of this process (threads and event loops alike): polled, so a
        cancelled wait never holds one."""
        gate, waited = self._local_gate(), time.perf_counter()
        while not gate.acquire(blocking=False):
            await asyncio.sleep(0.005)
        req.queued_s = round(time.perf_counter() - waited, 4)
        try:
            yield
        finally:
            gate.release()

    def _slots(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        with self._lock:
            return self._loop_slots.setdefault(loop, asyncio.Semaphore(self.config.concurrency))

    def test_connection(self) -> tuple[bool, str, float]:
        """Send one tiny uncached request; (ok, what happened, seconds). What the endpoint said is cut to
        ``TEST_TEXT_CHARS``: a page shows it, and the endpoint may be any URL a user typed."""
        probe = LLMClient(self.config.model_copy(update={"cache_mode": "off", "num_retries": 0}),
                          api_key=self._api_key)
        start = time.perf_counter()
        try:
            call = probe.complete([{"role": "user", "content": "Reply with the single word: ready"}],
                                  task="ping", step="test_connection", question="connection test",
                                  max_tokens=8)
        except LLMError as err:
            said, found, base = err.message.rpartition(" [api_base ")  # keep where it went: failures reads it
            said, base = (said, found + base) if found else (err.message, "")
            return False, f"{err.kind}: {_clip(said, TEST_TEXT_CHARS)}{base}", time.perf_counter() - start
        return True, f"replied {_clip(call.response or '', TEST_TEXT_CHARS)!r}", time.perf_counter() - start


#: The longest reply any task receives: longer ones are cut off where they are received (``_over_limit``). The largest
#: reply a task legitimately needs is ``max_tokens`` = 1,024 tokens (ASTUTE's, the largest of any method; the
#: per-task ``TaskSpec.reply_tokens`` are at most 512), ~6 characters a token at most in practice: ~6,000 characters.
#: 32,000 is five times that, so only an endpoint that ignored ``max_tokens`` (or a server looping past it) is cut;
#: the readers and scorers then never see more, whatever an endpoint sends (issue 36: a 600 KB reply took RC-RAG's
#: ROUGE-L to 17.9 GB).
MAX_REPLY_CHARS = 32_000


def _over_limit(text: str, extra: dict[str, Any]) -> str:
    """A reply past ``MAX_REPLY_CHARS``, recorded as a runaway one is (``LLMCall.cut_off``: its first 2,000
    characters; the read note says where and why) and handed to the method as no reply (its reader's default): a
    fragment of a reply that ignored its length limit is no answer in the task's format."""
    extra["cut_off"] = text[:2000]
    extra["cut_at"] = f"the reply limit of {MAX_REPLY_CHARS:,} characters"
    extra["cut_why"] = f"({len(text):,} characters received)"
    return ""


def _json_object(text: str) -> bool:
    """Is ``text`` (Markdown fences around it allowed) one whole JSON value?"""
    import json

    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


#: How much of an endpoint's words ``test_connection`` reports.
TEST_TEXT_CHARS = 300


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"

