"""RA-RAG's views (the Sources page): pure shaping and charts of a ``RARAGTrace`` / ``ReliabilityEstimate``, and
the page's panels (``render_*``, each given the Streamlit module or a container as ``st``).

Every number comes from the trace or the stage-1 estimate; the truth overlay (document types, answer
types, true reliability) is joined in here only when asked for.
"""

from __future__ import annotations

import html
from collections import Counter

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.report.layout import AXIS_TITLE_PX, count_axis, every_category, legend_above, no_data
from backend.report.palette import KIND_COLORS, KIND_LABELS, VARIANT_COLORS, VARIANT_LABELS
from backend.report.text import plural
from backend.schema import (Dataset, Document, MethodResult, Question, RARAGTrace, RASourceAnswer, ReliabilityEstimate,
                            Source)
from backend.scoring import answer_kind, doc_kind, exact_match, reliability_vs_truth
from components.documents import render_document
from components.failures import render_failure
from components.views import View

#: this method's page (the app's view registry, ``components.views``)
VIEW = View("Sources (RA-RAG)", ":material/hub:", "sources", "pages/sources.py", method="ra_rag")

WALK_LABELS = {"selected": "✔ selected", "skipped": "⤼ skipped (IDK)", "not_queried": "∅ never queried"}
IDK_TEXT = "IDK"


#: RA-RAG's answer taxonomy (the paper's Fig. 3), by Exact Match: ``scoring.answer_kind`` with ``exact_match``.
EM_TYPES = {"gold": "correct", "wrong": "incorrect", "other": "hallucination", "unknown": "IDK"}


def answer_type(answer: str | None, question: Question) -> str:
    """correct / incorrect (a planted wrong answer) / IDK / hallucination (anything else), or no gold answers."""
    if answer is None:
        return "IDK"
    if not question.gold_answers:
        return "no gold answers"
    return EM_TYPES[answer_kind(answer, question, match=exact_match)]


def _doc_types(ids: list[str], docs_by_id: dict[str, Document]) -> str:
    kinds = Counter(KIND_LABELS[doc_kind(docs_by_id[i])] if i in docs_by_id else "unlabelled" for i in ids)
    return ", ".join(f"{k} ×{n}" for k, n in kinds.items()) or "—"


def _call_label(s: RASourceAnswer) -> str:
    if not s.queried:
        return "none (never queried)"
    if not s.called:
        return "none (no documents)"
    return "for the MV/WMV comparison only" if s.step == "compare_answer" else "yes"


def source_frame(trace: RARAGTrace, question: Question, docs_by_id: dict[str, Document], show_truth: bool,
                 true_reliability: dict[str, float | None] | None = None) -> pd.DataFrame:
    """One row per source in walk order: weight, evidence, raw answer, ROUGE-1 precision, f_align verdict."""
    status = {w.source: WALK_LABELS[w.status] for w in trace.walk}
    rows = []
    for s in trace.sources:
        row = {"rank": s.rank, "source": s.source}
        if show_truth:  # the truth columns first, where the eye is (the table is wide)
            row["true p"] = (true_reliability or {}).get(s.source)
            row["answer type (EM)"] = answer_type(s.filtered_answer, question) if s.queried else "—"
            row["document types"] = _doc_types(s.documents, docs_by_id)
        row |= {"weight v": round(s.weight, 3),
               "estimated ŵ": None if s.estimated is None else round(s.estimated, 3),
               "κ-RRSS": status.get(s.source, "—"), "documents": len(s.documents),
               "model call": _call_label(s),
               "raw answer": s.raw_answer if s.raw_answer is not None else "—",
               "ROUGE-1 P": None if s.rouge1_precision is None else round(s.rouge1_precision, 2),
               "filtered answer": s.filtered_answer if s.filtered_answer is not None
               else (IDK_TEXT if s.queried else "—"),
               "why IDK": s.filter_reason or ("never queried" if not s.queried else "")}
        rows.append(row)
    return pd.DataFrame(rows)


