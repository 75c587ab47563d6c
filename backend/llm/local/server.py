"""The local model's server, started on first use and reused while it lives (like chroma or PostgreSQL in the tests).

``ensure(name, ...)`` returns a running ``LocalServer`` for ``local/<name>``:

1. one this process started with the same settings (and still alive: a server that died is started again once);
2. else one another process announced for that name in ``<cache>/local/<name>.json`` (``serve-local`` in a terminal,
   or the app) whose pid lives and whose ``/health`` answers: reused, never stopped by this process;
3. else a new one: ``python -m backend serve-local`` as a child process on a free loopback port, its log in
   ``<cache>/local/<name>-<port>.log``, waited for until ``/health`` answers; stopped when this process exits (and it
   stops itself if this process is killed: it watches its parent).

A child process rather than the server in-process: a llama.cpp crash, or a kill of the server mid-run, never takes the
app down, and the run can say so in one line and go on. Every problem is a ``LocalModelError`` with one line saying
what to do (server or weights missing, a bad model file, the port taken, the server gone).

``slots(name, parallel)`` is the one queue for the server's slots in this process: every client (one per method run) waits
there, so a request is sent only when a slot is free and its timeout counts from then (``backend.llm.client``).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from backend.llm.local import throughput, weights
from backend.llm.local.serve import DEFAULT_CTX, DEFAULT_PARALLEL, DEFAULT_THREADS, INSTALL_SERVER, server_installed
from backend.paths import default_cache_dir, open_private, private_dir, write_private

#: How long a start may take: loading is ~0.5 s idle, several seconds on a busy machine.
START_TIMEOUT_S = 120.0


class LocalModelError(RuntimeError):
    """The local model cannot serve: the message is one line saying why and what to do."""


@dataclass
class LocalServer:
    name: str
    gguf: Path
    port: int
    parallel: int
    ctx: int
    threads: int
    digest: str
    pid: int
    owned: bool
    proc: subprocess.Popen | None = None
    log: Path | None = None
    load_s: float | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_base(self) -> str:
        return f"{self.url}/v1"

    def alive(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            return False
        try:
            return httpx.get(f"{self.url}/health", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        _forget_announcement(self)

    def last_log_line(self) -> str:
        """llama.cpp's last error line (``E ...``), else its last line: why it stopped or did not start."""
        try:
            lines = [ln.strip() for ln in self.log.read_text(errors="replace").splitlines() if ln.strip()]
        except (OSError, AttributeError):
            return ""
        errors = [ln for ln in lines if " E " in ln or ln.startswith("error:")]
        return (errors or lines or [""])[-1][-300:]


_servers: dict[tuple, LocalServer] = {}
_gates: dict[tuple, threading.BoundedSemaphore] = {}
_lock = threading.Lock()


def slots(name: str, parallel: int = DEFAULT_PARALLEL) -> threading.BoundedSemaphore:
    """The one queue, in this process, for ``local/<name>``'s ``parallel`` server slots: every client waits here, so
    the server never holds a request it cannot start and a request's timeout counts from when it is sent."""
    with _lock:
        return _gates.setdefault((name, parallel), threading.BoundedSemaphore(parallel))


def state_dir() -> Path:
    return default_cache_dir() / "local"


def ensure(name: str, *, parallel: int = DEFAULT_PARALLEL, ctx: int = DEFAULT_CTX,
           threads: int = DEFAULT_THREADS) -> LocalServer:
    """A running server for ``local/<name>`` (see the module docstring); ``LocalModelError`` when there cannot be
    one. Thread-safe: concurrent first calls start one server."""
    key = (name, parallel, ctx, threads)
    with _lock:
        known = _servers.get(key)
        if known is not None and known.alive():
            return known
        if known is not None and known.owned:  # it died (killed, crashed): start it again, once per call
            print(f"note: the local model server for local/{name} (pid {known.pid}) stopped "
                  f"({known.last_log_line() or 'no reason in its log'}); starting it again", file=sys.stderr)
        server = _announced(name, ctx) or _start(name, parallel=parallel, ctx=ctx, threads=threads)
        _servers[key] = server
        return server


def running(name: str) -> LocalServer | None:
    """A server for ``local/<name>`` this process knows or another announced, without starting one."""
    with _lock:
        for (n, *_), server in _servers.items():
            if n == name and server.alive():
                return server
    return _announced(name, None)


