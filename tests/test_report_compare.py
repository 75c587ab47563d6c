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