def walk_frame(trace: RARAGTrace) -> pd.DataFrame:
    answers = {s.source: s for s in trace.sources}
    rows = [{"order": w.rank, "source": w.source, "weight v": round(w.weight, 3), "step": WALK_LABELS[w.status],
             "filtered answer": (answers[w.source].filtered_answer or IDK_TEXT) if w.status != "not_queried"
             else "—"} for w in trace.walk]
    return pd.DataFrame(rows, columns=["order", "source", "weight v", "step", "filtered answer"])


def walk_summary(trace: RARAGTrace) -> str:
    counts = Counter(w.status for w in trace.walk)
    asked = counts["selected"] + counts["skipped"]
    text = (f"κ = {trace.kappa}: the walk asked {asked} of {plural(len(trace.walk), 'source')} "
            f"({plural(trace.walk_calls, 'model call')}; WMV over every source needs up to {len(trace.walk)}): "
            f"{counts['selected']} selected, "
            f"{counts['skipped']} skipped as IDK, {counts['not_queried']} never queried.")
    if trace.compare_calls:
        text += (f" {plural(trace.compare_calls, 'more call')} {'was' if trace.compare_calls == 1 else 'were'} "
                 "made after the walk only to show MV and WMV beside it; κ-RRSS did not use them.")
    return text


WEIGHTED = ("wmv", "rrss")


def weighting_note(trace: RARAGTrace) -> str | None:
    """Why the weighted aggregations (WMV, κ-RRSS) cannot separate answers here, if they cannot: one source, or
    every answering source weighs v = 0 (scores all 0, so the 'winner' is only the tie rule's pick)."""
    if trace.per_document:
        return None
    if len(trace.sources) == 1:
        return ("One source: weighting cannot separate anything; MV, WMV and κ-RRSS all return that source's "
                "answer.")
    voters = [s for s in trace.sources if s.cluster is not None]
    if voters and all(round(s.weight, 9) == 0 for s in voters):
        return ("Every source that answered weighs v = 0, so WMV and κ-RRSS score every answer 0: weighting cannot "
                "separate them, and the answer shown for them is the tie rule's (source order), not a weighted "
                "choice.")
    return None


VOTES_TITLE = "Votes per answer: MV vs WMV vs RA-RAG (κ-RRSS)"


def votes_figure(trace: RARAGTrace) -> go.Figure:
    """Grouped bars: each answer cluster's score under MV (count), WMV and κ-RRSS (Σ v)."""
    fig = go.Figure()
    # answers are model output and plotly reads a little HTML in labels: escape them
    answers = [html.escape(v.answer) for v in trace.votes]
    top = 0.0
    for variant in ("mv", "wmv", "rrss", "oracle_wmv"):
        values = [getattr(v, variant) for v in trace.votes]
        if not answers or all(x is None for x in values):
            continue
        winner = trace.answers.get(variant)
        top = max([top] + [x for x in values if x is not None])
        picked = html.escape(winner) if winner else IDK_TEXT
        if variant in WEIGHTED and weighting_note(trace):
            picked = "no separation (weights cannot decide)"
        fig.add_bar(name=f"{VARIANT_LABELS[variant]} → {picked}", x=answers,
                    y=[x or 0.0 for x in values], marker_color=VARIANT_COLORS[variant],
                    text=[f"{x:.2f}" if x is not None else "" for x in values], textposition="outside")
    if not fig.data:
        return no_data(VOTES_TITLE, "no source gave an answer (all IDK or never asked), so nothing was voted on")
    fig.update_layout(barmode="group", title=VOTES_TITLE, legend_title="aggregation → winner", height=400,
                      margin=dict(b=AXIS_TITLE_PX + 30, l=AXIS_TITLE_PX + 30, r=10))
    # "1911" is an answer, not a position on a number line: categories, each one labelled
    fig.update_xaxes(title="answer cluster (normalised filtered answers)", **every_category(answers))
    fig.update_yaxes(title="score (MV: votes; WMV, κ-RRSS: Σ weights v)", automargin=True,
                     range=[0, 1.15 * (top or 1)])  # headroom for the value printed above the tallest bar
    fig.add_hline(y=0, line_color="#616161", line_width=1)
    return legend_above(fig)


