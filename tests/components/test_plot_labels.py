"""Plotly reads a little HTML in labels (<a href>, <b>, <br>): answers, source names and question ids that
reach tick labels, legend names or point text are escaped (components.ra_rag, components.dataset,
backend.report.compare). And the labels stay readable: every category labelled, counts in whole numbers."""

import html

from backend.report import compare
from backend.report.layout import NO_DATA
from backend.schema import (Dataset, Document, Question, RARAGTrace, RAVote, ReliabilityEstimate, ReliabilityIteration,
                            Source, SourceReliability)
from components import dataset as dataset_view
from components import ra_rag
from tests.test_report_layout import assert_legend_clear_of_axis_titles
from tests.test_scoring import r

EVIL = '<a href="https://evil.example">x</a>'
SAFE = html.escape(EVIL)


def _strings(fig) -> list[str]:
    """Every label-like string a figure carries: trace names, x and y values, point text, tick labels."""
    out = []
    for d in fig.data:
        values = [*(d.x or []), *(d.y or []), *(getattr(d, "text", None) or [])]
        out += [d.name or ""] + [str(v) for v in values]
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        out += [str(v) for v in (axis.ticktext or [])]
    return out


def _assert_escaped(fig) -> None:
    strings = _strings(fig)
    assert any(SAFE in s for s in strings), strings
    assert not any("<a" in s for s in strings), strings


def _trace(answers, votes) -> RARAGTrace:
    return RARAGTrace(variant="rrss", evidence_mode="given", kappa=1, top_k=3, align_threshold=0.5,
                      clustering="exact", weights_note="", sources=[], answers=answers, votes=votes)


def test_votes_figure_escapes_answers_and_keeps_numbers_categorical():
    votes = [RAVote(answer=EVIL, cluster="x", sources=["s1"], mv=1, wmv=0.4, rrss=0.4),
             RAVote(answer="1911", cluster="1911", sources=["s2"], mv=1, wmv=0.9, rrss=0.9)]
    fig = ra_rag.votes_figure(_trace({"mv": EVIL, "wmv": "1911", "rrss": "1911"}, votes))
    _assert_escaped(fig)
    assert fig.data[0].name == f"MV → {SAFE}" and list(fig.data[0].x) == [SAFE, "1911"]
    assert fig.layout.xaxis.type == "category"  # "1911" is an answer, not a position on a number line


def _estimate(names) -> ReliabilityEstimate:
    return ReliabilityEstimate(
        sources=[SourceReliability(name=n, estimated=0.5, weight=0.0, answered=2, agreed=1) for n in names],
        questions=2, iterations=1, converged=True,
        history=[ReliabilityIteration(iteration=1, weights=[0.0] * len(names), estimated=[0.5] * len(names),
                                      changed=2)])


def test_reliability_and_convergence_figures_escape_source_names():
    est = _estimate([EVIL, "plain"])
    truth = [Source(name=EVIL, true_reliability=0.6), Source(name="plain", true_reliability=0.4)]
    for show_truth in (False, True):
        report = ra_rag.reliability_report(est, truth, show_truth)
        _assert_escaped(ra_rag.reliability_figure(report, show_truth))
    _assert_escaped(ra_rag.convergence_figure(est))


def test_documents_per_type_figure_escapes_sources_and_question_ids():
    def ds(source):
        doc = Document(id="d1", source=source, text="t")
        return Dataset(name="x", path="x", questions=[Question(id=EVIL, question="q?", documents=[doc])])

    for dataset in (ds(EVIL), ds(None)):  # grouped by source; by question id when documents name no source
        fig = dataset_view.docs_per_type_figure(dataset, show_truth=False)
        _assert_escaped(fig)
        assert fig.layout.xaxis.type == "category"


def test_heat_map_row_labels_escape_document_ids():
    question = Question(id="q", question="q?", documents=[Document(id=EVIL, text="t"), Document(id="d2", text="t")])
    fig = compare.support_figure({"a": r("a", ["x"], support={"x": [EVIL]})}, question, show_truth=False)
    _assert_escaped(fig)
    assert list(fig.layout.yaxis.ticktext) == [SAFE, "d2"]  # cut at 40 characters of text, never mid-entity


def _by_source(groups: int) -> Dataset:
    docs = [Document(id=f"d{i}-{j}", source=f"source-{i:02d}", text="t")
            for i in range(groups) for j in range(i % 4 + 1)]  # 1 to 4 documents per source
    return Dataset(name="x", path="x", questions=[Question(id="q", question="q?", documents=docs)])


def test_documents_per_type_labels_every_source_counts_whole_documents_and_keeps_the_legend_clear():
    for groups in (1, 10, 40):
        fig = dataset_view.docs_per_type_figure(_by_source(groups), show_truth=True)
        x, y = fig.layout.xaxis, fig.layout.yaxis
        assert x.tickmode == "array" and list(x.tickvals) == [f"source-{i:02d}" for i in range(groups)]
        assert y.tickformat == "d" and y.dtick == int(y.dtick) >= 1 and y.title.text == "documents (count)"
        assert x.automargin and y.automargin and x.title.text
    # more groups than can be read side by side: plotly picks which to label
    assert dataset_view.docs_per_type_figure(_by_source(60)).layout.xaxis.tickmode is None
    two_kinds = Dataset(name="x", path="x", questions=[Question(id="q", question="q?", documents=[
        Document(id="a", source="s", text="t", label={"type": "correct"}),
        Document(id="b", source="s", text="t", label={"type": "noise"})])])
    assert_legend_clear_of_axis_titles(dataset_view.docs_per_type_figure(two_kinds, show_truth=True))


def test_documents_per_type_without_documents_says_so():
    empty = Dataset(name="x", path="x", questions=[Question(id="q", question="q?", documents=[])])
    fig = dataset_view.docs_per_type_figure(empty)
    assert not fig.data and fig.layout.annotations[0].text.startswith(NO_DATA)
