"""Sources page shaping (components/ra_rag.py) on the paper's Fig. 3 example, without Streamlit."""

import pytest

from backend.llm.providers import scripted
from backend.methods.ra_rag import RARAG
from backend.report.layout import NO_DATA
from backend.schema import ReliabilityEstimate, ReliabilityIteration, Source, SourceReliability
from components import ra_rag as view
from tests.methods.test_ra_rag import FIG3, _fig3_estimate, _fig3_question, _fig3_reply, _scripted_ctx
from tests.test_report_layout import assert_legend_clear_of_axis_titles


@pytest.fixture(scope="module")
def fig3():
    with scripted({"keyword_answer": _fig3_reply}):
        result = RARAG(compare_all=True).run(_fig3_question(), _scripted_ctx(_fig3_estimate()))
    return _fig3_question(), result.trace


def test_source_frame_and_truth_overlay(fig3):
    question, trace = fig3
    frame = view.source_frame(trace, question, {}, show_truth=False)
    assert list(frame["source"]) == ["S2", "S4", "S6", "S3", "S5", "S1"]
    assert list(frame["filtered answer"])[3] == "IDK" and list(frame["why IDK"])[3] == "model said I don't know"
    assert list(frame["κ-RRSS"])[-1] == "∅ never queried" and "true p" not in frame.columns
    assert list(frame["model call"]) == ["yes"] * 5 + ["for the MV/WMV comparison only"]
    truth = {s: p for s, (_, p, _) in FIG3.items()}
    frame = view.source_frame(trace, question, {}, show_truth=True, true_reliability=truth)
    assert list(frame["true p"]) == [0.97, 0.78, 0.79, 0.55, 0.53, 0.39]
    assert list(frame["answer type (EM)"]) == ["correct", "hallucination", "hallucination", "IDK", "hallucination",
                                          "hallucination"]


def test_walk_and_votes(fig3):
    _, trace = fig3
    walk = view.walk_frame(trace)
    assert list(walk["step"]) == ["✔ selected"] * 3 + ["⤼ skipped (IDK)", "✔ selected", "∅ never queried"]
    summary = view.walk_summary(trace)
    assert "asked 5 of 6 sources (5 model calls" in summary and "1 more call was made" in summary
    fig = view.votes_figure(trace)
    bars = {d.name: dict(zip(d.x, d.y)) for d in fig.data}
    assert set(bars) == {"MV → southern ocean", "WMV → atlantic ocean", "RA-RAG (κ-RRSS) → atlantic ocean"}
    assert bars["WMV → atlantic ocean"] == pytest.approx(
        {"atlantic ocean": 4.52, "indian ocean": 3.92, "gulf of mexico": 3.56, "southern ocean": 3.40})
    assert bars["RA-RAG (κ-RRSS) → atlantic ocean"]["southern ocean"] == pytest.approx(2.24)
    assert fig.layout.title.text and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_reliability_figures():
    est = ReliabilityEstimate(
        sources=[SourceReliability(name="a", estimated=0.8, weight=0.6, answered=10, agreed=8),
                 SourceReliability(name="b", estimated=None, weight=0.0)],
        questions=10, iterations=2, converged=True,
        history=[ReliabilityIteration(iteration=1, weights=[0.4, 0.0], estimated=[0.7, None], changed=10),
                 ReliabilityIteration(iteration=2, weights=[0.6, 0.0], estimated=[0.8, None], changed=0)])
    truth = [Source(name="a", true_reliability=0.9), Source(name="b", true_reliability=0.2)]
    report = view.reliability_report(est, truth, show_truth=True)
    assert report["mae"] == pytest.approx(0.1) and report["pearson_r"] is None  # one pair: no r
    scatter = view.reliability_figure(report, show_truth=True)
    assert list(scatter.data[0].x) == [0, 1] and list(scatter.data[1].text) == ["a"]  # "b" has no estimate
    assert scatter.layout.xaxis.title.text == "true reliability p (ground truth)"
    assert_legend_clear_of_axis_titles(scatter)
    hidden = view.reliability_report(est, truth, show_truth=False)
    assert all(s["true_reliability"] is None for s in hidden["sources"])
    assert "true p" not in view.reliability_frame(hidden, show_truth=False).columns
    assert view.reliability_figure(hidden, show_truth=False).data[0].type == "bar"
    conv = view.convergence_figure(est)
    assert [d.name for d in conv.data] == ["pseudo-labels changed", "a", "b"]
    assert list(conv.data[1].y) == [0.7, 0.8] and conv.layout.title.text.startswith("Stage 1 convergence: 2 iter")


def test_votes_figure_labels_every_answer_and_keeps_its_legend_clear(fig3):
    _, trace = fig3
    fig = view.votes_figure(trace)
    x = fig.layout.xaxis
    assert x.tickmode == "array" and list(x.tickvals) == list(fig.data[0].x) and x.automargin
    assert fig.layout.yaxis.automargin and fig.layout.margin.b >= 40  # room for the x axis title
    assert fig.layout.yaxis.range[1] > max(max(d.y) for d in fig.data)  # room for the value above the tallest bar
    assert_legend_clear_of_axis_titles(fig)