def reliability_report(est: ReliabilityEstimate, sources: list[Source], show_truth: bool) -> dict:
    """``scoring.reliability_vs_truth`` with the truth left out unless the overlay is on."""
    return reliability_vs_truth(est, sources if show_truth else [])


def reliability_frame(report: dict, show_truth: bool) -> pd.DataFrame:
    rows = [{"source": s["name"], "estimated ŵ": s["estimated"],
             **({"true p": s["true_reliability"], "|ŵ − p|": s["abs_error"]} if show_truth else {}),
             "weight v": s["weight"], "answered": s["answered"], "agreed with ŷ": s["agreed"], "IDK": s["idk"],
             "no documents": s["no_documents"]} for s in report["sources"]]
    return pd.DataFrame(rows)


def reliability_figure(report: dict, show_truth: bool) -> go.Figure:
    """Estimated vs true reliability with the y = x line (truth overlay), else estimated ŵ per source."""
    rows = [s for s in report["sources"] if s["estimated"] is not None]
    if not rows:
        return no_data("Estimated source reliability", "no source answered a calibration question, so none has "
                       "an estimate")
    fig = go.Figure()
    fig.update_layout(height=420, margin=dict(b=AXIS_TITLE_PX + 30, l=AXIS_TITLE_PX + 30, r=10))
    fig.update_yaxes(range=[-0.02, 1.05], automargin=True)
    fig.update_xaxes(automargin=True)
    if show_truth and any(s["true_reliability"] is not None for s in rows):
        known = [s for s in rows if s["true_reliability"] is not None]
        fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", name="y = x (perfect estimate)",
                        line=dict(color=KIND_COLORS["noise"], dash="dash"))
        fig.add_scatter(x=[s["true_reliability"] for s in known], y=[s["estimated"] for s in known],
                        mode="markers+text", text=[html.escape(s["name"]) for s in known], textposition="top center",
                        marker=dict(size=11, color=KIND_COLORS["external"]), name="source")
        mae, r = report["mae"], report["pearson_r"]
        fig.update_layout(title=f"Estimated vs true source reliability (MAE {_fmt(mae)}, Pearson r {_fmt(r)})",
                          xaxis_title="true reliability p (ground truth)", yaxis_title="estimated reliability ŵ")
        fig.update_xaxes(range=[-0.02, 1.02])
        return legend_above(fig)
    names = [html.escape(s["name"]) for s in rows]
    fig.add_bar(x=names, y=[s["estimated"] for s in rows], marker_color=KIND_COLORS["external"], name="ŵ",
                showlegend=False)
    fig.update_layout(title="Estimated source reliability ŵ (turn on ground truth to compare with the truth)",
                      xaxis_title="source", yaxis_title="estimated reliability ŵ")
    fig.update_xaxes(**every_category(names))
    return fig


