"""Open the running app in Chromium and read the Dataset page like a user would."""

import pytest

from tests.browser.walk import ms, wait_until

pytestmark = pytest.mark.browser


def test_dataset_page_renders_in_chromium(app_url, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    page.goto(app_url + "/dataset?dataset=ramdocs_dev&question=ramdocs-0001", timeout=ms(60))
    # wait for the last section so the whole script has run (the title renders first)
    wait_until(page, page.get_by_text("All questions"))
    wait_until(page, page.locator(".js-plotly-plot").first, "the first chart")
    assert page.get_by_text("What is the population of Broken Bow?").first.is_visible()
    assert page.get_by_text("Documents by source").is_visible()
    page.get_by_text("Show ground truth").click()
    wait_until(page, "supports: 3,559 people")
    assert page.get_by_text("noise", exact=True).first.is_visible()
    page.screenshot(path=str(tmp_path / "dataset.png"))
    page.close()
