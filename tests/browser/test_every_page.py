"""Every page on every bundled dataset, in a real Chromium, as a user goes through them: open the question by link,
let Inspect run the methods, then click through the sidebar (one session per dataset, so nothing runs twice) and read
what each page is for. No page may show an exception; a screenshot of each is kept under ``walk.ARTIFACTS``."""

import json
import re

import pytest

from backend.methods import METHODS, SPECS
from backend.paths import SAMPLE_DATA
from tests.browser.walk import PAGES, VIEWPORT, exceptions, main_text, ms, screenshot, settle, show, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ALL = list(METHODS)
#: On the 200-question multi-source samples Inspect leaves out RA-RAG (its stage 1 answers 200 questions with every
#: source: ~1,100 calls) and BRIDGE (it first indexes the whole 3,300-document corpus); the Sources page runs RA-RAG
#: there on a 20-question stage 1 instead. The other datasets run every method.
CHEAP = [m for m in ALL if m not in ("ra_rag", "bridge")]
CALIBRATION = 20

# dataset, question, Inspect's methods, an answer the offline model gives there (the text a user looks for)
DATASETS = [("ramdocs_dev", "ramdocs-0001", ALL, "3,559"),
            ("scenarios", "sc-0001", ALL, "Andy Williams"),
            ("multisource", "ms-0001", CHEAP, "hockey"),
            ("multisource_beta", "ms-0001", CHEAP, "hockey")]


def _inspect(page, methods, answer):
    columns = page.get_by_test_id("stColumn").filter(has=page.get_by_test_id("stPageLink")).all()
    shown = {c.inner_text().split("\n")[0]: c.inner_text() for c in columns}  # method -> its column's text
    assert list(shown) == [SPECS[m].title for m in methods], shown  # columns headed by display names
    for m, column in shown.items():
        assert re.search(r"^[\d,]+ calls? · ", column, re.M), f"{m}: no call count: {column!r}"
        assert "running…" not in column and "\nerror\n" not in column, f"{m}: {column!r}"
    assert any(answer in column for column in shown.values()), shown


def _whatif(page):
    text = main_text(page)
    assert "No edits yet" in text and "Run document influence" in text, "the edit controls and the influence cost"
    assert "Leaving each document out" not in text, "the walk never runs influence"


def _sources(page, multi):
    if multi:
        wait_until(page, "Source reliability over the dataset (stage 1)")
        text = main_text(page)
        assert f"{CALIBRATION} unlabelled calibration questions" in text, text
    else:
        assert "no reliability to estimate" in main_text(page)


def _debate(page):
    text = main_text(page)
    assert "Agents × rounds" in text and re.search(r"stopped at round \d of \d", text)


def _astute(page):
    text = main_text(page)
    assert "Consolidation" in text and re.search(r"\d+ groups?\b", text) and "Candidates and confidence" in text


def _counterfactual(page):
    assert "2 · RAG answer" in main_text(page) and "Over the dataset" in main_text(page)


def _bridge(page, ran):
    if ran:
        assert re.search(r"^leaf \w+", main_text(page), re.M), "the decision leaf"


def _metric(page, label: str) -> str:
    """A metric's value, thousands separators dropped."""
    value = page.get_by_test_id("stMetric").filter(has_text=label).first.get_by_test_id("stMetricValue")
    return value.inner_text().replace(",", "")


def _dataset(page, dataset):
    rows = [json.loads(line) for line in (SAMPLE_DATA / dataset / "questions.jsonl").read_text().splitlines() if line]
    assert _metric(page, "questions") == str(len(rows))
    assert _metric(page, "documents") == str(sum(len(r["documents"]) for r in rows))
    assert "Documents by source" in main_text(page)


def _calls(page):
    assert int(_metric(page, "calls")) > 0, "the question's calls are listed"


@pytest.mark.timeout(1200)  # RA-RAG's stage 1 and BRIDGE's index (times walk.patience(): see conftest.py)
@pytest.mark.parametrize("dataset,question,methods,answer", DATASETS, ids=[d[0] for d in DATASETS])
def test_every_page_shows_its_content(app_url, browser, dataset, question, methods, answer):
    page = browser.new_page(viewport=VIEWPORT)
    multi = dataset != "ramdocs_dev"
    try:
        page.goto(f"{app_url}/?dataset={dataset}&question={question}&methods={','.join(methods)}", timeout=ms(120))
        wait_until(page, page.get_by_test_id("stMain").get_by_text(f"{question} · ").first, f"{question} on Inspect")
        problems = {}
        for link in PAGES:
            show(page, link, calibration=CALIBRATION if multi else None, bridge_ran="bridge" in methods)
            {"Inspect": lambda: _inspect(page, methods, answer), "What-if": lambda: _whatif(page),
             "Sources (RA-RAG)": lambda: _sources(page, multi),
             "Debate (MADAM-RAG)": lambda: _debate(page),
             "Consolidation (Astute RAG)": lambda: _astute(page),
             "Risk (counterfactual prompting)": lambda: _counterfactual(page),
             "Decision path (BRIDGE)": lambda: _bridge(page, "bridge" in methods),
             "Dataset": lambda: _dataset(page, dataset),
             "Model calls": lambda: _calls(page),
             "Evaluate": lambda: None, "Label": lambda: None, "Cases": lambda: None}[link]()  # show() waited
            settle(page)
            screenshot(page, dataset, PAGES[link])
            if shown := exceptions(page):
                problems[link] = shown
        assert not problems, f"exception boxes on {dataset}: {problems}"
    finally:
        page.close()
