"""``python -m backend serve-local``: llama.cpp's own HTTP server (through ``xllamacpp``) on loopback, in this process.

llama.cpp serves OpenAI-compatible ``/v1/chat/completions`` and applies the GGUF's own chat template (system role
included): the project never writes a second template by hand. ``/health`` answers 200 once the weights are loaded.

Threads (measured by hand here on 2026-12-02, SmolLM2 135M on 2 cores, a 971-token prompt and 14 generated tokens,
with 0, 2 and 6 busy ``yes`` processes beside it; ``benchmarks/real_model.py --speed --threads N`` repeats it):
llama.cpp syncs its threads at every layer of every generated token, so when the machine is busier than its cores a
descheduled thread stalls the others: generation with 2 threads fell to 1.8 tokens/s at load 6, with 1 thread it kept
17 tokens/s (idle: 67-80 vs 45-60; 2 busy processes: 22 vs 26).
Prompt processing, a few large batches, loses little. So by default generation uses ``threads=1`` and prompt
processing ``batch_threads`` = the machine's cores; ``--threads`` sets generation's.

``parallel`` slots batch concurrent requests (continuous batching); each slot has ``ctx`` tokens of context (the
server is given ``ctx * parallel``). The prompt cache (``cache_prompt``, on by default) reuses a slot's shared prefix.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from backend.paths import write_private

#: What to run when the server package is missing (``scripts/test.sh`` runs it).
INSTALL_SERVER = "pip install xllamacpp==2026.10.11549"
DEFAULT_CTX = 8192      # SmolLM2's training context, per slot
DEFAULT_PARALLEL = 2    # slots: two requests decode in one batch
DEFAULT_THREADS = 1     # generation threads (see the module docstring)


class ServerMissing(RuntimeError):
    pass


@dataclass(frozen=True)
class ServeSettings:
    gguf: str
    port: int
    parallel: int = DEFAULT_PARALLEL
    ctx: int = DEFAULT_CTX
    threads: int = DEFAULT_THREADS
    batch_threads: int = 0   # 0: the machine's cores
    host: str = "127.0.0.1"
    alias: str = "model"     # the model id the server reports

    def __post_init__(self):
        for name, low in (("parallel", 1), ("ctx", 256), ("threads", 1), ("port", 1)):
            if getattr(self, name) < low:
                raise ValueError(f"--{name} must be at least {low}")


def server_installed() -> bool:
    """Is llama.cpp's server package installed? Asked without importing it (a 100 MB library the app and the CLI never
    load themselves: the server runs in its own process)."""
    import importlib.util

    try:
        return importlib.util.find_spec("xllamacpp") is not None
    except (ValueError, AttributeError):  # blocked in sys.modules (None): an import would fail too
        return False


def xllamacpp():
    try:
        import xllamacpp as xlc
    except ImportError:
        raise ServerMissing(f"llama.cpp's server is not installed: {INSTALL_SERVER}") from None
    return xlc


def start(settings: ServeSettings):
    """Start the server in this process; returns it (keep a reference: dropping it stops the server). Raises
    ``RuntimeError`` with llama.cpp's reason when it cannot start (a bad model file, the port taken)."""
    xlc = xllamacpp()
    params = xlc.CommonParams()
    params.model.path = settings.gguf
    params.model_alias = settings.alias
    params.n_parallel = settings.parallel
    params.n_ctx = settings.ctx * settings.parallel
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.batch_threads or os.cpu_count() or 1
    params.port = settings.port
    params.hostnames = [settings.host]
    params.cache_prompt = True
    return xlc.Server(params)


def run(settings: ServeSettings, *, parent_pid: int | None = None, ready_file: str | None = None,
        announce=print) -> int:
    """Serve until SIGTERM/SIGINT (or, with ``parent_pid``, until that process is gone). Writes ``ready_file`` (JSON:
    the settings, the pid and the load time) once the server answers; returns an exit code."""
    began = time.perf_counter()
    try:
        server = start(settings)
    except ServerMissing as err:
        announce(f"error: {err}", file=sys.stderr)
        return 3
    except RuntimeError as err:
        announce(f"error: llama.cpp's server did not start on {settings.host}:{settings.port} with {settings.gguf}: "
                 f"{err} (its log above says why: a model file it cannot load, or the port taken)", file=sys.stderr)
        return 1
    load_s = time.perf_counter() - began
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if ready_file:
        write_private(ready_file, json.dumps({**asdict(settings), "pid": os.getpid(), "load_s": round(load_s, 3)}))
    announce(f"llama.cpp serving {Path(settings.gguf).name} on http://{settings.host}:{settings.port}/v1 "
             f"(loaded in {load_s:.1f} s; {settings.parallel} slots of {settings.ctx} tokens; "
             f"{settings.threads} generation thread(s))", file=sys.stderr)
    while not stop.wait(1.0):
        if parent_pid is not None and not _alive(parent_pid):
            break  # the app or CLI that started it is gone: never outlive it
    del server
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
