"""The HTML report opens in Chromium with no network and shows the story, every method's answer and its "why"."""

import pytest

from tests.browser.conftest import write_report
from tests.browser.walk import wait_until

pytestmark = pytest.mark.browser


def test_inspect_html_report_opens_offline(browser, tmp_path):
    out = write_report(tmp_path)
    html = out.read_text()
    assert "<script src=" not in html  # nothing to fetch
    context = browser.new_context(offline=True)
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    wait_until(page, page.locator("#why-vanilla_rag"), "the report's last method section")
    body = page.inner_text("body")
    for method in ("Closed book", "Vanilla RAG", "MADAM-RAG"):
        assert method in body
    assert page.locator("#story .headline").inner_text().strip()
    assert "3,559" in body and "What is the population of Broken Bow?" in body
    assert all(u.startswith("file://") or u.startswith("data:") for u in requests), requests
    context.close()
