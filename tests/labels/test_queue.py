"""The review queue: answer groups, entropy, order (most disputed first), and the filters."""

import math

import pytest

from backend.labels import LabelDraft, LabelStore, dataset_key
from backend.labels.queue import ABSTAINED, build_queue, case_for, entropy, filter_cases, progress
from backend.schema import Dataset, Document, DocLabel, MethodResult, Question


def _q(qid, gold=("Paris",), labels=()):
    docs = [Document(id=f"{qid}-d{i}", text=f"text {i}", label=DocLabel(type=t, answer="x") if t else None)
            for i, t in enumerate(labels or [None])]
    return Question(id=qid, question=f"{qid}?", documents=docs, gold_answers=list(gold))


def _r(qid, method, *answers, abstained=False, error=None):
    return MethodResult(method=method, question_id=qid, answers=list(answers), abstained=abstained, error=error)


def test_entropy_is_in_bits():
    assert entropy([7]) == 0.0
    assert entropy([1, 1]) == 1.0
    assert entropy([1] * 7) == pytest.approx(math.log2(7))
    assert entropy([]) == 0.0


def test_a_case_groups_methods_by_the_answers_they_gave():
    case = case_for(_q("q1"), 1, {
        "a": _r("q1", "a", "Paris"), "b": _r("q1", "b", "the Paris."),  # the same answer set
        "c": _r("q1", "c", "Lyon"), "d": _r("q1", "d", "Paris", "Lyon"),     # a multi-answer key of its own
        "e": _r("q1", "e", "I don't know", abstained=True), "f": _r("q1", "f", error="timeout")})
    assert case.groups == [("Paris", ["a", "b"]), ("Lyon", ["c"]), ("Paris | Lyon", ["d"]), (ABSTAINED, ["e"])]
    assert case.errors == ["f"] and "f" not in case.answers
    assert case.entropy == pytest.approx(entropy([2, 1, 1, 1]))
    assert case.wrong == ["c", "e"]  # no gold answer among theirs
    assert case.candidates() == ["Paris", "the Paris.", "Lyon"]
    # answer sets, not containment: "paris, France" is an answer of its own
    apart = case_for(_q("q1"), 1, {"a": _r("q1", "a", "Paris"), "b": _r("q1", "b", "paris, France")})
    assert apart.groups == [("Paris", ["a"]), ("paris, France", ["b"])] and apart.disagree
    assert case.minority() == {"c", "d", "e"}


def test_the_queue_puts_the_most_disputed_first_and_leaves_out_agreement():
    ds = Dataset(name="t", path="t", questions=[_q("agree"), _q("two", labels=["misinfo"]),
                                                _q("three", gold=("A", "B")), _q("allwrong")])
    results = {}
    for m, answers in {"m1": ["Paris", "Paris", "x", "Lyon"], "m2": ["Paris", "Lyon", "y", "Lyon"],
                       "m3": ["Paris", "Paris", "z", "Lyon"]}.items():
        for q, a in zip(["agree", "two", "three", "allwrong"], answers):
            results[(q, m)] = _r(q, m, a)
    queue = build_queue(ds, results, ["m1", "m2", "m3"])
    # 1.58 bits, 0.92 bits; "allwrong" (every method says Lyon) is no disagreement, however wrong
    assert [c.id for c in queue] == ["three", "two"]
    assert [c.dataset_type for c in queue] == ["ambiguity", "misinformation"]
    agreeing = build_queue(ds, results, ["m1", "m2", "m3"], include_agreeing=True)
    assert [c.id for c in agreeing] == ["three", "two", "agree", "allwrong"]  # 0 bits each: dataset order
    assert [c.id for c in build_queue(ds, results, ["m1", "m3"])] == ["three"]  # m2 left out


def test_filters_use_the_label_when_there_is_one(tmp_path):
    ds = Dataset(name="t", path="t", questions=[_q("q1", labels=["misinfo"]), _q("q2", labels=["noise"])])
    results = {(q, m): _r(q, m, a) for q, m, a in [("q1", "m1", "Paris"), ("q1", "m2", "Lyon"),
                                                   ("q2", "m1", "Nice"), ("q2", "m2", "Paris")]}
    queue = build_queue(ds, results, ["m1", "m2"])
    store = LabelStore(tmp_path / "l.db")
    store.save(LabelDraft(dataset="t", question_id="q2", answers=["Paris"], conflict_type="ambiguity",
                          analyst="ana"), dataset=ds)
    labels = store.latest(dataset_key(ds))
    assert [c.id for c in filter_cases(queue, labels, labelled="unlabelled")] == ["q1"]
    assert [c.id for c in filter_cases(queue, labels, labelled="labelled")] == ["q2"]
    assert [c.id for c in filter_cases(queue, labels, conflict_type="misinformation")] == ["q1"]
    assert [c.id for c in filter_cases(queue, labels, conflict_type="ambiguity")] == ["q2"]  # the label's type
    assert filter_cases(queue, labels, conflict_type="noise") == []  # the dataset's noise is overridden
    assert [c.id for c in filter_cases(queue, labels, method="m1")] == ["q1", "q2"]  # 1-1 ties
    assert [c.id for c in filter_cases(queue, labels, method="m2", labelled="labelled")] == ["q2"]
    assert progress(queue, labels) == (1, 2)
