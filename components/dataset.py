"""Dataset page shaping and charts: pure functions of a ``Dataset``/``Question``."""

from __future__ import annotations

import html
from collections import Counter
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go

from backend.report.layout import AXIS_TITLE_PX, count_axis, every_category, label_px, legend_above, no_data
from backend.report.palette import KIND_COLORS, KIND_LABELS, KIND_ORDER
from backend.schema import Dataset, Document, Question
from backend.scoring import doc_kind

if TYPE_CHECKING:  # chromadb is heavy: the sidebar imports this module
    from backend.retrieval import Hit


def question_table(ds: Dataset) -> pd.DataFrame:
    rows = [{"id": q.id, "question": q.question, "documents": len(q.documents),
             "sources": len({d.source_name for d in q.documents})} for q in ds.questions]
    return pd.DataFrame(rows, columns=["id", "question", "documents", "sources"])


def question_label(q: Question, mark: str = "") -> str:
    """How a question appears in the picker: its mark first when it has one (``backend.cases.mark``: "≠3 ✓ 1/7"),
    then id and text (searchable by either)."""
    return f"{mark} · {q.id} — {q.question}" if mark else f"{q.id} — {q.question}"


def documents_by_source(q: Question) -> dict[str, list[Document]]:
    """The question's documents grouped by source, in order of first appearance."""
    groups: dict[str, list[Document]] = {}
    for d in q.documents:
        groups.setdefault(d.source_name, []).append(d)
    return groups


def source_table(ds: Dataset, show_truth: bool) -> pd.DataFrame:
    """One row per named source: documents held, questions covered, and (truth overlay) p_i and r_i."""
    docs = Counter(d.source for _, d in ds.documents() if d.source)
    questions = Counter(s for q in ds.questions for s in {d.source for d in q.documents if d.source})
    known = {s.name: s for s in ds.sources}
    rows = []
    for name in ds.source_names():
        row = {"source": name, "documents": docs.get(name, 0), "questions covered": questions.get(name, 0)}
        if show_truth:
            src = known.get(name)
            row["true reliability"] = src.true_reliability if src else None
            row["coverage"] = src.coverage if src else None
        rows.append(row)
    return pd.DataFrame(rows)


def type_counts(ds: Dataset, show_truth: bool = True) -> pd.DataFrame:
    """Documents per (group, type); the group is the source, or the question when documents name no source.

    Without the truth overlay every document counts as ``unlabelled``: the type is ground truth.
    """
    by_source = ds.multi_source
    counts: Counter[tuple[str, str]] = Counter()
    for q, d in ds.documents():
        counts[(d.source_name if by_source else q.id, doc_kind(d) if show_truth else "unlabelled")] += 1
    rows = [{"group": g, "type": t, "documents": n} for (g, t), n in counts.items()]
    return pd.DataFrame(rows, columns=["group", "type", "documents"])


#: Up to this many groups every one is labelled on the x axis; beyond it plotly labels a readable subset.
LABELLED_GROUPS = 40


def docs_per_type_figure(ds: Dataset, show_truth: bool = True) -> go.Figure:
    """Stacked bars of documents per type, per source (or per question for source-less datasets)."""
    frame = type_counts(ds, show_truth)
    by_source = ds.multi_source
    axis = "source" if by_source else "question (each document is its own source)"
    what = "Documents per type" if show_truth else "Documents (types hidden: turn on ground truth)"
    title = f"{what} per {axis.split(' ')[0]}"
    if frame.empty:
        return no_data(title, "the dataset has no documents")
    groups = ds.source_names() if by_source else [q.id for q in ds.questions]
    # source names / question ids are data and plotly reads a little HTML in labels: escape them
    labels = [html.escape(g) for g in groups]
    fig = go.Figure()
    for kind in KIND_ORDER:
        part = frame[frame["type"] == kind].set_index("group")["documents"]
        if part.empty:
            continue
        fig.add_bar(name=KIND_LABELS[kind], x=labels, y=[int(part.get(g, 0)) for g in groups],
                    marker_color=KIND_COLORS[kind])
    fig.update_layout(barmode="stack", title=title, legend_title="document type", height=380 + label_px(labels) // 2,
                      margin=dict(b=AXIS_TITLE_PX + 20, l=AXIS_TITLE_PX + 30, r=10))
    # ids like "1911" are names, not positions on a number line
    x = every_category(labels) if len(labels) <= LABELLED_GROUPS else dict(type="category", automargin=True)
    fig.update_xaxes(title=axis, **x)
    fig.update_yaxes(title="documents (count)", automargin=True,
                     **count_axis(frame.groupby("group")["documents"].sum().max()))
    return legend_above(fig)


# --- retrieval preview: hits as a frame, with the truth overlay only when asked -----------------------

def hits_frame(hits: list[Hit], question: Question, docs_by_id: dict, show_truth: bool) -> pd.DataFrame:
    own = {d.id for d in question.documents}
    rows = []
    for h in hits:
        row = {"rank": h.rank, "score": round(h.score, 3), "document": h.doc_id}
        if show_truth:  # before the long text, where the eye is
            row["type"] = doc_kind(docs_by_id[h.doc_id]) if h.doc_id in docs_by_id else "unlabelled"
        row |= {"source": h.source, "own document": h.doc_id in own, "text": h.text[:300]}
        rows.append(row)
    return pd.DataFrame(rows)
