"""``python -m backend serve-model``: an OpenAI-compatible chat-completions server backed by the offline model.

It exists to exercise the real HTTP path through litellm (``model="openai/reader"``,
``api_base="http://127.0.0.1:PORT/v1"``) and to benchmark concurrency, so it can inject faults:

* ``latency_ms``: every chat request sleeps this long first (``asyncio.sleep``: requests overlap);
* ``fail_first``: the first N chat requests fail, alternating HTTP 429 and 500 (429 first);
* ``fail_rate``: after those, this fraction fails with 429 or 500;
* ``hang_rate``: this fraction sleeps ``hang_s`` (default an hour; it ends early when the client
  disconnects, so timeouts and shutdown stay clean);
* ``garbage_rate``: this fraction answers with garbage text (still a valid chat.completion);
* ``reply_text``: every other reply is this text instead of the offline model's (a model that says exactly this:
  hostile markup for the browser tests, an empty reply, a format no parser expects).

Fault decisions are deterministic: request number ``n`` (0-based, in arrival order) draws from
``random.Random(f"{seed}:{n}")``, so the same seed and request sequence give the same faults whatever
the timing. The offline model runs in a worker thread, so concurrent requests overlap.

Endpoints: ``POST /v1/chat/completions`` (also ``/chat/completions``), ``GET /v1/models`` (also
``/models``), ``GET /health``. The offline model answers from the prompt. A request body may carry
``conflictlens_task`` (the task fields the client sends with ``LLMConfig.send_task_fields=True``): they cross-check the
prompt's reading and give the model its memory, as in-process. Without them its memory is ``knowledge``: the
``internal_knowledge`` of these datasets' questions (None: the bundled datasets'; ``()``: none), recalled by the
question as the prompt states it (``backend.llm.offline.knowledge``). Request headers (and so API keys) are never read
or logged.

Structured output: a request whose ``response_format`` is ``{"type": "json_schema", "json_schema": {"name": <task>,
...}}`` (``LLMConfig.structured_output``; ``backend.llm.structured`` names the schema after its task) gets the offline
model's reply as that task's JSON object: read with the task's own reader and dumped to the schema's keys
(``structured_reply``). A schema naming no task is a 400 (this server cannot write free-form JSON); injected garbage and
``reply_text`` stay as they are (a misbehaving server ignores the format).

Every chat request is also recorded when it ends (``app.state.requests``; with ``request_log``, one JSON line per
request appended to that file as it ends): its number, when it arrived and ended (``time.time()``), the fault it
drew, the HTTP status sent (499: the client went away first) and a sha256 of its messages (never the text, never a
header). The fault suite reads it back to check, per request, that retries are bounded and back off and that a
hung request is abandoned at the client's timeout.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import ipaddress
import json
import random
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from backend.llm.tokens import approx_tokens
from backend.paths import open_private

DEFAULT_MODEL_NAME = "reader"
DEFAULT_HANG_S = 3600.0

_GARBAGE_WORDS = ("lorem", "\u00bf\u00bf", "0x7f3a", "NaN", "}}{", "null", "\u2603", "Answer:", "::",
                  "\ufffd\ufffd", "qwxz", "<ANSWER>", "[[", "]]", "$$", "\\n", "unknown", "42", "%%",
                  "zzt", "\u00e9\u00e8", "----", "Probability:", "??")


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8000
    model_name: str = DEFAULT_MODEL_NAME
    latency_ms: float = 0.0
    fail_rate: float = 0.0
    garbage_rate: float = 0.0
    hang_rate: float = 0.0
    fail_first: int = 0
    seed: int = 0
    hang_s: float = DEFAULT_HANG_S
    reply_text: str | None = None
    #: datasets whose questions' ``internal_knowledge`` the model knows when a request sends no task fields
    #: (None: the bundled datasets'; (): nothing)
    knowledge: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in ("fail_rate", "garbage_rate", "hang_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {value}")
        for name in ("latency_ms", "fail_first", "hang_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {self.port}")


@dataclass(frozen=True)
class Fault:
    kind: str            # "ok", "fail", "hang", "garbage"
    status: int = 200    # for "fail": 429 or 500


def decide(settings: ServerSettings, n: int) -> Fault:
    """The fault for chat request number ``n`` (0-based). Pure: depends on the settings and ``n`` only."""
    if n < settings.fail_first:
        return Fault("fail", 429 if n % 2 == 0 else 500)
    rng = random.Random(f"{settings.seed}:{n}")
    u_fail, u_status, u_hang, u_garbage = rng.random(), rng.random(), rng.random(), rng.random()
    if u_fail < settings.fail_rate:
        return Fault("fail", 429 if u_status < 0.5 else 500)
    if u_hang < settings.hang_rate:
        return Fault("hang")
    if u_garbage < settings.garbage_rate:
        return Fault("garbage")
    return Fault("ok")


def garbage_text(seed: int, n: int) -> str:
    """Deterministic junk: random-looking words, symbols and odd characters over a few lines."""
    rng = random.Random(f"garbage:{seed}:{n}")
    lines = []
    for _ in range(rng.randint(1, 3)):
        words = []
        for _ in range(rng.randint(3, 12)):
            if rng.random() < 0.5:
                words.append(rng.choice(_GARBAGE_WORDS))
            else:
                words.append("".join(chr(rng.randint(33, 126)) for _ in range(rng.randint(1, 8))))
        lines.append(" ".join(words))
    return "\n".join(lines)


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of an OpenAI content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def _error(status: int, message: str, type_: str, code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": type_, "param": None, "code": code}},
                        status_code=status)


def _fault_error(status: int) -> JSONResponse:
    if status == 429:
        return _error(429, "Rate limit reached (injected by serve-model --fail-rate/--fail-first).",
                      "rate_limit_error", "rate_limit_exceeded")
    return _error(500, "The server had an error while processing your request (injected by serve-model "
                       "--fail-rate/--fail-first).", "server_error", "internal_error")


async def _sleep_unless_disconnected(request: Request, seconds: float) -> bool:
    """Sleep ``seconds``; return early (False) if the client goes away. The body must be read already."""
    if seconds <= 0:
        return True

    async def disconnected() -> None:
        while True:
            message = await request.receive()
            if message.get("type") == "http.disconnect":
                return

    sleeper = asyncio.ensure_future(asyncio.sleep(seconds))
    watcher = asyncio.ensure_future(disconnected())
    try:
        done, _ = await asyncio.wait({sleeper, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (sleeper, watcher):
            task.cancel()
    return sleeper in done


def _validate(body: Any) -> tuple[list[dict[str, Any]], dict[str, Any]] | JSONResponse:
    from backend.llm.offline import HANDLERS
    from backend.llm.tasks import FORBIDDEN_FIELDS

    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object", "invalid_request_error")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return _error(400, "'messages' must be a non-empty list of message objects", "invalid_request_error",
                      "invalid_messages")
    msgs = [{"role": str(m.get("role", "user")), "content": _text(m.get("content"))} for m in messages]
    fields = body.get("conflictlens_task")
    if fields is None:
        return msgs, {}
    if not isinstance(fields, dict):
        return _error(400, "'conflictlens_task' must be an object", "invalid_request_error")
    task = fields.get("task")
    if task not in HANDLERS:  # the tasks the offline model behind this server answers
        return _error(400, f"unknown conflictlens_task.task {task!r}", "invalid_request_error")
    if not isinstance(fields.get("question"), str):
        return _error(400, "conflictlens_task.question must be a string", "invalid_request_error")
    leaked = FORBIDDEN_FIELDS & set(fields)
    if leaked:
        return _error(400, f"ground-truth fields {sorted(leaked)} may not reach a model", "invalid_request_error")
    return msgs, fields


def _schema_task(body: dict[str, Any]) -> str | None | JSONResponse:
    """The task whose JSON schema the request's ``response_format`` asks for (``backend.llm.structured`` names the
    schema after its task), None for a plain-text request, a 400 for a format this server cannot answer in."""
    fmt = body.get("response_format")
    if fmt is None or (isinstance(fmt, dict) and fmt.get("type") == "text"):
        return None
    schema = fmt.get("json_schema") if isinstance(fmt, dict) and fmt.get("type") == "json_schema" else None
    if not isinstance(schema, dict):
        return _error(400, "response_format: this server answers plain text or {'type': 'json_schema', "
                           "'json_schema': {'name': <a task with a schema>, ...}}", "invalid_request_error",
                      "invalid_response_format")
    if _task_with_schema(schema.get("name")) is None:
        return _error(400, f"response_format.json_schema.name {schema.get('name')!r} names no task with a schema",
                      "invalid_request_error", "invalid_response_format")
    return schema["name"]


def _task_with_schema(name: Any):
    # importing the methods registers their tasks (readers and schemas); backend.llm imports no method otherwise
    from backend.llm.tasks import TASKS
    from backend.methods import SPECS  # noqa: F401

    spec = TASKS.get(name) if isinstance(name, str) else None
    return spec if spec is not None and spec.schema is not None and spec.as_schema is not None else None


def structured_reply(task: str, text: str, fields: dict[str, Any]) -> str:
    """The offline model's text reply as ``task``'s JSON object: read with the task's own reader (as the method reads
    it), dumped through ``TaskSpec.as_schema``. ``fields``: the task fields the request carried, if any."""
    spec, fields = _task_with_schema(task), {"task": task, "question": "", **fields}
    return spec.as_schema(spec.reader(text, **fields).value, reply=text, fields=fields).model_dump_json()


def _completion(model: str, text: str, prompt_tokens: int) -> dict[str, Any]:
    completion_tokens = approx_tokens(text)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
        "model": model, "system_fingerprint": None,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _stream(completion: dict[str, Any]) -> StreamingResponse:
    """The reply as one SSE content chunk, a finish chunk and ``[DONE]`` (for clients that ask to stream)."""
    base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    text = completion["choices"][0]["message"]["content"]
    chunks = [
        base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": completion["usage"]},
    ]

    async def events():
        for chunk in chunks:
            yield f"data: {json.dumps(chunk)}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def messages_key(messages: list[dict[str, Any]]) -> str:
    """The request-log key of a conversation: sha256 of its (role, text) pairs, as the server reads them. A test
    computes the same key from an ``LLMCall.messages`` to match a recorded call with the requests it sent."""
    pairs = [[str(m.get("role", "user")), _text(m.get("content"))] for m in messages]
    return hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=8)
def _knowledge(paths: tuple[str, ...] | None):
    """The model's memory for requests without task fields; None: the bundled datasets' (loaded on first need)."""
    if paths is None:
        return None
    from backend.llm.offline.knowledge import load_knowledge

    return load_knowledge(paths)


def _describe_knowledge(paths: tuple[str, ...] | None) -> str:
    from backend.llm.offline.knowledge import bundled_knowledge

    found = bundled_knowledge() if paths is None else _knowledge(paths)
    where = "the bundled datasets" if paths is None else ", ".join(paths) or "nothing (--knowledge none)"
    return f"{len(found)} questions' internal_knowledge from {where}"


def create_app(settings: ServerSettings | None = None, request_log: str | Path | None = None) -> Starlette:
    """The Starlette app. ``app.state.stats`` counts chat requests by outcome (for tests and /health);
    ``app.state.requests`` records each one as it ends, and ``request_log`` (a file) gets the same records as
    JSON lines."""
    settings = settings or ServerSettings()
    knowledge = _knowledge(settings.knowledge)
    lock = threading.Lock()
    stats = {"requests": 0, "ok": 0, "fail": 0, "hang": 0, "garbage": 0, "bad_request": 0, "error": 0}
    requests: deque[dict[str, Any]] = deque(maxlen=100_000)  # the newest; a long-lived server stays bounded
    log_file = open_private(request_log, "a") if request_log else None  # noqa: SIM115 - app lifetime

    def record(n: int, received: float, key: str | None, fault: str, status: int) -> None:
        entry = {"n": n, "received": received, "ended": time.time(), "key": key, "fault": fault, "status": status}
        with lock:
            requests.append(entry)
            if log_file is not None:
                log_file.write(json.dumps(entry) + "\n")
                log_file.flush()

    def bump(key: str) -> int:
        with lock:
            n = stats[key]
            stats[key] = n + 1
            return n

    async def chat(request: Request) -> Response:
        n, received = bump("requests"), time.time()
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            bump("bad_request")
            record(n, received, None, "bad_request", 400)
            return _error(400, "the request body is not valid JSON", "invalid_request_error")
        checked = _validate(body)
        if isinstance(checked, JSONResponse):
            bump("bad_request")
            record(n, received, None, "bad_request", checked.status_code)
            return checked
        messages, fields = checked
        schema_task = _schema_task(body)
        if isinstance(schema_task, JSONResponse):
            bump("bad_request")
            record(n, received, None, "bad_request", schema_task.status_code)
            return schema_task
        key = messages_key(messages)
        model = str(body.get("model") or settings.model_name)
        fault = decide(settings, n)
        if not await _sleep_unless_disconnected(request, settings.latency_ms / 1000.0):
            record(n, received, key, fault.kind, 499)
            return Response(status_code=499)
        bump(fault.kind)
        if fault.kind == "fail":
            record(n, received, key, "fail", fault.status)
            return _fault_error(fault.status)
        if fault.kind == "hang":
            finished = await _sleep_unless_disconnected(request, settings.hang_s)
            record(n, received, key, "hang", 504 if finished else 499)
            return _error(504, "hung request ended (serve-model --hang-rate)", "server_error", "timeout")
        prompt_tokens = sum(approx_tokens(m["content"]) for m in messages)
        if fault.kind == "garbage":
            text = garbage_text(settings.seed, n)
        elif settings.reply_text is not None:
            text = settings.reply_text
        else:
            from backend.llm.offline import respond

            try:
                text = await anyio.to_thread.run_sync(respond, messages, fields, knowledge)
                if schema_task is not None:  # response_format: the same reply, as the task's JSON object
                    text = await anyio.to_thread.run_sync(structured_reply, schema_task, text, fields)
            except Exception as exc:  # noqa: BLE001 - report, do not crash the server
                bump("error")
                record(n, received, key, "error", 500)
                return _error(500, f"offline model failed: {type(exc).__name__}: {exc}", "server_error",
                              "model_error")
        record(n, received, key, fault.kind, 200)
        completion = _completion(model, text, prompt_tokens)
        return _stream(completion) if body.get("stream") else JSONResponse(completion)

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [
            {"id": settings.model_name, "object": "model", "created": 0, "owned_by": "conflictlens-offline"}]})

    # what anyone who can reach the port may read: the fault settings, never a path of this machine (the knowledge
    # datasets are counted, not named)
    shown = {k: v for k, v in asdict(settings).items() if k not in ("host", "port", "knowledge")}
    shown["knowledge"] = "bundled" if settings.knowledge is None else f"{len(settings.knowledge)} dataset(s)"

    async def health(request: Request) -> Response:
        with lock:
            counts = dict(stats)
        return JSONResponse({"status": "ok", "model": settings.model_name, "stats": counts, "settings": shown})

    app = Starlette(routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/chat/completions", chat, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ])
    app.state.stats = stats
    app.state.requests = requests
    app.state.settings = settings
    return app


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


KEEP_ALIVE_S = 75


def _config(app: Starlette, log_level: str, access_log: bool):
    import uvicorn

    # keep-alive longer than clients keep idle connections (httpx: 5 s, uvicorn's default too): at equal limits a
    # client may reuse a connection the server is closing, and the request fails as "Connection error"
    return uvicorn.Config(app, log_level=log_level, access_log=access_log, lifespan="off",
                          timeout_graceful_shutdown=2, server_header=False, timeout_keep_alive=KEEP_ALIVE_S)


def warm_up() -> float:
    """Load the offline model's reader (the embedding model) once; returns the seconds it took."""
    from backend.llm.offline import respond

    start = time.perf_counter()
    respond([{"role": "user", "content": "Context: Warm-up was done in 2024.\nQuestion: When was warm-up done?"}], {})
    return time.perf_counter() - start


