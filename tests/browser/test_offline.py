"""Nothing from the network: a user going through every page (running RA-RAG and MADAM-RAG too) makes the browser
request nothing outside loopback, and a URL inside dataset text never becomes a link."""

import json
from urllib.parse import urlparse

import pytest

from tests.browser.walk import ms, set_calibration, settle, wait_until

pytestmark = pytest.mark.browser

LOCAL_HOSTS = {"127.0.0.1", "localhost"}
EVIL = "evil.example"


def _is_local(url: str) -> bool:
    return url.startswith(("data:", "blob:")) or urlparse(url).hostname in LOCAL_HOSTS


def _recording_context(browser):
    """A context that records every request and websocket and aborts any that would leave loopback (so the test
    behaves the same on and off line); returns (context, page, every url)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    seen: list[str] = []
    context.on("request", lambda request: seen.append(request.url))
    context.route("**/*", lambda route: route.continue_() if _is_local(route.request.url) else route.abort())
    page = context.new_page()
    page.on("websocket", lambda ws: seen.append(ws.url))
    return context, page, seen


def _visit_every_page(page, multi_source: bool, calibration: int | None = None, on_page=lambda title: None) -> None:
    """Inspect (the offline model runs every method by itself), Dataset, Sources + Run RA-RAG, Debate + Run, Model
    calls; all in one session, as a user clicks through the sidebar. ``on_page(title)`` runs as each page finishes."""
    stage1 = "Source reliability over the dataset (stage 1)" if multi_source else "Per-source answers"
    for title, button, done in [("Inspect", None, "Download this inspection as HTML"),
                                ("Dataset", None, "All questions"),
                                ("Sources (RA-RAG)", "Run RA-RAG", stage1),
                                ("Debate (MADAM-RAG)", "Run", "Final answers"),
                                ("Model calls", None, "cached replies in")]:
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
        if calibration and button == "Run RA-RAG":  # a short stage 1: the same panels as 200 questions, sooner
            set_calibration(page, calibration)
        if button:
            page.get_by_role("button", name=button, exact=True).click()
        wait_until(page, done)
        settle(page)  # charts and tables drawn
        on_page(title)


def _pick_dataset(page, app_url: str, option: str) -> None:
    """Open the app on Model calls (a page that runs nothing by itself) and choose the dataset in the sidebar, as a
    user does. Not by ``?dataset=``: a fresh server's first request to ``/`` can drop it. Not from Inspect: leaving it
    while its methods still ran once gave the next page "SystemError: AST constructor recursion depth mismatch" (a
    CPython 3.11 ast bug seen in threaded apps, python/cpython#106905), which is not what this test is about."""
    page.goto(f"{app_url}/calls", timeout=ms(90))
    wait_until(page, "cached replies in")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name=option, exact=True).click()


def _outside(seen: list[str]) -> list[str]:
    return sorted({url for url in seen if not _is_local(url)})


@pytest.mark.parametrize("dataset,questions,multi_source", [("ramdocs_dev", 100, False), ("multisource", 200, True)])
def test_no_request_leaves_localhost(app_url, browser, dataset, questions, multi_source):
    context, page, seen = _recording_context(browser)
    _pick_dataset(page, app_url, dataset)
    wait_until(page, page.get_by_test_id("stSidebar").get_by_text(f"Question ({questions})"))
    _visit_every_page(page, multi_source, calibration=20 if multi_source else None)
    page.wait_for_timeout(ms(2))  # late requests (favicon, metrics) would come now: a window to see them, not a wait
    context.close()
    assert not _outside(seen), f"requests that left localhost: {_outside(seen)}"
    assert any(urlparse(u).path.startswith("/media/") and u.endswith(".png") for u in seen), \
        "the page icon should be served by the app itself"


# Dataset text a user may load: URLs (bare, www., https) and plotly's pseudo-HTML link in a source name.
SOURCES = ["http://evil.example/x", "www.evil.example", '<a href="http://evil.example/a">a</a>']


@pytest.fixture
def hostile_dataset(tmp_path):
    folder = tmp_path / "hostile"
    folder.mkdir()
    rows = [{"id": f"http://evil.example/q{n}", "question": "Who wrote the report?",
             "documents": [{"id": f"www.evil.example/d{n}-{i}", "source": source,
                            "text": f"Alice wrote the report (see http://evil.example/t{i} or www.evil.example)."}
                           for i, source in enumerate(SOURCES)]}
            for n in range(1, 4)]
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return folder


def _links_to_evil(page) -> list[str]:
    """Every <a> (HTML or SVG, inside collapsed expanders too) whose target names the hostile host."""
    hrefs = page.evaluate("""() => {
        document.querySelectorAll('details').forEach(d => d.open = true);
        return [...document.querySelectorAll('a')]
            .map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '');
    }""")
    return [h for h in hrefs if EVIL in h]


def test_urls_in_dataset_text_are_not_links(app_url, browser, hostile_dataset):
    context, page, seen = _recording_context(browser)
    _pick_dataset(page, app_url, "Your own file…")
    sidebar = page.get_by_test_id("stSidebar")
    path = sidebar.get_by_label("Path to a .jsonl file or dataset folder")
    path.fill(str(hostile_dataset))
    path.press("Enter")
    wait_until(page, sidebar.get_by_text("Question (3)"))
    links: dict[str, list[str]] = {}
    shown = []

    def look(title):
        links[title] = _links_to_evil(page)
        shown.append(page.get_by_text("http://evil.example/x").count())

    _visit_every_page(page, multi_source=True, on_page=look)
    context.close()
    assert any(shown), "the hostile source name should be on screen as text"
    assert not any(links.values()), f"URLs from the dataset became links: {links}"
    assert not _outside(seen), f"requests that left localhost: {_outside(seen)}"
