"""A hostile dataset (tests/fixtures/hostile): HTML, a Markdown image on a loopback server and LaTeX in the question
ids, questions, source names, document ids and texts and the simulated memory. On every page of the app, with every
method run, and in the HTML report: no dialog opens, nothing fetches the image, no element is made from the data,
no LaTeX is typeset from it, and the strings are on screen as the literal text they are."""

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import pytest

from backend.methods import METHODS as REGISTRY
from tests.browser.walk import PAGES, VIEWPORT, exceptions, main_text, ms, screenshot, settle, show, wait_until
from tests.conftest import FIXTURES, ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCRIPT, IMG, FRAC, SQUARE = "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", r"$\frac{a}{b}$", "$$x^2$$"
QID = f"q1 {SCRIPT} {FRAC}"
METHODS = list(REGISTRY)
#: Pages that show the question (its text and id); Evaluate and Label show a whole run's questions only after one.
SHOW_QUESTION = [p for p in PAGES if p not in ("Model calls", "Evaluate", "Label", "Cases")]
#: Anything the page made out of the data: a script, an image, an event handler (in the app's root, not the shell).
MADE_FROM_DATA = """() => [...document.querySelectorAll('#root script, #root img, #root [onerror], #root iframe')]
    .map(e => e.outerHTML.slice(0, 200))"""
TYPESET = """() => [...document.querySelectorAll('.katex annotation, .katex-mathml')].map(e => e.textContent)"""


@pytest.fixture
def pixel_server():
    """An HTTP server on loopback that records every request (the Markdown image's target)."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


@pytest.fixture
def hostile(tmp_path, pixel_server):
    port, hits = pixel_server
    path = tmp_path / "questions.jsonl"
    path.write_text((FIXTURES / "hostile" / "questions.jsonl").read_text().replace("PIXEL_PORT", str(port)))
    return path, f"![x](http://127.0.0.1:{port}/pixel.png)", hits


def _watch_dialogs(page) -> list[str]:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    return dialogs


def _look(page) -> dict:
    return {"made": page.evaluate(MADE_FROM_DATA), "typeset": [t for t in page.evaluate(TYPESET)
                                                             if "frac" in t or "x^2" in t]}


def test_hostile_text_is_shown_as_text_on_every_page(app_url, browser, hostile):
    path, pixel, hits = hostile
    page = browser.new_page(viewport=VIEWPORT)
    dialogs = _watch_dialogs(page)
    found: dict[str, dict] = {}
    try:
        page.goto(f"{app_url}/?dataset={quote('file:' + str(path))}&methods={','.join(METHODS)}", timeout=ms(120))
        wait_until(page, page.get_by_test_id("stMain").get_by_text("q1 <script>").first, "the hostile question")
        for link in PAGES:
            show(page, link)
            settle(page)
            screenshot(page, "hostile", PAGES[link])
            text = main_text(page)
            wanted = [QID, SCRIPT, IMG, FRAC, SQUARE, pixel] if link in SHOW_QUESTION else []
            found[link] = _look(page) | {"exceptions": exceptions(page), "missing": [w for w in wanted
                                                                                     if w not in text]}
    finally:
        page.close()
    bad = {link: {k: v for k, v in f.items() if v} for link, f in found.items() if any(f.values())}
    assert not bad, f"pages that made elements, typeset LaTeX, raised or lost the literal text: {bad}"
    assert not dialogs, f"dialogs opened: {dialogs}"
    assert not hits, f"the image was fetched: {hits}"


def test_hostile_text_is_shown_as_text_in_the_html_report(browser, hostile, tmp_path):
    path, pixel, hits = hostile
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", str(path), "--question", "@1",
                           "--methods", "all", "--html", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    page = browser.new_page(viewport=VIEWPORT)
    dialogs = _watch_dialogs(page)
    try:
        page.goto(out.as_uri())
        wait_until(page, page.locator("#story"), "the report's story")
        text = page.inner_text("body").replace("\u2060", "")
        made = page.evaluate(MADE_FROM_DATA.replace("#root ", "body "))
        typeset = [t for t in page.evaluate(TYPESET) if "frac" in t or "x^2" in t]
        screenshot(page, "hostile", "report")
    finally:
        page.close()
    assert [w for w in [QID, IMG, SQUARE, pixel] if w not in text] == []
    assert not [m for m in made if "alert" in m or "pixel" in m or 'src="x"' in m], made
    assert not typeset and not dialogs and not hits, (typeset, dialogs, hits)
