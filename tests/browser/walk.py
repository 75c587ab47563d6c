"""Going through the app's pages in one browser session, as a user clicks the sidebar: open a page, wait for the
content it draws last, check that no Streamlit exception box is shown, keep a screenshot as a test artefact."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.conftest import ROOT

#: Screenshots go here (gitignored): ``$CONFLICTLENS_ARTIFACTS/screenshots`` or ``test-artifacts/screenshots``.
ARTIFACTS = Path(os.environ.get("CONFLICTLENS_ARTIFACTS") or ROOT / "test-artifacts") / "screenshots"
VIEWPORT = {"width": 1400, "height": 2200}  # tall: Streamlit scrolls an inner box, so a shot is the viewport only
#: Sidebar link -> the page's title (the h1 it draws first).
PAGES = {"Inspect": "Inspect", "What-if": "What-if", "Sources (RA-RAG)": "Sources", "Debate (MADAM-RAG)": "Debate (MADAM-RAG)",
         "Consolidation (Astute RAG)": "Consolidation (Astute RAG)",
         "Risk (counterfactual prompting)": "Risk (counterfactual prompting)",
         "Decision path (BRIDGE)": "Decision path (BRIDGE)", "Dataset": "Dataset", "Model calls": "Model calls",
         "Evaluate": "Evaluate", "Label": "Label"}
RUN_S = 900  # the longest a page's own work may take (RA-RAG's stage 1 or BRIDGE's index on a loaded machine)


def wait_text(page, text: str, timeout_s: float = RUN_S) -> None:
    page.get_by_text(text).first.wait_for(timeout=timeout_s * 1000)


def open_page(page, link: str) -> None:
    """Click the sidebar link and wait for the page's title."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=link, exact=True).click()
    page.locator("h1").filter(has_text=re.compile(f"^{re.escape(PAGES[link])}$")).first.wait_for(timeout=120_000)


def use_model(page, model: str, api_base: str) -> None:
    """Open the sidebar's Model box and type a litellm model string and its api_base, as a user does."""
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Model", exact=True).click()
    for label, value in (("litellm model", model), ("api_base (optional)", api_base)):
        field = sidebar.get_by_role("textbox", name=label)
        field.fill(value)
        field.press("Enter")


def show(page, link: str, *, calibration: int | None = None, bridge_ran: bool = True) -> None:
    """Open the page (Inspect: the one already open) and do what a user does there to see its content: Sources
    runs RA-RAG (``calibration``: a shorter stage 1), the others show the session's results; wait for that content."""
    if link != "Inspect":
        open_page(page, link)
    if link == "Sources (RA-RAG)":
        if calibration:
            field = page.get_by_label("calibration questions (stage 1)", exact=True)
            for _ in range(3):  # typed into while the page still ran, the field is redrawn with the old value
                settle(page)
                field.fill(str(calibration))
                field.press("Enter")
                settle(page)
                if field.input_value() == str(calibration):
                    break
            assert field.input_value() == str(calibration), "the calibration field did not keep its value"
        page.get_by_role("button", name="Run RA-RAG", exact=True).click()
    wait_text(page, "Press Run" if link == "Decision path (BRIDGE)" and not bridge_ran else DRAWN_LAST[link])
    settle(page)  # read only once the page's last rerun is over, not while it redraws the elements being read


#: Sidebar link -> a text the page draws last, once its content is there.
DRAWN_LAST = {"Inspect": "Download this inspection as HTML",  # every method's result is in
              "What-if": "3 · Attack this question",  # nothing edited, no influence run (it costs calls): the plan
              "Sources (RA-RAG)": "Per-source answers", "Debate (MADAM-RAG)": "Final answers",
              "Consolidation (Astute RAG)": "Final decision", "Risk (counterfactual prompting)": "5 · Override",
              "Decision path (BRIDGE)": "Step 5: response", "Dataset": "All questions",
              "Model calls": "cached replies in", "Evaluate": "Run now", "Label": "Export"}


def settle(page) -> None:
    """Wait until the script run is over (the app's root says so, as Streamlit's own tests read it), every element's
    code has loaded (Streamlit draws a skeleton until then) and the charts are drawn."""
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=RUN_S * 1000)
    page.get_by_test_id("stSkeleton").first.wait_for(state="detached", timeout=120_000)
    # every chart on the page now: one located before a rerun may be gone after it (waiting on it would never end)
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                           ".every(c => c.querySelector('.main-svg'))", timeout=60_000)


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