def _history(sources: int) -> ReliabilityEstimate:
    names = [f"source-{i}" for i in range(sources)]
    return ReliabilityEstimate(
        sources=[SourceReliability(name=n, estimated=0.5, weight=0.0) for n in names], questions=163, iterations=3,
        converged=True, history=[ReliabilityIteration(iteration=i, weights=[0.0] * sources, estimated=[0.5] * sources,
                                                      changed=c) for i, c in ((1, 163), (2, 7), (3, 0))])


def test_convergence_counts_in_whole_numbers_and_its_legend_never_covers_an_axis_title():
    figs = [view.convergence_figure(_history(n)) for n in (1, 10, 40)]
    for fig in figs:
        changed, iteration = fig.layout.yaxis2, fig.layout.xaxis
        assert changed.title.text == "pseudo-labels changed (questions)"  # the right axis counts questions
        assert changed.tickformat == "d" and changed.tickmode == "linear" and changed.dtick == int(changed.dtick) >= 1
        assert iteration.tickformat == "d" and iteration.dtick == 1 and iteration.title.text == "iteration"
        assert changed.automargin and fig.layout.yaxis.automargin and fig.layout.margin.r >= 40
        assert_legend_clear_of_axis_titles(fig)  # a legend on the right sat on the right axis's title
    heights = [f.layout.height for f in figs]
    assert heights == sorted(heights) and heights[0] < heights[-1]  # 40 sources: a taller legend, same plot


def test_charts_with_nothing_to_draw_say_so(fig3):
    _, trace = fig3
    nothing = ReliabilityEstimate(sources=[SourceReliability(name="a", estimated=None, weight=0.0)], questions=0,
                                  iterations=0, converged=False, history=[])
    for fig in (view.votes_figure(trace.model_copy(update={"votes": []})),
                view.reliability_figure(view.reliability_report(nothing, [], False), show_truth=False),
                view.convergence_figure(nothing)):
        assert not fig.data and fig.layout.title.text
        assert fig.layout.annotations[0].text.startswith(NO_DATA)


# --- panels, rendered alone with AppTest.from_function ------------------------------------------------------

def _question_panel(result_json: str, show_truth: bool):
    import streamlit as st

    from backend.schema import Dataset, MethodResult
    from components.ra_rag import render_question
    from tests.methods.test_ra_rag import _fig3_question

    q = _fig3_question()
    render_question(st, MethodResult.model_validate_json(result_json), Dataset(name="fig3", path="-", questions=[q]),
                    q, show_truth, "test")


def test_question_panel_renders_alone(fig3):
    from streamlit.testing.v1 import AppTest

    from backend.schema import MethodResult

    question, trace = fig3
    result = MethodResult(method="ra_rag", question_id=question.id, answers=[trace.final_answer], trace=trace)
    at = AppTest.from_function(_question_panel, args=(result.model_dump_json(), False))
    at.run()
    assert not at.exception, at.exception
    assert [h.value for h in at.subheader] == ["Answer", "Per-source answers", "κ-RRSS walk"]
    assert [c.value for c in at.caption][:3] == ["MV", "WMV", "RA-RAG (κ-RRSS)"]
    assert "atlantic ocean" in [t.value for t in at.text][:3]
    failed = MethodResult(method="ra_rag", question_id=question.id, error="model call failed: <b>x</b>")
    at = AppTest.from_function(_question_panel, args=(failed.model_dump_json(), False))
    at.run()
    assert at.error[0].value == "RA-RAG failed on this question:" and at.text[0].value == "model call failed: <b>x</b>"


def test_weighting_that_cannot_separate_says_so(fig3):
    _, trace = fig3
    assert view.weighting_note(trace) is None  # Fig. 3's weights do separate the answers
    zero = trace.model_copy(deep=True)
    for s in zero.sources:
        s.weight = 0.0
    for v in zero.votes:
        v.wmv = v.rrss = 0.0
    assert "cannot separate" in view.weighting_note(zero)
    names = [d.name for d in view.votes_figure(zero).data]
    assert "WMV → no separation (weights cannot decide)" in names and "MV → southern ocean" in names
    one = trace.model_copy(update={"sources": trace.sources[:1]})
    assert view.weighting_note(one).startswith("One source")
    assert view.weighting_note(trace.model_copy(update={"per_document": True})) is None


def test_truth_columns_come_first_when_asked(fig3):
    question, trace = fig3
    frame = view.source_frame(trace, question, {}, show_truth=True, true_reliability={})
    assert list(frame.columns)[:5] == ["rank", "source", "true p", "answer type (EM)", "document types"]
    assert "true p" not in view.source_frame(trace, question, {}, show_truth=False).columns
