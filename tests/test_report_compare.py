"""The side-by-side comparison shared by the Inspect page and the HTML report (backend/report/compare.py)."""

import math

import pytest

from backend.report import compare as view
from backend.report.layout import CHAR_PX, LABEL_CHARS, MIN_HEIGHT, NO_DATA
from backend.schema import Document, Question
from tests.test_scoring import Q, r


def test_agreement_matrix():
    results = {"a": r("a", ["Ann Lee"]), "b": r("b", ["the ann lee."]), "c": r("c", ["Bob"]), "d": r("d"),
               "e": r("e"), "x": r("x", error="boom"), "f": r("f", ["Ann Lee", "Bob"]), "g": r("g", ["ann"])}
    m = view.agreement_matrix(results)
    assert m.loc["a", "b"] == 1 and m.loc["a", "c"] == 0 and m.loc["d", "e"] == 1 and m.loc["a", "d"] == 0
    # answer sets, not overlap: f shares an answer with a and with c, yet agrees with neither; "ann" is not "ann lee"
    assert m.loc["f", "a"] == 0 and m.loc["f", "c"] == 0 and m.loc["a", "g"] == 0
    title = view.agreement_figure(results).layout.title
    assert (title.text, title.subtitle.text) == ("Agreement between methods",
                                                 "same answer set; abstaining counts as an answer")
    assert view.agreement_figure(results).data[0].text[0][5] == "error"
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
    # the verdict and the all-gold test are the project's lenient match, named so; then the method's own paper's metric
    assert list(frame.columns)[:4] == ["method", "verdict", "all gold, no wrong (lenient)", "its paper's metric"]
    assert list(frame["its paper's metric"]) == ["—", "—"]  # toy methods: no paper scores them
    assert list(frame["dataset-level calls"]) == [1112, 0] and list(frame["calls"]) == [0, 0]
    assert list(frame["verdict"]) == ["correct + extras", "correct"]
    plain = view.results_frame({"b": r("b", ["Ann Lee"])}, Q, show_truth=False)
    assert "verdict" not in plain.columns and "dataset-level calls" not in plain.columns
    assert "its paper's metric" not in plain.columns


def test_results_frame_scores_each_method_by_its_own_paper_under_a_display_title():
    """The Inspect page keys the results by display title: the method is the result's own."""
    q = Question(id="q", question="When?", gold_answers=["24 June 1630"], documents=[])
    results = {"RA-RAG": r("ra_rag", ["1630"]), "Astute RAG": r("astute", ["On 24 June 1630."]),
               "MADAM-RAG": r("madam", ["1630"]), "Vanilla RAG": r("vanilla_rag", ["24 June 1630"]),
               "Closed book": r("no_rag")}
    frame = view.results_frame(results, q, show_truth=True).set_index("method")
    assert frame["its paper's metric"].to_dict() == {
        "RA-RAG": "EM (SQuAD): no",                                  # the lenient verdict credits the year
        "Astute RAG": "accuracy (gold in response): yes",
        "MADAM-RAG": "accuracy (RAMDocs exact match): yes",           # whole words of the gold answer
        "Vanilla RAG": "EM (SQuAD): yes", "Closed book": "EM (SQuAD): no"}
    assert frame.loc["RA-RAG", "verdict"] == "correct" and frame.loc["Closed book", "verdict"] == "abstained"


# --- readable at any size: 1 to 40 rows, every row labelled, room for the longest label ------------------------

SIZES = (1, 10, 40)


def _question(n: int) -> Question:
    # the middle document's id is long: the margin has a longest label to make room for
    long = "-with-a-much-longer-identifier-from-the-dataset"
    ids = [f"doc-{i:02d}" + (long if i == n // 2 else "") for i in range(n)]
    return Question(id="q", question="?", documents=[Document(id=d, text="t") for d in ids])


def _support(n: int, show_truth: bool = True):
    q = _question(n)
    results = {"a": r("a", ["x"], support={"x": [d.id for d in q.documents[::2]]}), "b": r("b")}
    return view.support_figure(results, q, show_truth)


def _agreement(n: int):
    return view.agreement_figure({f"method-{i}" + ("-long-name" if i == n // 2 else ""): r(str(i), [str(i % 2)])
                                  for i in range(n)})


def _assert_readable(fig, rows: int) -> None:
    y, x = fig.layout.yaxis, fig.layout.xaxis
    labels = list(fig.data[0].y)
    assert len(labels) == rows
    # every row labelled: explicit ticks, so plotly cannot thin them out when rows are dense
    assert y.tickmode == "array" and list(y.tickvals) == labels and len(y.ticktext) == rows
    assert x.tickmode == "array" and list(x.tickvals) == list(fig.data[0].x)
    # the left margin holds the longest label and the axis title; automargin grows it if fonts run wider
    assert y.automargin and x.automargin
    assert fig.layout.margin.l >= CHAR_PX * max(len(t) for t in y.ticktext) + 20
    assert y.title.text and x.title.text and y.title.standoff is not None
    assert fig.layout.height >= MIN_HEIGHT


@pytest.mark.parametrize("build", [_support, _agreement], ids=["support", "agreement"])
def test_heat_maps_grow_with_their_rows_and_label_every_row(build):
    figs = [build(n) for n in SIZES]
    for fig, n in zip(figs, SIZES):
        _assert_readable(fig, n)
    heights = [f.layout.height for f in figs]
    assert heights == sorted(set(heights)), heights  # strictly taller with more rows
    # per row, not just overall: 40 rows get at least ~20 px each
    assert heights[2] - heights[1] >= 20 * (SIZES[2] - SIZES[1])


def test_a_long_row_label_is_cut_on_the_axis_but_whole_in_the_data():
    fig = _support(10, show_truth=False)
    long_id = "doc-05-with-a-much-longer-identifier-from-the-dataset"
    assert long_id in fig.data[0].y  # the hover (%{y}) keeps the whole id
    shown = fig.layout.yaxis.ticktext[5]
    assert len(shown) == LABEL_CHARS and shown.endswith("…") and long_id.startswith(shown[:-1])


def test_empty_comparisons_say_no_data_instead_of_an_empty_frame():
    for fig in (view.agreement_figure({}), view.support_figure({}, Q, True),
                view.support_figure({"a": r("a")}, Question(id="q", question="?", documents=[]), True)):
        assert not fig.data
        assert fig.layout.annotations[0].text.startswith(NO_DATA) and fig.layout.title.text


def test_method_names_slant_when_long_row_labels_leave_their_columns_too_little_room():
    """ramdocs-0007 with truth on: 'ramdocs-0007-d2 · misinformation' takes the left margin, and four method names
    side by side would run into each other (seen in Chromium: "no_ragvanilla_rag")."""
    docs = [Document(id=f"ramdocs-0007-d{i}", text="t") for i in range(1, 5)]
    q = Question(id="q", question="Who?", documents=docs)
    results = {m: r(m, ["x"]) for m in ("ra_rag", "madam", "no_rag", "vanilla_rag")}
    assert view.support_figure(results, q, show_truth=True).layout.xaxis.tickangle == -45
    assert view.agreement_figure(results).layout.xaxis.tickangle == 0  # short row labels: room enough