def serve(settings: ServerSettings, *, allow_remote: bool = False, warmup: bool = True,
          log_level: str = "info", access_log: bool = True, request_log: str | Path | None = None) -> None:
    """Run the server until interrupted. Refuses a non-loopback host unless ``allow_remote``; ``request_log``:
    a file that gets one JSON line per chat request (``create_app``)."""
    import uvicorn

    if not is_loopback(settings.host):
        if not allow_remote:
            raise ValueError(f"refusing to bind non-loopback host {settings.host!r} (pass allow_remote=True)")
        print(f"warning: serve-model is listening on {settings.host}, reachable from other machines; it has "
              "no authentication", file=sys.stderr, flush=True)
    sock = _bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    if warmup:
        print(f"warming up the offline model ({time.strftime('%H:%M:%S')}) ...", file=sys.stderr, flush=True)
        print(f"warm-up took {warm_up():.1f} s", file=sys.stderr, flush=True)
    print(f"the model's memory for requests without task fields: {_describe_knowledge(settings.knowledge)}",
          file=sys.stderr, flush=True)
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(f"serving offline model as {settings.model_name!r} at http://{host}:{port}/v1 "
          f"(litellm: model='openai/{settings.model_name}', api_base='http://{host}:{port}/v1')", flush=True)
    server = uvicorn.Server(_config(create_app(settings, request_log), log_level, access_log))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


