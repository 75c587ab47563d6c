"""The side-by-side comparison of one question's results (pure): the table, the agreement between methods, and
which documents each answer rests on. Shared by the Inspect page and the HTML report."""

from __future__ import annotations

import html
import math

import pandas as pd
import plotly.graph_objects as go

from backend.agreement import agree
from backend.cost import cost_text
from backend.llm.failures import classify_failure
from backend.report.layout import no_data, size_heatmap
from backend.report.palette import KIND_COLORS, KIND_LABELS
from backend.report.paper import own_metric_cell
from backend.schema import MethodResult, Question
from backend.scoring import doc_kind, strict_em, verdict


def tokens(result: MethodResult) -> int:
    return sum(c.prompt_tokens + c.completion_tokens for c in result.calls)


#: The truth columns of ``results_frame``, after the method: the lenient verdict, the lenient all-gold test (every
#: gold answer and no wrong one by ``answers.names``: none of the papers' rules) and the method's own paper's metric.
LENIENT_ALL_GOLD = "all gold, no wrong (lenient)"
OWN_METRIC = "its paper's metric"


def results_frame(results: dict[str, MethodResult], question: Question, show_truth: bool) -> pd.DataFrame:
    """One row per method (keyed by any name: a display title too; the method is the result's). The truth columns
    (the verdict and the all-gold test, both the project's lenient match, then the method's own paper's metric under
    the paper's name: "EM (SQuAD): no") come right after the method, where the eye is; a method's dataset-level
    preparation (RA-RAG's stage 1) is counted apart from the question's calls."""
    rows = []
    prepared = any(r.preparation for r in results.values())
    for name, r in results.items():
        row = {"method": name}
        if show_truth:
            row["verdict"] = verdict(r, question)
            row[LENIENT_ALL_GOLD] = strict_em(r.answers, question.gold_answers, question.wrong_answers)
            row[OWN_METRIC] = own_metric_cell(r, question)
        row |= {"answers": "; ".join(r.answers) or "—", "abstained": r.abstained,
                "calls": len(r.calls), "uncached": sum(not c.cache_hit for c in r.calls), "tokens": tokens(r),
                "cost": cost_text(r.calls), "wall s": round(r.wall_s, 3)}
        if prepared:
            row["dataset-level calls"] = r.preparation.calls if r.preparation else 0
            row["dataset-level s"] = round(r.preparation.seconds, 3) if r.preparation else 0.0
        row["error"] = classify_failure(r.error).problem if r.error else ""
        rows.append(row)
    return pd.DataFrame(rows)


def agreement_matrix(results: dict[str, MethodResult]) -> pd.DataFrame:
    """Methods x methods: 1 where their answer sets match (``backend.agreement.agree``), 0 where not, NaN where
    either failed."""
    names = list(results)

    def cell(a: MethodResult, b: MethodResult) -> float:
        same = agree(a, b)
        return math.nan if same is None else float(same)
    return pd.DataFrame([[cell(results[r], results[c]) for c in names] for r in names], index=names, columns=names)


AGREEMENT_TITLE = "Agreement between methods"
#: What agreement means (``backend.agreement``), under the title: one line of its own, so a narrow column cuts neither
AGREEMENT_MEANING = "same answer set; abstaining counts as an answer"
SUBTITLE_PX = 20
SUPPORT_TITLE = "Which documents each method's answer rests on"


def agreement_figure(results: dict[str, MethodResult]) -> go.Figure:
    if not results:
        return no_data(AGREEMENT_TITLE, "no method has run on this question yet")
    m = agreement_matrix(results)
    text = [["agree" if v == 1 else "differ" if v == 0 else "error" for v in row] for row in m.values]
    fig = go.Figure(go.Heatmap(z=m.values, x=list(m.columns), y=list(m.index), zmin=0, zmax=1, text=text,
                               texttemplate="%{text}", colorscale=[[0, "#f4cccc"], [1, "#c8e6c9"]], showscale=False))
    fig.update_layout(title=dict(text=AGREEMENT_TITLE, subtitle=dict(text=AGREEMENT_MEANING)),
                      xaxis_title="method", yaxis_title="method")
    fig = size_heatmap(fig, row_px=40)  # cells carry a word: taller rows than the support map
    return fig.update_layout(height=fig.layout.height + SUBTITLE_PX, margin_t=fig.layout.margin.t + SUBTITLE_PX)


def support_matrix(results: dict[str, MethodResult], question: Question) -> pd.DataFrame:
    """Documents x methods: 1 where a method's final answer rests on the document."""
    docs = [d.id for d in question.documents]
    data = {name: [int(any(d in ids for ids in r.support.values())) for d in docs] for name, r in results.items()}
    return pd.DataFrame(data, index=docs)


def support_figure(results: dict[str, MethodResult], question: Question, show_truth: bool) -> go.Figure:
    if not results or not question.documents:
        why = "the question has no documents" if results else "no method has run on this question yet"
        return no_data(SUPPORT_TITLE, why)
    m = support_matrix(results, question)
    kinds = {d.id: doc_kind(d) for d in question.documents}
    # plotly reads a little HTML in labels: escape ids that come from the dataset
    labels = [html.escape(f"{d} · {KIND_LABELS[kinds[d]]}" if show_truth else d) for d in m.index]
    # "not used" is light grey, not white: an empty cell must still show against the page
    fig = go.Figure(go.Heatmap(z=m.values, x=list(m.columns), y=labels, zmin=0, zmax=1, showscale=False,
                               colorscale=[[0, "#eceff1"], [1, KIND_COLORS["external"]]], xgap=2, ygap=2,
                               hovertemplate="%{y}<br>%{x}: %{z}<extra></extra>"))
    fig.update_layout(title=SUPPORT_TITLE, xaxis_title="method",
                      yaxis_title="document" + (" · true type" if show_truth else ""))
    return size_heatmap(fig, row_px=24)
