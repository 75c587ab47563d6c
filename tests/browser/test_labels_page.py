"""The Label page in Chromium, for what AppTest cannot show: a version of the analyst's own label saved elsewhere (another
tab) is announced without a click (the page looks at the store every few seconds) while the analyst's unsaved typing
stays in the form, and the form's keyboard shortcuts (Ctrl+Enter from inside a text box saves; the store refuses a save
over the newer version until it is looked at)."""

import os

import pytest

from backend.labels import LabelDraft, LabelStore
from components.session.labels import REFRESH_S
from tests.app.test_labels_page import KEY, write_results
from tests.browser.conftest import app_server
from tests.browser.walk import ms, wait_until

pytestmark = pytest.mark.browser


@pytest.fixture
def label_app(tmp_path, _session_cache_dir):
    """A server of its own: a cache folder holding one evaluation run, and a label store in tmp_path."""
    cache = tmp_path / "cache"
    write_results(cache / "evaluations" / "ramdocs_dev-test")
    db = tmp_path / "labels.db"
    env = {**os.environ, "CONFLICTLENS_CACHE_DIR": str(cache), "CONFLICTLENS_LABELS": str(db)}
    with app_server(env) as url:
        yield url, db


def test_labels_saved_elsewhere_appear_and_shortcuts_save(label_app, browser):
    url, db = label_app
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(url + "/labels?dataset=ramdocs_dev", timeout=ms(60))
    wait_until(page, "Save & next")
    idle = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
    assert "case=ramdocs-0004" in page.url and page.get_by_text("not labelled by you yet").is_visible()
    name = page.get_by_role("textbox", name="Your name")
    name.fill("Ann")
    name.press("Enter")
    wait_until(page, lambda p: not p.get_by_text("Enter your name above to save labels.").count() and idle.count(),
               "the name taken (its rerun over)")
    typed = page.get_by_role("textbox", name="Other accepted answers, one per line")
    typed.fill("Football")  # not submitted yet

    # Ann saves this case from another tab
    LabelStore(db).save(LabelDraft(dataset=KEY, question_id="ramdocs-0004", answers=["Association football"],
                                   analyst="Ann"))
    # no click: the page looks again by itself every REFRESH_S seconds (an idle page until then: the stall window)
    wait_until(page, "Labelled by Ann", stall_s=3 * REFRESH_S)
    assert page.get_by_text("after this form was loaded").is_visible()
    assert typed.input_value() == "Football"  # the look did not redraw the form

    typed.focus()
    page.keyboard.press("Control+Enter")  # Save & next, from inside the text box
    wait_until(page, "This form was not saved")
    assert [lab.answers for lab in LabelStore(db).history(KEY, "ramdocs-0004")] == [["Association football"]]
    typed = page.get_by_role("textbox", name="Other accepted answers, one per line")
    # the other tab's version is in the form now: the refusal is drawn before the form below it, so wait for it
    wait_until(page, lambda p: typed.input_value() == "Association football", "the other version in the form")
    # typed into a form the rerun then replaces, the save would be lost with it
    wait_until(page, idle, "the script run's end")
    typed = page.get_by_role("textbox", name="Other accepted answers, one per line")
    typed.fill("Football")
    typed.press("Control+Enter")
    wait_until(page, lambda p: "case=ramdocs-0002" in p.url, "the next case in the URL")  # saved, and on
    history = LabelStore(db).history(KEY, "ramdocs-0004")
    assert [(lab.analyst, lab.answers) for lab in history] == [("Ann", ["Association football"]), ("Ann", ["Football"])]
    assert history[1].supersedes == history[0].uid  # on top of the version it was shown
    wait_until(page, idle, "the script run's end")
    page.keyboard.press("Alt+p")
    wait_until(page, lambda p: "case=ramdocs-0004" in p.url, "the previous case in the URL")
    page.close()
