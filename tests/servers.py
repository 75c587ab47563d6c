"""Real servers on loopback for the tests, each started by the test that needs it (never mocked).

A server that cannot start makes its tests skip with the reason (what is missing, or the server's own log), so
a skip always says why; ``scripts/test.sh`` installs what it can when missing.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _as_postgres(cmd: list[str]) -> list[str]:
    """initdb refuses to run as root: run the server tools as the ``postgres`` user then."""
    if os.geteuid() != 0:
        return cmd
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("PostgreSQL: running as root and `runuser` is missing, so initdb cannot run as postgres")
    return [runuser, "-u", "postgres", "--", *cmd]


@contextmanager
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free loopback port, removed afterwards; yields its URL. Its folder is
    made directly under the system temp folder: as root the server runs as ``postgres``, which cannot enter
    pytest's private (0700) temp folders."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL is not installed (no initdb / pg_ctl on PATH or in /usr/lib/postgresql/*/bin); "
                    "scripts/test.sh installs Debian's postgresql package when it can")
    root = Path(tempfile.mkdtemp(prefix="conflictlens-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    data, log, port = root / "db", root / "server.log", free_port()
    done = subprocess.run(_as_postgres([initdb, "-D", str(data), "-A", "trust", "-U", "cl", "--no-sync"]),
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.skip(f"PostgreSQL: initdb failed: {(done.stderr or done.stdout).strip()[-500:]}")
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    done = subprocess.run(_as_postgres([pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60",
                                        "start"]), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-800:] if log.exists() else done.stderr
        pytest.skip(f"PostgreSQL: the server did not start: {tail.strip()}")
    try:
        yield f"postgresql://cl@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True,
                       timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server_url: str, name: str) -> str:
    """A new, empty database on the server; its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.rsplit("/", 1)[0] + "/" + name


def _wait_http(url: str, proc: subprocess.Popen, seconds: float) -> bool:
    """Poll ``url`` until it answers 200 (True), the process exits or ``seconds`` pass (False)."""
    import time

    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    return False


def stop_process(proc: subprocess.Popen, group: bool = False, wait: float = 10) -> None:
    """Stop a server, politely first, then for sure: SIGTERM, then SIGKILL if it has not exited within ``wait``
    seconds. ``group``: the server was started in its own session; signal its whole process group."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            if group:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


def venv_tool(name: str) -> str | None:
    """A console script of the running interpreter's environment (the venv's ``bin/``), else one on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


@contextmanager
def chroma_server() -> Iterator[str]:
    """``chroma run`` (the server shipped with the chromadb package) on a free loopback port over a throwaway
    folder; yields its URL once its heartbeat answers."""
    chroma = venv_tool("chroma")
    if chroma is None:
        pytest.skip("chroma server: no `chroma` executable beside the interpreter or on PATH (it ships with chromadb)")
    root = Path(tempfile.mkdtemp(prefix="conflictlens-chroma-"))
    port, log = free_port(), root / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([chroma, "run", "--path", str(root / "data"), "--host", "127.0.0.1",
                                 "--port", str(port)], stdout=out, stderr=subprocess.STDOUT,
                                env=dict(os.environ, ANONYMIZED_TELEMETRY="False"), start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        if not _wait_http(f"{url}/api/v2/heartbeat", proc, 60):
            pytest.skip(f"chroma server did not answer its heartbeat: {log.read_text(errors='replace')[-800:]}")
        yield url
    finally:
        stop_process(proc, group=True)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def ray_head(num_cpus: int = 2) -> Iterator[str]:
    """A one-machine Ray cluster on loopback (``backend.evaluate_ray.local_cluster``: ``ray start --head`` with a
    throwaway ``--temp-dir``, stopped by its own process group, never ``ray stop``); yields its address."""
    from backend.evaluate import EvaluationError
    from backend.evaluate_ray import local_cluster

    cluster = local_cluster(num_cpus)
    try:
        address = cluster.__enter__()
    except EvaluationError as err:
        pytest.skip(f"Ray: {err}")
    try:
        yield address
    finally:
        cluster.__exit__(None, None, None)
