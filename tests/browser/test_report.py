"""The HTML report opens in Chromium with no network and shows every method's answer and its charts."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.browser


def test_inspect_html_report_opens_offline(browser, tmp_path):
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", "sample_data/ramdocs_dev",
                           "--question", "@1", "--methods", "all", "--html", str(out), "--cache-dir", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert "<script src=" not in html  # nothing to fetch
    context = browser.new_context(offline=True)
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=30_000)
    body = page.inner_text("body")
    for method in ("no_rag", "vanilla_rag"):
        assert method in body
    assert "3,559" in body and "What is the population of Broken Bow?" in body
    assert all(u.startswith("file://") or u.startswith("data:") for u in requests), requests
    context.close()
