"""Render documents safely: untrusted text goes through ``st.text`` (no Markdown, no HTML)."""

from __future__ import annotations

from backend.report.palette import BADGE_COLORS, KIND_LABELS
from backend.schema import Document
from backend.scoring import doc_kind
from components.safe import md

#: Show this many characters of a document before "show all" (long documents stay whole on request).
PREVIEW_CHARS = 1_500


def render_document(st, doc: Document, show_truth: bool, *, key_prefix: str) -> None:
    """One document: id, optional truth badge, text (truncated preview with a toggle for long ones)."""
    st.caption(f"{md(doc.id)} · source {md(doc.source_name)}")  # Markdown: ids escaped
    if show_truth:
        # the badge is Markdown underneath, so it carries only our fixed kind name; the answer is data
        kind = doc_kind(doc)
        with st.container(horizontal=True):
            st.badge(KIND_LABELS[kind], color=BADGE_COLORS[kind])
            if doc.label and doc.label.answer:
                st.text(f"supports: {doc.label.answer}")
    text = doc.text
    if len(text) > PREVIEW_CHARS:
        full = st.toggle(f"show all {len(text):,} characters", key=f"{key_prefix}.{doc.id}.full")
        if not full:
            text = text[:PREVIEW_CHARS] + " …"
    st.text(text)
