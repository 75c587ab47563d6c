"""A link reproduces the view, in a real Chromium: the methods picked on Inspect, the truth overlay (one setting for
every page) and presentation mode, set by clicking, are in the page's URL; that URL opened in a fresh browser
context (no session, no storage) shows the same view."""

import re

import pytest

from tests.browser.walk import main_text, ms, settle, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORT = {"width": 1400, "height": 1400}
DRAWN_LAST = "Download this inspection as HTML"  # every picked method's result is in


def _inspect(page) -> None:
    wait_until(page, page.get_by_role("button", name=DRAWN_LAST))
    settle(page)


def _chips(page) -> list[str]:
    """The methods picked on Inspect, as the multiselect shows them."""
    picker = page.get_by_test_id("stMultiSelect").first
    return [t.get_attribute("aria-label") for t in picker.locator("[data-tag]").all()]


def _truth_on(page) -> bool:
    return page.get_by_test_id("stMain").get_by_role("switch", name="Show ground truth", exact=True).is_checked()


def test_a_copied_link_reproduces_methods_truth_and_presentation(app_url, browser):
    first = browser.new_context(viewport=VIEWPORT)
    page = first.new_page()
    page.goto(f"{app_url}/?dataset=ramdocs_dev&question=ramdocs-0007", timeout=ms(90))
    _inspect(page)
    # pick two methods by removing the others' chips, as a user does
    for name in ("RA-RAG", "Astute RAG", "Counterfactual prompting (RC-RAG)", "BRIDGE", "Closed book"):
        page.get_by_test_id("stMultiSelect").first.get_by_role("button", name=f"Remove {name}", exact=True).click()
        settle(page)
    assert _chips(page) == ["MADAM-RAG", "Vanilla RAG"]
    page.get_by_test_id("stMain").get_by_text("Show ground truth").click()
    settle(page)
    page.get_by_test_id("stSidebar").get_by_text("Presentation mode").click()
    wait_until(page, page.get_by_role("button", name="Leave presentation mode"))
    _inspect(page)
    url = page.url
    assert re.search(r"[?&]truth=1\b", url) and re.search(r"[?&]present=1\b", url), url
    assert re.search(r"[?&]methods=madam(%2C|,)vanilla_rag\b", url), url
    first.close()

    fresh = browser.new_context(viewport=VIEWPORT)  # no cookies, no storage: only the link
    page = fresh.new_page()
    page.goto(url, timeout=ms(90))
    _inspect(page)
    assert _chips(page) == ["MADAM-RAG", "Vanilla RAG"]
    assert _truth_on(page)
    text = main_text(page)
    columns = page.get_by_test_id("stColumn").filter(has=page.get_by_test_id("stPageLink"))
    names = [c.locator("strong").first.inner_text() for c in columns.all()]
    assert names == ["MADAM-RAG", "Vanilla RAG"], names
    assert "One agent per document debates over rounds" in text  # the presentation line under each name
    assert "correct" in text or "wrong" in text or "partial" in text  # the truth badges are drawn
    sidebar = page.get_by_test_id("stSidebar")
    assert not sidebar.is_visible(), "presentation mode shows the sidebar"
    assert page.get_by_role("button", name="Leave presentation mode").is_visible()
    size = page.evaluate("""() => parseFloat(getComputedStyle(
        document.querySelector('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')).fontSize)""")
    assert size > 16.5, f"presentation type is {size}px"  # larger than Streamlit's 16 px
    # leaving the mode brings the sidebar back and drops the parameter from the link
    page.get_by_role("button", name="Leave presentation mode").click()
    wait_until(page, lambda p: p.get_by_test_id("stSidebar").is_visible(), "the sidebar back")
    wait_until(page, lambda p: "present=" not in p.url, "present=1 gone from the link")
    fresh.close()
