"""A link names a dataset file on the server (issue 26, finding 3): a real app, in Chromium, whose deployment opens one
temporary folder only (``CONFLICTLENS_OPEN_FOLDERS``) and caps files at 1 MB. ``/dataset?dataset=file:/dev/zero``
(which grew the app to 4 GB until a MemoryError) and a file in another folder are refused as outside the open
folders; a FIFO inside (which blocked a script thread for ever) is refused at once as not a regular file; a file over
the cap is refused; a symlink from the open folder to /dev/zero is refused after it is followed. Each refusal is one
line in the main pane (and the sidebar's error), shown promptly, with no traceback and nothing of the file's content;
the server's memory stays within 300 MB of what it was before the links. A good file inside the folder loads."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.browser.conftest import app_server
from tests.browser.walk import VIEWPORT, exceptions, main_text, ms, patience, screenshot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CANNOT = "This dataset cannot be loaded: "
OUTSIDE = "outside the folders this server opens datasets from (the deployment setting open_folders)"
DEVICE = "not a regular file (a device, pipe or socket is never read)"
OVER = "over the 1 MB limit (the deployment setting max_file_mb)"
MARKER = "CONFIDENTIAL-3f9a"  # in every refused file's text: never on the page
HEADROOM_MB = 300


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


class PeakMemory:
    """The highest resident memory of a process, sampled every 0.2 s on a thread while the block runs."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb(self.pid))


def settled_rss(pid: int) -> float:
    """The server's memory once its background warm-up (embedding model, chromadb, litellm: loaded after the first
    page is drawn) is over: no growth of more than 5 MB over 3 s. Bounded, then the last value."""
    deadline = time.monotonic() + 180 * patience()
    last = rss_mb(pid)
    while time.monotonic() < deadline:
        time.sleep(3)
        now = rss_mb(pid)
        if now - last < 5:
            return now
        last = now
    return last


def rows(n: int, text: str) -> str:
    return "".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "gold_answers": ["Ann"],
                               "documents": [{"id": f"d{i}", "text": text, "label": {"type": "correct",
                                                                                      "answer": "Ann"}}]}) + "\n"
                   for i in range(n))


@pytest.fixture
def folders(tmp_path):
    open_dir, outside = tmp_path / "open", tmp_path / "elsewhere"
    open_dir.mkdir()
    outside.mkdir()
    (open_dir / "team.jsonl").write_text(rows(3, "Ann wrote the book."), encoding="utf-8")
    (outside / "private.jsonl").write_text(rows(3, f"{MARKER} Ann wrote the book."), encoding="utf-8")
    big = rows(2000, f"{MARKER} " + "x" * 500)  # ~1.3 MB of questions, blank lines up to 2 MB
    (open_dir / "big.jsonl").write_text(big + "\n" * (2 * 1024 * 1024 - len(big)), encoding="utf-8")
    os.mkfifo(open_dir / "pipe.jsonl")
    (open_dir / "zero.jsonl").symlink_to("/dev/zero")
    return open_dir, outside


def visit(browser, url: str, path: str):
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"{url}/dataset?dataset={quote('file:' + path)}", timeout=ms(60))
    return page


def expect_refusal(browser, url: str, path: str, reason: str) -> float:
    """Open the link; the main pane's one line naming the file and the reason, the sidebar's error, no traceback, no
    content of the file. Returns how long the line took to show."""
    page = visit(browser, url, path)
    started = time.monotonic()
    try:
        line = f"{CANNOT}{path}: {reason}"
        main = page.get_by_test_id("stMain")
        try:
            main.get_by_text(CANNOT).first.wait_for(timeout=ms(30))  # promptly: a blocked read never shows it
        except Exception:  # noqa: BLE001 - fail saying what the page showed
            pytest.fail(f"{path}: no refusal within {30 * patience():.0f} s; screenshot "
                        f"{screenshot(page, 'refusal', Path(path).name)}; the page showed {main_text(page)[-800:]!r}")
        took = time.monotonic() - started
        shown = main_text(page)
        assert line in shown, (line, shown)
        assert page.get_by_test_id("stSidebar").get_by_text("This dataset cannot be loaded:").count() == 1
        whole = page.evaluate("() => document.body.innerText")
        assert MARKER not in whole and "Traceback" not in whole and not exceptions(page), whole[-2000:]
        return took
    finally:
        page.close()


def test_links_open_only_regular_files_inside_the_open_folders(tmp_path, browser, folders):
    open_dir, outside = folders
    env = {**os.environ, "CONFLICTLENS_OPEN_FOLDERS": str(open_dir), "CONFLICTLENS_MAX_FILE_MB": "1"}
    pids: list[int] = []
    with app_server(env=env, log=tmp_path / "app.log", pids=pids) as url:
        pid = pids[0]
        page = visit(browser, url, str(open_dir / "team.jsonl"))  # a good file inside: loads (and warms the app up)
        try:
            wait_until(page, "All questions")
            assert CANNOT not in main_text(page) and not exceptions(page)
            assert "question=q0" in page.url  # the sidebar loaded it and wrote its first question into the link
        finally:
            page.close()
        before = settled_rss(pid)
        with PeakMemory(pid) as memory:
            took = {path: expect_refusal(browser, url, path, reason) for path, reason in [
                ("/dev/zero", OUTSIDE),
                (str(outside / "private.jsonl"), OUTSIDE),
                (str(open_dir / "pipe.jsonl"), DEVICE),
                (str(open_dir / "zero.jsonl"), OUTSIDE),  # followed to /dev/zero
                (str(open_dir / "big.jsonl"), f"2 MB, {OVER}"),
                ("/dev/zero", OUTSIDE),  # again: the first visit left no thread blocked behind
            ]}
        assert memory.peak - before < HEADROOM_MB, (f"the server grew from {before:.0f} MB to {memory.peak:.0f} MB "
                                                    f"while the links were refused")
        assert all(t < 30 * patience() for t in took.values()), took
    log = (tmp_path / "app.log").read_text()
    assert "Traceback" not in log and MARKER not in log, log[-2000:]
