"""Retrieval preview: hits as a frame, with the truth overlay only when asked."""

from __future__ import annotations

import pandas as pd

from backend.retrieval import Hit
from backend.schema import Question
from components.dataset_view import doc_kind


def hits_frame(hits: list[Hit], question: Question, docs_by_id: dict, show_truth: bool) -> pd.DataFrame:
    own = {d.id for d in question.documents}
    rows = []
    for h in hits:
        row = {"rank": h.rank, "score": round(h.score, 3), "document": h.doc_id, "source": h.source,
               "own document": h.doc_id in own, "text": h.text[:300]}
        if show_truth:
            row["type"] = doc_kind(docs_by_id[h.doc_id]) if h.doc_id in docs_by_id else "unlabelled"
        rows.append(row)
    return pd.DataFrame(rows)