def convergence_figure(est: ReliabilityEstimate) -> go.Figure:
    """ŵ per source after each stage-1 iteration, and how many pseudo-labels changed (right axis)."""
    title = "Stage 1 convergence"
    if not est.history:
        return no_data(title, "stage 1 recorded no iterations")
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    its = [h.iteration for h in est.history]
    changed = [h.changed for h in est.history]
    fig.add_bar(x=its, y=changed, name="pseudo-labels changed", marker_color=KIND_COLORS["noise"], opacity=0.35,
                secondary_y=True)
    for i, s in enumerate(est.sources):
        fig.add_scatter(x=its, y=[h.estimated[i] for h in est.history], mode="lines+markers", name=html.escape(s.name),
                        secondary_y=False)
    state = "converged" if est.converged else "stopped at a cycle" if est.cycle else "hit the iteration limit"
    fig.update_layout(title=f"{title}: {plural(est.iterations, 'iteration')} ({state})", height=420, legend_title="source",
                      margin=dict(b=AXIS_TITLE_PX + 20, l=AXIS_TITLE_PX + 30, r=AXIS_TITLE_PX + 30))
    fig.update_xaxes(title_text="iteration", automargin=True, **count_axis(max(its), from_zero=False))
    fig.update_yaxes(title_text="estimated reliability ŵ", automargin=True, secondary_y=False)
    # the right axis counts questions: whole-number ticks of its own, no second grid over the first
    fig.update_yaxes(title_text="pseudo-labels changed (questions)", automargin=True, showgrid=False,
                     secondary_y=True, **count_axis(max(changed)))
    return legend_above(fig)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


# --- panels ------------------------------------------------------------------------------------------

def render_question(st, result: MethodResult, ds: Dataset, question: Question, show_truth: bool, page: str) -> None:
    """One question's RA-RAG run: the answer per aggregation, per-source answers, documents, the κ-RRSS walk."""
    t = result.trace
    if result.error or t is None:
        render_failure(st, "RA-RAG failed on this question:", result.error, missing="no trace")
        return
    st.subheader("Answer")
    cols = st.columns(len(t.answers))
    note = weighting_note(t)
    for col, (variant, answer) in zip(cols, t.answers.items()):
        col.caption(VARIANT_LABELS[variant])  # our label; the answer is model output: plain text, not st.metric
        col.text(answer or IDK_TEXT)
        if note and variant in WEIGHTED:
            col.caption("tie: weights cannot decide")
    if note:
        st.info(note)
    st.text(f"Weights: {t.weights_note}")
    for note in t.notes:
        if note != t.weights_note:  # the method also files its weighting note among the notes: say it once
            st.text(f"Note: {note}")
    if show_truth:
        st.text(f"Gold answers: {'; '.join(question.gold_answers) or '—'}")
    st.subheader("Per-source answers")
    docs_by_id = {d.id: d for _, d in ds.documents()}
    truth = {s.name: s.true_reliability for s in ds.sources}
    st.dataframe(source_frame(t, question, docs_by_id, show_truth, truth), hide_index=True)
    with st.expander("Documents each source gave the model"):
        for s in (s for s in t.sources if s.documents):
            st.text(f"{s.rank}. {s.source}")
            for doc_id in s.documents:
                if doc_id in docs_by_id:
                    render_document(st, docs_by_id[doc_id], show_truth, key_prefix=f"{page}.{s.source}")
    if t.walk:
        st.subheader("κ-RRSS walk")
        st.caption("Sources in descending weight: IDK sources are skipped; the walk stops at κ selected sources.")
        st.text(walk_summary(t))
        st.dataframe(walk_frame(t), hide_index=True)
    st.plotly_chart(votes_figure(t), key=f"{page}.votes")


def render_dataset(st, est: ReliabilityEstimate, ds: Dataset, show_truth: bool, page: str) -> None:
    """Stage 1 over the dataset: estimated (and, on request, true) reliability per source, convergence."""
    st.subheader("Source reliability over the dataset (stage 1)")
    st.text(f"{plural(est.questions, 'unlabelled calibration question')} · evidence {est.evidence_mode} · "
            f"{plural(est.calls, 'model call')} ({est.cache_hits:,} cached) · {plural(est.iterations, 'iteration')}")
    report = reliability_report(est, ds.sources, show_truth)
    st.dataframe(reliability_frame(report, show_truth), hide_index=True)
    st.plotly_chart(reliability_figure(report, show_truth), key=f"{page}.reliability")
    st.plotly_chart(convergence_figure(est), key=f"{page}.convergence")
