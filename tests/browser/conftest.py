"""A real app server and a real Chromium (Debian's, driven by Playwright) for browser tests."""

import shutil
import socket
import subprocess
from contextlib import contextmanager
import sys
import tempfile
import time
import urllib.request

import pytest

from tests.browser.walk import patience
from tests.conftest import ROOT
from tests.servers import stop_process

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(config, items):
    """A browser test's pytest timeout (its own mark, else pytest.ini's) times ``walk.patience()``: the last bound on
    a hang, never a budget sized for an idle machine (the waits themselves fail earlier, saying what they saw)."""
    for item in items:
        if item.get_closest_marker("browser") is None:
            continue
        mark = item.get_closest_marker("timeout")
        seconds = float(mark.args[0] if mark and mark.args else (mark.kwargs.get("timeout") if mark else None)
                        or config.getini("timeout") or 0)
        if seconds > 0:
            item.add_marker(pytest.mark.timeout(seconds * patience()), append=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def app_server(env: dict | None = None, log=None, port: int | None = None, pids: list | None = None):
    """``streamlit run app.py`` on a free loopback port (``env``: its environment; ``log``: a file that gets its
    output, else a temporary file: an unread pipe would block a chatty server once full; ``port``: this one, for a
    test that must name the URL before the server starts, as sign-in's redirect_uri; ``pids``: gets the server's
    process id, for a test that watches its memory); yields its URL."""
    port = port or _free_port()
    out = open(log, "w") if log else tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60 * patience()
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        proc.wait()
        out.flush()
        if not log:
            out.seek(0)
        pytest.fail(f"the app did not start: {(open(log).read() if log else out.read())[-2000:]}")
    if pids is not None:
        pids.append(proc.pid)
    try:
        yield url
    finally:
        stop_process(proc)
        out.close()


@pytest.fixture(scope="session")
def app_url(_session_cache_dir):
    with app_server() as url:
        yield url


def chromium_browser():
    """Debian's Chromium under Playwright's sync API, for a package-scoped ``browser`` fixture: the API keeps an event
    loop running in this thread until closed, so one package holds one (a second, or one left open, breaks every later
    ``asyncio.run`` in the session). A package of browser tests elsewhere defines its own fixture from this."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Debian's chromium is not installed; scripts/test.sh installs it (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="package")
def browser():
    yield from chromium_browser()


def write_report(tmp_path, question: str = "@1"):
    """``python -m backend inspect --html`` on a ramdocs_dev question with every method; the report's path. The
    session's cache folder (``CONFLICTLENS_CACHE_DIR``) holds the retrieval index BRIDGE needs: built once per
    session, not once per report."""
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", "sample_data/ramdocs_dev",
                           "--question", question, "--methods", "all", "--html", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return out
