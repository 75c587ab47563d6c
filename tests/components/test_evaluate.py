"""Evaluate page shaping: the Wilson interval, the summary table (n/a and —), the question table and its filters,
the agreement matrix and the JSONL export (opening results files: tests/test_outputs.py)."""

import json
import math

import pytest

from backend.evaluate import RESULTS, load_results, summarize
from backend.outputs import Evaluation
from backend.schema import Dataset, MethodResult, Question
from backend.schema.summary import Summary
from components import evaluate as view


def _q(qid: str, gold: list[str]) -> Question:
    return Question(id=qid, question=f"question {qid}?", documents=[], gold_answers=gold)


def _r(method: str, qid: str, answers=(), abstained=False, error=None) -> MethodResult:
    return MethodResult(method=method, question_id=qid, answers=list(answers), abstained=abstained, error=error)


@pytest.fixture
def ev() -> Evaluation:
    """q1: a right, b wrong (differ, one right); q2: a wrong, b abstains (all wrong, differ: abstaining is an
    answer of its own); q3: both right; q4: no gold answers; q5: a errors, b wrong (all wrong, no difference: a
    failed run has no answer)."""
    qs = [_q("q1", ["Paris"]), _q("q2", ["Rome"]), _q("q3", ["Oslo"]), _q("q4", []), _q("q5", ["Bern"])]
    ds = Dataset(name="tiny", path="/nowhere/tiny.jsonl", questions=qs)
    results = {
        ("q1", "a"): _r("a", "q1", ["Paris"]), ("q1", "b"): _r("b", "q1", ["Lyon"]),
        ("q2", "a"): _r("a", "q2", ["Milan"]), ("q2", "b"): _r("b", "q2", [], abstained=True),
        ("q3", "a"): _r("a", "q3", ["Oslo"]), ("q3", "b"): _r("b", "q3", ["oslo"]),
        ("q4", "a"): _r("a", "q4", ["X"]), ("q4", "b"): _r("b", "q4", ["Y"]),
        ("q5", "a"): _r("a", "q5", error="timeout: no reply"), ("q5", "b"): _r("b", "q5", ["Zurich"]),
    }
    summary = summarize(ds, results, methods=["a", "b"], model="m")
    return Evaluation(summary=Summary.model_validate(summary), results=results, dataset=ds)


def test_wilson_interval():
    assert view.wilson(0, 0) is None
    lo, hi = view.wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = view.wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)  # never below 0, unlike the normal approximation
    lo, hi = view.wilson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    narrow, wide = view.wilson(50, 100), view.wilson(5, 10)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]  # more questions, tighter interval


def test_interval_frame_counts_from_the_summary(ev):
    frame = view.interval_frame(ev.summary).set_index(["method", "metric"])
    # a: q1, q3 right among its 3 scored rows (q4 has no gold answers, q5 is an error)
    assert frame.loc[("a", "accuracy"), "k"] == 2 and frame.loc[("a", "accuracy"), "n"] == 3
    lo, hi = view.wilson(2, 3)
    assert frame.loc[("a", "accuracy"), "low"] == round(100 * lo, 2)
    assert frame.loc[("a", "accuracy"), "high"] == round(100 * hi, 2)


