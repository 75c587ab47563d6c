"""Plotly reads a little HTML in labels (<a href>, <b>, <br>): answers, source names and question ids that
reach tick labels, legend names or point text are escaped (components.ra_rag, components.dataset)."""

import html

from backend.schema import (Dataset, Document, Question, RARAGTrace, RAVote, ReliabilityEstimate, ReliabilityIteration,
                            Source, SourceReliability)
from components import dataset as dataset_view
from components import ra_rag

EVIL = '<a href="https://evil.example">x</a>'
SAFE = html.escape(EVIL)


def _strings(fig) -> list[str]:
    """Every label-like string a figure carries: trace names, x values, point text, tick labels."""
    out = []
    for d in fig.data:
        out += [d.name or ""] + [str(v) for v in (d.x or [])] + [str(v) for v in (getattr(d, "text", None) or [])]
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
