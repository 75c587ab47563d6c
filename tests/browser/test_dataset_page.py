"""Open the running app in Chromium and read the Dataset page like a user would."""

import pytest

pytestmark = pytest.mark.browser


def test_dataset_page_renders_in_chromium(app_url, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    page.goto(app_url + "/dataset?dataset=ramdocs_dev&question=ramdocs-0001", timeout=60_000)
    # wait for the last section so the whole script has run (the title renders first)
    page.get_by_text("All questions").wait_for(timeout=90_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    assert page.get_by_text("What is the population of Broken Bow?").first.is_visible()
    assert page.get_by_text("Documents by source").is_visible()
    page.get_by_text("Show ground truth").click()
    page.get_by_text("supports: 3,559 people").first.wait_for(timeout=30_000)
    assert page.get_by_text("noise", exact=True).first.is_visible()
    page.screenshot(path=str(tmp_path / "dataset.png"))
    page.close()