class RunningServer:
    """A server on a background thread (for tests and benchmarks); see ``running_server``."""

    def __init__(self, settings: ServerSettings, log_level: str = "warning"):
        import uvicorn

        if not is_loopback(settings.host):
            raise ValueError("running_server binds loopback only")
        self.settings = settings
        self.app = create_app(settings)
        self._sock = _bind(settings.host, settings.port)
        self.port = self._sock.getsockname()[1]
        self.base_url = f"http://{settings.host}:{self.port}/v1"
        self._server = uvicorn.Server(_config(self.app, log_level, access_log=False))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name=f"serve-model:{self.port}", daemon=True)

    @property
    def stats(self) -> dict[str, int]:
        return dict(self.app.state.stats)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat request that has ended, in the order they ended (``create_app``)."""
        return list(self.app.state.requests)

    def start(self, timeout: float = 10.0) -> RunningServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("serve-model did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)
        self._sock.close()
        if self._thread.is_alive():
            raise RuntimeError("serve-model did not stop")


@contextmanager
def running_server(settings: ServerSettings | None = None, **overrides: Any) -> Iterator[RunningServer]:
    """``with running_server(latency_ms=200) as srv: ... srv.base_url ...``: a server on a free loopback
    port (``port=0``) in a background thread, stopped on exit."""
    settings = settings or ServerSettings(port=0)
    if overrides:
        settings = ServerSettings(**(asdict(settings) | overrides))
    server = RunningServer(settings).start()
    try:
        yield server
    finally:
        server.stop()