def test_summary_frame_says_n_a_and_dash():
    summary = {"dataset": "d", "methods": {
        "broken": {"n": 2, "scored": 0, "errors": 2, "missing": 0, "accuracy": None, "strict_em": None,
                   "precision": None, "recall": None, "f1": None, "refusal_rate": None, "mean_calls": 1.0,
                   "mean_prompt_tokens": 10.0, "mean_completion_tokens": 2.0, "mean_wall_s": 0.5},
        "careful": {"n": 2, "scored": 2, "errors": 0, "missing": 1, "accuracy": 50.0, "strict_em": 50.0,
                    "precision": 50.0, "recall": 50.0, "f1": 50.0, "refusal_rate": 50.0, "mean_calls": 3.0,
                    "mean_prompt_tokens": 100.0, "mean_completion_tokens": 5.0, "mean_wall_s": 1.25,
                    "risk": {"risk": None, "coverage": 50.0}}}}
    frame = view.summary_frame(Summary.model_validate(summary)).set_index("method")
    assert frame.loc["broken", "accuracy %"] == "n/a" and frame.loc["broken", "risk % ↓"] == "—"
    assert frame.loc["careful", "risk % ↓"] == "n/a" and frame.loc["careful", "coverage %"] == "50.0"
    assert frame.loc["careful", "tokens / q"] == "105" and frame.loc["broken", "tokens / q"] == "12"
    assert {"scored", "missing"} <= set(frame.columns)  # they say something here
    summary["methods"]["broken"] |= {"scored": 2}
    summary["methods"]["careful"] |= {"missing": 0}
    assert not {"scored", "missing"} & set(view.summary_frame(Summary.model_validate(summary)).columns)


def test_question_table_verdicts_and_filters(ev):
    frame = view.question_frame(ev, link_dataset="tiny")
    assert list(frame["id"]) == ["q1", "q2", "q3", "q4", "q5"]
    assert list(frame["a"]) == ["correct", "wrong", "correct", "no gold answers", "error"]
    assert list(frame["b"]) == ["wrong", "abstained", "correct", "no gold answers", "wrong"]
    assert frame["a answers"].iloc[4].startswith("error: timeout")
    assert list(frame["right"].astype("object").where(frame["right"].notna(), None)) == [1, 0, 2, None, 0]
    ids = {how: list(view.filter_questions(frame, how)["id"]) for how in view.FILTERS}
    assert ids == {"all": ["q1", "q2", "q3", "q4", "q5"], "disagree": ["q1", "q2", "q4"], "all_wrong": ["q2", "q5"],
                   "one_right": ["q1"]}
    assert view.verdict_counts(frame) == {"all": 5, "disagree": 3, "all_wrong": 2, "one_right": 1}
    assert frame["inspect"].iloc[0] == "./?dataset=tiny&question=q1&methods=a%2Cb"
    with pytest.raises(ValueError):
        view.filter_questions(frame, "nonsense")


def test_agreement_matrix(ev):
    share, compared = view.agreement_counts(ev.results, ["a", "b"], ["q1", "q2", "q3", "q4", "q5"])
    # q5: a errored, so 4 questions compared; only q3 agrees (q2: one abstains, the other answers)
    assert compared.loc["a", "b"] == 4 and share.loc["a", "b"] == pytest.approx(0.25)
    assert share.loc["a", "a"] == 1.0 and compared.loc["a", "a"] == 4 and compared.loc["b", "b"] == 5
    assert share.equals(share.T)
    lonely = view.agreement_matrix({("q1", "a"): _r("a", "q1", error="x")}, ["a"], ["q1"])
    assert math.isnan(lonely.loc["a", "a"])
    fig = view.agreement_figure(ev.results, ["a", "b"], ["q1", "q2", "q3", "q4", "q5"])
    assert fig.data[0].text[0][1] == "25% of 4"


def test_dataset_link_parameter(tmp_path):
    ds = Dataset(name="ramdocs_dev", path=str(tmp_path), questions=[])
    assert view.dataset_param(ds, {"ramdocs_dev": tmp_path}) == "ramdocs_dev"
    assert view.dataset_param(ds, {}) == f"file:{tmp_path}"


def _write(path, ev):
    path.write_bytes(view.jsonl_bytes(ev))
    return path


def test_jsonl_export_reads_back(ev, tmp_path):
    path = _write(tmp_path / RESULTS, ev)
    back, notes = load_results(path)
    assert not notes and back == ev.results
    first = json.loads(path.read_text().splitlines()[0])
    assert (first["dataset"], first["model"], first["question_id"], first["method"]) == ("tiny", "m", "q1", "a")
