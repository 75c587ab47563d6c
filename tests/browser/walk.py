"""Going through the app's pages in one browser session, as a user clicks the sidebar: open a page, wait for the
content it draws last, check that no Streamlit exception box is shown, keep a screenshot as a test artefact."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError, TimeoutError as PlaywrightTimeout

from tests.conftest import ROOT

#: Screenshots go here (gitignored): ``$CONFLICTLENS_ARTIFACTS/screenshots`` or ``test-artifacts/screenshots``.
ARTIFACTS = Path(os.environ.get("CONFLICTLENS_ARTIFACTS") or ROOT / "test-artifacts") / "screenshots"
VIEWPORT = {"width": 1400, "height": 2200}  # tall: Streamlit scrolls an inner box, so a shot is the viewport only
#: Sidebar link -> the page's title (the h1 it draws first).
PAGES = {"Inspect": "Inspect", "Cases": "Cases", "What-if": "What-if", "Sources (RA-RAG)": "Sources", "Debate (MADAM-RAG)": "Debate (MADAM-RAG)",
         "Consolidation (Astute RAG)": "Consolidation (Astute RAG)",
         "Risk (counterfactual prompting)": "Risk (counterfactual prompting)",
         "Decision path (BRIDGE)": "Decision path (BRIDGE)", "Dataset": "Dataset", "Model calls": "Model calls",
         "Evaluate": "Evaluate", "Label": "Label"}
#: How long nothing on the page may change (times ``patience()``) before a wait gives up: the app is stuck, not slow.
#: Work that takes long shows its progress (a stage's count, a method's column), and every change restarts the window.
STALL_S = 180
#: Durations on the page (elapsed, time left, a spinner's clock) tick without anything being done: not progress.
CLOCK = re.compile(r"\d[\d,.]*\s*(?:ms|min|minutes?|seconds?|s)\b")
#: What a stuck page says about itself: its progress bars, alerts and exception boxes, the script's state.
STATUS = """() => ({script: document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState,
    status: [...document.querySelectorAll('[data-testid="stProgress"], [data-testid="stAlert"], '
                                          + '[data-testid="stException"]')].map(e => e.innerText.trim())})"""


def patience() -> float:
    """How many times slower than an idle machine this one is now: ``$CONFLICTLENS_PATIENCE`` if set, else the
    1-minute load average per core (at least 1). The browser tests' waits and timeouts scale by it, so a test that
    passes on an idle machine keeps passing on one that other work shares (a fresh clone's CI at load 5-11)."""
    if value := os.environ.get("CONFLICTLENS_PATIENCE"):
        return max(float(value), 1.0)
    return max(os.getloadavg()[0] / (os.cpu_count() or 1), 1.0)


def ms(seconds: float) -> float:
    """A Playwright timeout (milliseconds) for a one-off step (a navigation, a static report's chart) that an idle
    machine does well within ``seconds``; scaled by ``patience()``."""
    return seconds * patience() * 1000


def wait_until(page, done, what: str | None = None, stall_s: float = STALL_S) -> None:
    """The browser tests' one wait: until ``done`` holds (a text the page shows, a Locator that is visible, or a
    ``done(page) -> bool``). It waits as long as the page keeps changing (a progress count, a method's column filling
    in, a new page being drawn) and fails only once nothing on it changed for ``stall_s`` × ``patience()`` seconds,
    saying what it waited for, what the page showed then and where its screenshot is."""
    if isinstance(done, str):
        what, done = what or repr(done), page.get_by_text(done).first
    what = what or str(done)

    def check() -> bool:
        if callable(done):
            return bool(done(page))
        try:  # Playwright's own wait, in slices: it sees a state however briefly it holds
            done.wait_for(timeout=1000)
            return True
        except PlaywrightTimeout:
            return False

    seen, since, window = None, time.monotonic(), stall_s
    while True:
        try:
            if check():
                return
            shown = CLOCK.sub("", page.evaluate("() => document.body.innerText"))
        except PlaywrightError:  # between two documents, or an element replaced while it was read
            shown = None
        window = max(window, stall_s * patience())
        if shown != seen:
            seen, since = shown, time.monotonic()
        elif time.monotonic() - since > window:
            break
        page.wait_for_timeout(250)  # a poll interval (it lets the page's event handlers run), not a budget
    try:
        status, main = page.evaluate(STATUS), main_text(page)
    except PlaywrightError as e:
        status, main = str(e), ""
    path = screenshot(page, "stalled", what[:60])
    pytest.fail(f"waited for {what}: nothing on the page changed for {window:.0f} s (stall window {stall_s} s × "
                f"patience {patience():.1f}); it showed {status}, its main area ending {main[-1500:]!r}; "
                f"screenshot {path}")


def open_page(page, link: str) -> None:
    """Click the sidebar link and wait for the page's title."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=link, exact=True).click()
    wait_until(page, page.locator("h1").filter(has_text=re.compile(f"^{re.escape(PAGES[link])}$")).first,
               f"the title of {link}")


def use_model(page, model: str, api_base: str) -> None:
    """Open the sidebar's Model box and type a litellm model string and its api_base, as a user does."""
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Model", exact=True).click()
    for label, value in (("litellm model", model), ("api_base (optional)", api_base)):
        field = sidebar.get_by_role("textbox", name=label)
        field.fill(value)
        field.press("Enter")


def accept_unknown_price(page) -> None:
    """Tick the page's "send at an unknown price" box, as a user does once per session for a self-hosted model the
    price map does not list (the box is there before the first run with that model)."""
    box = page.get_by_text("at an unknown price (asked once this session)")
    box.wait_for(timeout=ms(patience()))
    box.click()


def show(page, link: str, *, calibration: int | None = None, bridge_ran: bool = True) -> None:
    """Open the page (Inspect: the one already open) and do what a user does there to see its content: Sources
    runs RA-RAG (``calibration``: a shorter stage 1), the others show the session's results; wait for that content."""
    if link != "Inspect":
        open_page(page, link)
    if link == "Sources (RA-RAG)":
        if calibration:
            set_calibration(page, calibration)
        page.get_by_role("button", name="Run RA-RAG", exact=True).click()
    wait_until(page, "Press Run" if link == "Decision path (BRIDGE)" and not bridge_ran else DRAWN_LAST[link])
    settle(page)  # read only once the page's last rerun is over, not while it redraws the elements being read


def set_calibration(page, calibration: int) -> None:
    """Type a number of calibration questions into the Sources page's field (a shorter RA-RAG stage 1)."""
    field = page.get_by_label("calibration questions (stage 1)", exact=True)
    wait_until(page, field, "the calibration field")
    for _ in range(3):  # typed into while the page still ran, the field is redrawn with the old value
        settle(page)
        field.fill(str(calibration))
        field.press("Enter")
        settle(page)
        if field.input_value() == str(calibration):
            break
    assert field.input_value() == str(calibration), "the calibration field did not keep its value"


#: Sidebar link -> a text the page draws last, once its content is there.
DRAWN_LAST = {"Inspect": "Download this inspection as HTML",  # every method's result is in
              "What-if": "3 · Attack this question",  # nothing edited, no influence run (it costs calls): the plan
              "Sources (RA-RAG)": "Per-source answers", "Debate (MADAM-RAG)": "Final answers",
              "Consolidation (Astute RAG)": "Final decision", "Risk (counterfactual prompting)": "5 · Override",
              "Decision path (BRIDGE)": "Step 5: response", "Dataset": "All questions",
              "Model calls": "cached replies in", "Evaluate": "Run now", "Label": "Export",
              # Cases ends on one of its states: no evaluation yet (its button), cases listed, none telling
              "Cases": lambda page: page.get_by_role("button", name="Find cases").count() > 0
              or any(t in page.evaluate("() => document.body.innerText")
                     for t in ("Open in Inspect", "No telling case", "run an evaluation on the Evaluate page"))}


def settle(page) -> None:
    """Wait until the script run is over (the app's root says so, as Streamlit's own tests read it), every element's
    code has loaded (Streamlit draws a skeleton until then) and the charts are drawn."""
    wait_until(page, page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]'), "the script run's end")
    wait_until(page, lambda p: p.get_by_test_id("stSkeleton").count() == 0, "every element's code")
    # every chart on the page now: one located before a rerun may be gone after it (waiting on it would never end)
    wait_until(page, lambda p: p.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"
                                          ".every(c => c.querySelector('.main-svg'))"), "every chart drawn")


def exceptions(page) -> list[str]:
    """The text of every Streamlit exception box on the page (a traceback the user would see)."""
    return [e.inner_text() for e in page.locator('[data-testid="stException"]').all()]


def main_text(page) -> str:
    """What the page shows in its main area (the sidebar aside), word joiners dropped (``components.safe`` puts
    them into URLs so they do not become links)."""
    return page.get_by_test_id("stMain").inner_text().replace("\u2060", "")


def screenshot(page, *parts: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / ("-".join(re.sub(r"[^\w.-]+", "_", p) for p in parts) + ".png")
    page.screenshot(path=str(path))
    return path
