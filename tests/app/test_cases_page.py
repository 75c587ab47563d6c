"""The Cases page: lists the telling kinds of the dataset's latest evaluation (with the truth on; only the truth-free
kind without it), opens a case in Inspect (the sidebar's question and the page switch), offers "Find cases" when
there is no evaluation; the picker marks the questions it has results for."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from backend.evaluate import append_row
from backend.schema import MethodResult
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
PAGE = "pages/cases.py"


def _result(qid: str, method: str, answers: list[str], support: dict | None = None) -> MethodResult:
    return MethodResult(method=method, question_id=qid, answers=answers, abstained=not answers,
                        support=support or {})


@pytest.fixture
def evaluation(tmp_path, monkeypatch, ramdocs):
    """A hand-made evaluation of ramdocs_dev under a cache folder of the test's own: ramdocs-0002 has one method
    right (vanilla RAG says the gold "football"), ramdocs-0003 has every method wrong."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    gold = ramdocs.question("ramdocs-0002").gold_answers[0]
    rows = [_result("ramdocs-0002", "vanilla_rag", [gold], {gold: ["ramdocs-0002-d1"]}),
            _result("ramdocs-0002", "no_rag", []),
            _result("ramdocs-0003", "vanilla_rag", ["nobody at all"]),
            _result("ramdocs-0003", "no_rag", ["no one either"])]
    folder = tmp_path / "evaluations" / "ramdocs_dev-test"
    folder.mkdir(parents=True)
    with (folder / "results.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            append_row(fh, "ramdocs_dev", "offline/reader", r)
    return folder


def _subheaders(at) -> list[str]:
    return [s.value for s in at.subheader]


def test_lists_the_kinds_and_opens_a_case_in_inspect(evaluation):
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"dataset": "ramdocs_dev", "question": "ramdocs-0005"})
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Cases"
    assert not any(h.startswith(("Only one method right", "All wrong")) for h in _subheaders(at))  # truth off
    at.toggle(key="app.show_truth").set_value(True).run()
    heads = _subheaders(at)
    assert "Only one method right (1)" in heads and "All wrong (1)" in heads, heads
    assert any("ramdocs-0002" in m.value.replace("\\", "") for m in at.markdown)  # md-escaped data
    assert any("uses the ground truth" in c.value for c in at.caption)
    # the picker marks the questions with results: who was right, with the truth on
    labels = at.sidebar.selectbox(key="app.question").options
    assert any(o.startswith("≠2 ✓ 1/2 · ramdocs-0002 — ") for o in labels), labels[:3]
    assert any(o.startswith("ramdocs-0009 — ") for o in labels)  # no results: no mark
    at.button(key="cases.open.one_right.ramdocs-0002").click().run()
    assert not at.exception, at.exception
    assert at.session_state["app.question"] == "ramdocs-0002"
    assert at.title[0].value == "Inspect"
    wait_for_runs(at.switch_page("pages/inspect.py"))  # AppTest's own page follows only its switch_page


def test_without_an_evaluation_it_offers_to_find_cases(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"dataset": "ramdocs_dev", "question": "ramdocs-0001"})
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert [b.label for b in at.button if b.key == "cases.find"] == ["Find cases"]
    assert any("No evaluation of" in i.value for i in at.info)


def test_the_app_opens_on_the_featured_question(featured_default):
    from backend.cases import featured_question

    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    assert featured_question("ramdocs_dev") not in (None, "ramdocs-0001")
    assert at.session_state["app.question"] == featured_question("ramdocs_dev")
    # a link naming a question still wins
    linked = AppTest.from_file(APP, default_timeout=180)
    linked.query_params.update({"dataset": "ramdocs_dev", "question": "ramdocs-0001"})
    linked.run()
    assert linked.session_state["app.question"] == "ramdocs-0001"
