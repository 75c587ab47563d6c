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
    lenient = ("a", "answer match (lenient)")
    assert frame.loc[lenient, "k"] == 2 and frame.loc[lenient, "n"] == 3
    lo, hi = view.wilson(2, 3)
    assert frame.loc[lenient, "low"] == round(100 * lo, 2)
    assert frame.loc[lenient, "high"] == round(100 * hi, 2)
    assert "accuracy" not in set(frame.index.get_level_values("metric"))  # the lenient match is never "accuracy"


def _own(summary: dict) -> Summary:
    """``summary`` with the keys a summary gets from ``summarize`` for methods named by the registry."""
    return Summary.model_validate(summary)


PAPERS = {"dataset": "d", "methods": {
    "ra_rag": {"n": 4, "scored": 4, "lenient_match": 75.0, "lenient_all_gold": 50.0, "squad_em": 50.0,
               "own_metric": "squad_em", "reading": "tolerant", "decisions_read": 20, "reading_dependent": 3,
               "reading_dependent_pct": 15.0,
               "other_reading": {"reading": "paper", "scores": {"n": 4, "scored": 4, "lenient_match": 50.0,
                                                                "squad_em": 25.0}}},
    "madam": {"n": 4, "scored": 4, "lenient_match": 100.0, "ramdocs_em": 25.0, "squad_em": 0.0,
              "own_metric": "ramdocs_em", "reading": "tolerant", "decisions_read": 12,
              "other_reading": {"reading": "paper", "scores": {"n": 4, "scored": 4, "lenient_match": 100.0,
                                                               "ramdocs_em": 25.0}}},
    "counterfactual": {"n": 4, "scored": 4, "lenient_match": 50.0, "own_metric": "risk", "reading": "tolerant",
                       "risk": {"risk": 12.5, "coverage": 80.0},
                       "other_reading": {"reading": "paper", "scores": {"n": 4}, "risk": {"risk": 20.0,
                                                                                          "coverage": 60.0}}},
    "old": {"n": 4, "scored": 4, "accuracy": 60.0, "strict_em": 40.0}}}  # a file from before the papers' metrics


def test_summary_frame_shows_each_methods_own_paper_metric_by_reading():
    frame = view.summary_frame(_own(PAPERS)).set_index("method")
    own, lenient = "paper's metric", "answer match (lenient)"
    assert list(frame[own]) == ["EM (SQuAD)", "accuracy (RAMDocs exact match)", "risk / coverage", "—"]
    assert frame.loc["ra_rag", f"{own} % · tolerant"] == "50.0" and frame.loc["ra_rag", f"{own} % · paper"] == "25.0"
    assert frame.loc["madam", f"{own} % · tolerant"] == "25.0" != frame.loc["madam", f"{lenient} % · tolerant"]
    assert frame.loc["counterfactual", f"{own} % · tolerant"] == "12.5 / 80.0"
    assert frame.loc["counterfactual", f"{own} % · paper"] == "20.0 / 60.0"
    assert frame.loc["ra_rag", f"{lenient} % · tolerant"] == "75.0" and frame.loc["ra_rag", f"{lenient} % · paper"] \
        == "50.0"
    # an old file: its "accuracy" read as the lenient match, under the reading its readers had; no paper's metric
    assert frame.loc["old", f"{lenient} % · tolerant"] == "60.0" and frame.loc["old", f"{own} % · paper"] == "not run"
    assert frame.loc["old", "all gold, no wrong (lenient) %"] == "40.0"
    assert frame.loc["ra_rag", "reading-dependent"] == "3/20 (15.0 %)"
    assert frame.loc["madam", "reading-dependent"] == "0/12" and frame.loc["old", "reading-dependent"] == "—"
    assert not [c for c in frame.columns if "accuracy" in c or "strict EM" in c]
    # the answers table first (its paper's metric beside ours, both readings), the rest in the second
    answers = view.answer_columns(frame.reset_index())
    assert answers == ["method", "n", own, f"{own} % · tolerant", f"{own} % · paper", f"{lenient} % · tolerant",
                       f"{lenient} % · paper", "reading-dependent"]
    details = view.detail_columns(frame.reset_index())
    assert details[0] == "method" and {"errors", "risk % ↓", "cost"} <= set(details)
    assert not set(details[1:]) & set(answers)