def gguf_for(name: str) -> Path:
    """The weights ``local/<name>`` serves: an announced server's file, else ``weights.find``."""
    announced = _read_announcement(name)
    if announced and Path(announced.get("gguf", "")).is_file():
        return Path(announced["gguf"])
    try:
        return weights.find(name)
    except weights.WeightsError as err:
        raise LocalModelError(str(err)) from None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(name: str, *, parallel: int, ctx: int, threads: int, port: int | None = None) -> LocalServer:
    if not server_installed():  # checked here: the child's error would come later and wordier
        raise LocalModelError(f"llama.cpp's server is not installed: {INSTALL_SERVER}")
    gguf = gguf_for(name)
    folder = private_dir(state_dir())
    for attempt in range(3):  # a free port can be taken between the look and the bind: try another
        chosen = port or _free_port()
        log, ready = folder / f"{name}-{chosen}.log", folder / f"{name}-{chosen}.ready"
        ready.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "backend", "serve-local", "--gguf", str(gguf), "--port", str(chosen),
               "--parallel", str(parallel), "--ctx", str(ctx), "--threads", str(threads), "--name", name,
               "--parent-pid", str(os.getpid()), "--ready-file", str(ready), "--no-announce"]
        with open_private(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)  # a Ctrl+C in the terminal reaches us, not it
        server = LocalServer(name=name, gguf=gguf, port=chosen, parallel=parallel, ctx=ctx, threads=threads,
                             digest=weights.digest(gguf), pid=proc.pid, owned=True, proc=proc, log=log)
        began = time.monotonic()
        while time.monotonic() - began < START_TIMEOUT_S:
            if proc.poll() is not None:
                break
            if ready.exists() and server.alive():
                server.load_s = json.loads(ready.read_text()).get("load_s")
                _announce(server)
                atexit.register(server.stop)
                if throughput.measured(server.digest) is None:  # a first figure for the time estimate
                    throughput.calibrate(server.url, server.digest)
                return server
            time.sleep(0.05)
        else:
            server.stop()
            raise LocalModelError(f"the local model server for local/{name} did not answer within "
                                  f"{START_TIMEOUT_S:.0f} s (log: {log})")
        why = server.last_log_line()
        if port is None and "HTTP server error" in why and attempt < 2:
            continue
        raise LocalModelError(f"the local model server for local/{name} did not start: {why or 'no reason given'} "
                              f"(log: {log})")
    raise AssertionError("unreachable")


# -- announcements: a server one process started, found by another ------------------------------------------------

def _announcement(name: str) -> Path:
    return state_dir() / f"{name}.json"


def _read_announcement(name: str) -> dict | None:
    try:
        return json.loads(_announcement(name).read_text())
    except (OSError, ValueError):
        return None


def announce(name: str, *, gguf: Path, port: int, parallel: int, ctx: int, threads: int, pid: int) -> None:
    private_dir(state_dir())
    tmp = _announcement(name).with_suffix(f".{pid}.tmp")
    write_private(tmp, json.dumps({"name": name, "gguf": str(gguf), "port": port, "parallel": parallel, "ctx": ctx,
                                   "threads": threads, "pid": pid, "digest": weights.digest(gguf)}))
    tmp.replace(_announcement(name))


def _announce(server: LocalServer) -> None:
    announce(server.name, gguf=server.gguf, port=server.port, parallel=server.parallel, ctx=server.ctx,
             threads=server.threads, pid=server.pid)


def forget(name: str, pid: int) -> None:
    """Remove ``name``'s announcement if it is ``pid``'s (a server stopping)."""
    known = _read_announcement(name)
    if known and known.get("pid") == pid:
        _announcement(name).unlink(missing_ok=True)


def _forget_announcement(server: LocalServer) -> None:
    forget(server.name, server.pid)


def _announced(name: str, ctx: int | None) -> LocalServer | None:
    """The server another process announced for ``name``, if it lives (and has ``ctx`` per slot, when given)."""
    known = _read_announcement(name)
    if not known or (ctx is not None and known.get("ctx") != ctx):
        return None
    try:
        os.kill(int(known["pid"]), 0)
        server = LocalServer(name=name, gguf=Path(known["gguf"]), port=int(known["port"]),
                             parallel=int(known["parallel"]), ctx=int(known["ctx"]), threads=int(known["threads"]),
                             digest=str(known["digest"]), pid=int(known["pid"]), owned=False)
    except (OSError, KeyError, ValueError, TypeError):
        return None
    return server if server.alive() else None
