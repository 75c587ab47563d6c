"""The one definition of agreement (backend/agreement.py) and the places that use it (issue 27): Evaluate's "methods
disagree" filter, the Label queue and Inspect's matrix count the same questions, and the queue never reads the
truth."""

import json
from pathlib import Path

import pytest

from backend import agreement
from backend.agreement import ABSTAINS, agree, answer_set, disagree, groups
from backend.data import load_dataset
from backend.evaluate import summarize
from backend.labels.queue import build_queue
from backend.outputs import Evaluation
from backend.report.compare import agreement_matrix
from backend.schema import Dataset, DocLabel, Document, MethodResult, Question
from backend.schema.summary import Summary
from components import evaluate as evaluate_view

ROOT = Path(__file__).resolve().parents[1]
#: The issue's run: ``evaluate --dataset sample_data/ramdocs_dev --methods all --limit 10`` (offline reader),
#: each row's answers, abstention and error only.
RUN = ROOT / "tests" / "fixtures" / "agreement" / "ramdocs_dev_10.jsonl"


def _r(method, *answers, abstained=False, error=None, qid="q"):
    return MethodResult(method=method, question_id=qid, answers=list(answers), abstained=abstained, error=error)


# --- the definition ----------------------------------------------------------------------------------------------

def test_answer_sets_match_after_normalisation_in_any_order():
    assert answer_set(_r("a", "The Ann Lee.", "Bob")) == answer_set(_r("b", "bob", "ann lee", "Bob")) \
        == frozenset({"ann lee", "bob"})
    assert agree(_r("a", "Ann Lee"), _r("b", "ann lee!"))
    assert not agree(_r("a", "Ann Lee"), _r("b", "Ann"))                 # containment is not agreement
    assert not agree(_r("a", "Ann Lee", "Bob"), _r("b", "Ann Lee"))      # overlap is not agreement


def test_abstaining_is_an_answer_of_its_own_and_a_failure_is_none():
    assert answer_set(_r("a", abstained=True)) == answer_set(_r("b")) == answer_set(_r("c", "I don't know")) \
        == ABSTAINS
    assert agree(_r("a", abstained=True), _r("b", "I don't know"))
    assert not agree(_r("a", abstained=True), _r("b", "Ann"))
    assert answer_set(_r("x", error="timeout")) is None and agree(_r("x", error="timeout"), _r("a", "Ann")) is None


def test_groups_and_disagree():
    results = {"a": _r("a", "Ann"), "b": _r("b", "Bob"), "c": _r("c", "ann"), "d": _r("d"), "x": _r("x", error="e")}
    assert groups(results) == [["a", "c"], ["b"], ["d"]]
    assert disagree(results)
    assert not disagree({"a": _r("a", "Ann"), "c": _r("c", "the ann"), "x": _r("x", error="e")})
    assert not disagree({"x": _r("x", error="e")}) and not disagree({})


def test_no_second_definition_is_left():
    """Agreement between methods is decided in backend/agreement.py only: the lenient ``matches`` (the offline
    model's stand-in) and ``cluster`` are not used by the places that show agreement."""
    places = ["backend/report/compare.py", "components/evaluate.py", "backend/labels/queue.py",
              "backend/whatif/compare.py", "backend/whatif/influence.py", "components/whatif.py"]
    for place in places:
        text = (ROOT / place).read_text(encoding="utf-8")
        for old in ("matches(", "cluster(", "def agree(", "def answer_set("):
            assert old not in text, f"{place} still has {old}"
    assert {"answer_set", "agree", "groups", "disagree", "ABSTAINS"} <= set(dir(agreement))


# --- the three places count the same questions ---------------------------------------------------------------------

def _run() -> tuple[Dataset, dict[tuple[str, str], MethodResult]]:
    ds = load_dataset(ROOT / "sample_data" / "ramdocs_dev")
    results = {}
    for line in RUN.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        results[(row["question_id"], row["method"])] = MethodResult(
            method=row["method"], question_id=row["question_id"], answers=row["answers"],
            abstained=row["abstained"], error=row["error"])
    asked = {q for q, _ in results}
    return Dataset(name=ds.name, path=ds.path, questions=[q for q in ds.questions if q.id in asked]), results


def _three_counts(ds: Dataset, results: dict, methods: list[str]) -> tuple[int, int, int]:
    """How many questions disagree, each through its own place's code path: Evaluate's filter, the Label queue,
    Inspect's matrix (some cell says the two methods differ)."""
    results = {p: r for p, r in results.items() if p[1] in methods}
    ev = Evaluation(summary=Summary.model_validate(summarize(ds, results, methods=methods, model="m")),
                    results=results, dataset=ds)
    frame = evaluate_view.question_frame(ev)
    evaluate_count = len(evaluate_view.filter_questions(frame, "disagree"))
    queue_count = len(build_queue(ds, results, methods))
    matrix_count = sum(bool((agreement_matrix({m: results[(q.id, m)] for m in methods
                                               if (q.id, m) in results}).values == 0).any())
                       for q in ds.questions)
    return evaluate_count, queue_count, matrix_count