def test_the_answers_table_is_escaped_for_st_table():
    data = json.loads(json.dumps(PAPERS))
    data["methods"]["**bold** [x](http://e.x)"] = data["methods"].pop("old")  # a results file names its methods
    table = view.answers_table(view.summary_frame(_own(data)))
    assert "paper's metric % · tolerant" in [c.replace("\\", "") for c in table.columns]
    cell = table.iloc[-1, 0]
    assert cell.startswith("\\*\\*bold") and "\\[x\\]" in cell  # literal, never Markdown
    assert table.iloc[0, 2].replace("\\", "") == "EM (SQuAD)"


def test_one_reading_only_gets_its_columns_only():
    one = {"dataset": "d", "methods": {"bridge": {"n": 2, "scored": 2, "squad_em": 50.0, "lenient_match": 50.0,
                                                  "own_metric": "squad_em", "reading": "paper", "decisions_read": 4}}}
    frame = view.summary_frame(_own(one))
    assert "paper's metric % · paper" in frame.columns and "paper's metric % · tolerant" not in frame.columns
    assert "Replies read by each paper's own rule" in view.summary_caption(_own(one))
    assert "Both readings" in view.summary_caption(_own(PAPERS))


def test_answer_match_chart_sets_each_papers_metric_beside_the_lenient_match():
    fig = view.answer_match_figure(_own(PAPERS))
    assert fig.layout.title.text == view.ACCURACY_TITLE and "accuracy" not in fig.layout.title.text.lower()
    by_name = {t.name: t for t in fig.data}
    assert set(by_name) == {"answer match (lenient)", "EM (SQuAD)", "accuracy (RAMDocs exact match)"}
    assert list(by_name["EM (SQuAD)"].x) == ["ra_rag"] and list(by_name["EM (SQuAD)"].y) == [50.0]
    assert list(by_name["accuracy (RAMDocs exact match)"].x) == ["madam"]
    # two slots per method: every paper's metric shares one, so a method's two bars stand side by side
    assert {by_name[n].offsetgroup for n in by_name if n != "answer match (lenient)"} == {"paper"}
    assert by_name["answer match (lenient)"].offsetgroup == "lenient"
    assert "counterfactual" in list(by_name["answer match (lenient)"].x)  # RC-RAG: risk / coverage, in the table
    assert fig.layout.yaxis.title.text == "percent of scored questions"


def test_not_replayed_rows_are_said():
    data = json.loads(json.dumps(PAPERS))
    assert view.not_replayed_text(_own(data)) is None
    data["methods"]["madam"]["other_reading"]["not_replayed"] = 2
    line = view.not_replayed_text(_own(data))
    assert line is not None and "madam 2 rows" in line and "Not read by each paper's own rule" in line


def test_summary_frame_says_n_a_and_dash():
    summary = {"dataset": "d", "methods": {
        "broken": {"n": 2, "scored": 0, "errors": 2, "missing": 0, "lenient_match": None, "lenient_all_gold": None,
                   "precision": None, "recall": None, "f1": None, "refusal_rate": None, "mean_calls": 1.0,
                   "mean_prompt_tokens": 10.0, "mean_completion_tokens": 2.0, "mean_wall_s": 0.5},
        "careful": {"n": 2, "scored": 2, "errors": 0, "missing": 1, "lenient_match": 50.0, "lenient_all_gold": 50.0,
                    "precision": 50.0, "recall": 50.0, "f1": 50.0, "refusal_rate": 50.0, "mean_calls": 3.0,
                    "mean_prompt_tokens": 100.0, "mean_completion_tokens": 5.0, "mean_wall_s": 1.25,
                    "risk": {"risk": None, "coverage": 50.0}}}}
    frame = view.summary_frame(Summary.model_validate(summary)).set_index("method")
    assert frame.loc["broken", "answer match (lenient) % · tolerant"] == "n/a"
    assert frame.loc["broken", "risk % ↓"] == "—"
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
