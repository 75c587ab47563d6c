"""The side-by-side comparison shared by the Inspect page and the HTML report (backend/report/compare.py)."""

import math

from backend.report import compare as view
from tests.test_scoring import Q, r

def test_agreement_matrix():
    results = {"a": r("a", ["Ann Lee"]), "b": r("b", ["ann"]), "c": r("c", ["Bob"]), "d": r("d"), "e": r("e"),
               "x": r("x", error="boom")}
    m = view.agreement_matrix(results)
    assert m.loc["a", "b"] == 1 and m.loc["a", "c"] == 0 and m.loc["d", "e"] == 1 and m.loc["a", "d"] == 0
    assert math.isnan(m.loc["a", "x"]) and (m.values == m.values.T)[~m.isna().values].all()
    fig = view.agreement_figure(results)
    assert fig.data[0].text[0][2] == "differ" and fig.layout.title.text.startswith("Agreement")


def test_support_matrix_and_figure():
    results = {"a": r("a", ["Ann Lee"], support={"Ann Lee": ["d1"]}), "b": r("b", ["Bob"], support={"Bob": ["d2"]})}
    m = view.support_matrix(results, Q)
    assert m.to_dict() == {"a": {"d1": 1, "d2": 0}, "b": {"d1": 0, "d2": 1}}
    fig = view.support_figure(results, Q, show_truth=True)
    assert list(fig.data[0].y) == ["d1 · unlabelled", "d2 · unlabelled"]
    assert view.support_figure(results, Q, show_truth=False).data[0].y == ("d1", "d2")


def test_results_frame_puts_truth_first_and_counts_preparation_apart():
    from backend.schema import Preparation

    prepared = r("a", ["Ann Lee", "Bob"]).model_copy(update={"preparation": Preparation(label="stage 1", calls=1112,
                                                                                      seconds=34.2)})
    frame = view.results_frame({"a": prepared, "b": r("b", ["Ann Lee"])}, Q, show_truth=True)
    assert list(frame.columns)[:3] == ["method", "verdict", "strict EM (paper)"]
    assert list(frame["dataset-level calls"]) == [1112, 0] and list(frame["calls"]) == [0, 0]
    assert list(frame["verdict"]) == ["correct + extras", "correct"]
    plain = view.results_frame({"b": r("b", ["Ann Lee"])}, Q, show_truth=False)
    assert "verdict" not in plain.columns and "dataset-level calls" not in plain.columns