@pytest.mark.parametrize("methods, expected", [
    # the shape: before, Evaluate said 0 (abstentions ignored), the queue 7 (wrong answers let in)
    (["astute", "counterfactual", "vanilla_rag"], 5),
    (["ra_rag", "astute", "madam", "counterfactual", "bridge", "vanilla_rag"], 7),
    (["ra_rag", "astute", "madam", "counterfactual", "bridge", "no_rag", "vanilla_rag"], 10),  # no_rag abstains
    (["astute", "vanilla_rag"], 0),
])
def test_evaluate_the_label_queue_and_inspect_count_the_same_disagreements(methods, expected):
    ds, results = _run()
    assert _three_counts(ds, results, methods) == (expected, expected, expected)


def test_a_failed_method_neither_agrees_nor_disagrees_in_any_place():
    ds, results = _run()
    methods = ["astute", "counterfactual", "vanilla_rag"]
    before = _three_counts(ds, results, methods)
    broken = {(q.id, "bridge"): _r("bridge", error="timeout: no reply", qid=q.id) for q in ds.questions}
    assert _three_counts(ds, results | broken, [*methods, "bridge"]) == before


def test_madam_agrees_only_with_the_same_answer_set():
    """The issue's matrix: MADAM (three answers) marked as agreeing with two methods that disagree with each
    other."""
    ds, results = _run()
    on = {m: results[("ramdocs-0003", m)] for m in ("madam", "astute", "ra_rag")}
    assert len(on["madam"].answers) == 3 and set(on["astute"].answers + on["ra_rag"].answers) <= set(
        on["madam"].answers)
    m = agreement_matrix(on)
    assert m.loc["astute", "ra_rag"] == 0 and m.loc["madam", "astute"] == 0 and m.loc["madam", "ra_rag"] == 0


# --- the queue is blind ----------------------------------------------------------------------------------------------

def _q(qid, gold, label=None):
    docs = [Document(id=f"{qid}-d", text="text", label=DocLabel(type=label, answer="x") if label else None)]
    return Question(id=qid, question=f"{qid}?", documents=docs, gold_answers=list(gold))


ANSWERS = {  # question -> answers of m1, m2, m3
    "tie1": ["Paris", "Lyon", "Paris"],     # 2 groups, 0.92 bits
    "tie2": ["Nice", "Nice", "Oslo"],       # 2 groups, 0.92 bits: ties with tie1
    "same": ["Rome", "Rome", "Rome"],       # every method agrees
    "wide": ["Ann", "Bob", None],           # 3 groups (m3 abstains), 1.58 bits
    "tie3": ["Bern", "Bern", None],         # 2 groups, 0.92 bits (an abstention is an answer)
}


def _queue(gold: dict[str, list[str]], labels: dict[str, str | None]):
    ds = Dataset(name="t", path="t", questions=[_q(q, gold[q], labels[q]) for q in ANSWERS])
    results = {(q, m): _r(m, *([a] if a else []), abstained=a is None, qid=q)
               for q, answers in ANSWERS.items() for m, a in zip(["m1", "m2", "m3"], answers)}
    return ([(c.id, [ms for _, ms in c.groups]) for c in build_queue(ds, results, ["m1", "m2", "m3"])],
            [c.id for c in build_queue(ds, results, ["m1", "m2", "m3"], include_agreeing=True)])


@pytest.mark.parametrize("gold, labels", [
    ({"tie1": ["Paris"], "tie2": ["Nice"], "same": ["Rome"], "wide": ["Ann"], "tie3": ["Bern"]},
     dict.fromkeys(ANSWERS)),
    # every method wrong on "same", three wrong methods on tie3 against two on tie1 and tie2: the old tie-break
    # (most wrong methods first) put tie3 ahead of tie1 and let "same" in
    ({"tie1": ["Lyon"], "tie2": ["Oslo"], "same": ["Milan"], "wide": ["Cy"], "tie3": ["Zurich"]},
     {"tie1": None, "tie2": "misinfo", "same": "noise", "wide": None, "tie3": "misinfo"}),
    ({q: [] for q in ANSWERS}, {q: "noise" for q in ANSWERS}),  # no truth at all
])
def test_the_queue_order_and_content_never_read_the_truth(gold, labels):
    queue, with_agreeing = _queue(gold, labels)
    assert queue == [("wide", [["m1"], ["m2"], ["m3"]]), ("tie1", [["m1", "m3"], ["m2"]]),
                     ("tie2", [["m1", "m2"], ["m3"]]), ("tie3", [["m1", "m2"], ["m3"]])]
    assert with_agreeing == ["wide", "tie1", "tie2", "tie3", "same"]  # agreeing cases only when asked, last
