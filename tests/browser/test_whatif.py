"""The What-if diff view in a real Chromium: open /whatif on ramdocs_dev, remove a document, re-run, and see one card
per method with what changed; the edited copy is marked as such. A screenshot is kept under ``walk.ARTIFACTS``."""

import pytest

from tests.browser.walk import VIEWPORT, exceptions, main_text, ms, screenshot, settle, wait_until

pytestmark = pytest.mark.browser

METHODS = ["vanilla_rag", "madam", "counterfactual"]
#: Two documents; without the first, the offline reader's vanilla RAG answers "Democratic" instead of "Republican".
QUESTION, DOC = "ramdocs-0018", "ramdocs-0018-d1"


def test_remove_a_document_re_run_and_see_the_diff(app_url, browser):
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.goto(f"{app_url}/calls", timeout=ms(120))  # a fresh server's first request can drop the query
        wait_until(page, "cached replies in")
        page.goto(f"{app_url}/whatif?dataset=ramdocs_dev&question={QUESTION}&methods={','.join(METHODS)}",
                  timeout=ms(120))
        wait_until(page, "Run document influence")  # the methods ran on the question as it is
        settle(page)
        page.get_by_test_id("stMultiSelect").filter(has_text="documents to remove").click()
        page.get_by_role("option", name=DOC, exact=True).click()
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Remove", exact=True).click()
        wait_until(page, "edited copy of")
        settle(page)
        page.get_by_role("button", name="Re-run on the edited question").click()
        wait_until(page, "Download the edited question")
        settle(page)
        text = main_text(page)
        assert f"{QUESTION}~edit-" in text and "1 edit; the dataset is unchanged" in text
        assert f"1. remove {DOC}" in text
        assert "Run document influence" in text and "Run the methods on this question first" not in text
        cards = {m: page.get_by_test_id("stColumn").filter(has_text="before").filter(
            has=page.get_by_text(m, exact=True)).last.inner_text() for m in METHODS}  # one column per method
        assert "answer changed" in cards["vanilla_rag"], cards["vanilla_rag"]
        assert "Republican" in cards["vanilla_rag"] and "Democratic" in cards["vanilla_rag"]
        assert all("after" in card and "key facts" in card for card in cards.values()), cards
        assert "● answer: Republican → Democratic" in cards["vanilla_rag"]
        path = screenshot(page, "whatif", "diff")
        assert path.stat().st_size > 10_000
        assert not exceptions(page)
    finally:
        page.close()
