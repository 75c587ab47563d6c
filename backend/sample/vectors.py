"""The shipped sentence vectors of the bundled datasets (``sample_data/vectors/``, read by ``backend.vectors``).

What a first look embeds, computed once here instead of on every new user's machine: every document text (the
retrieval index embeds them all, in every evidence mode, for BRIDGE), every question, and the offline reader's
answer window of every (question, document) pair (the text around the passage's best answer that the reader
compares with the question: RA-RAG's stage 1 reads every pair of its calibration questions), and BRIDGE's
demonstration questions (its soft-bias allocator's pool, the same for every dataset). Windows come from the
reader's own lexical step, so a change to the reader changes them; a window the store lacks is then embedded at run
time as before (never wrong, only slower) and tests/test_vectors.py says the store is stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from backend import embeddings
from backend.schema import Question
from backend.vectors import VectorStore, text_key


def reader_window(question: str, passage: str) -> str | None:
    """The text the offline reader embeds for this pair (None when the passage holds no candidate answer)."""
    from backend.llm.reader.reader import _prepare

    return _prepare(question, passage).window


def first_look_texts(questions: Iterable[Question]) -> set[str]:
    """Every text a first look on these questions embeds: documents, questions, the reader's answer windows."""
    texts: set[str] = set()
    for q in questions:
        texts.add(q.question)
        for d in q.documents:
            texts.add(d.text)
            if (window := reader_window(q.question, d.text)) is not None:
                texts.add(window)
    return {t for t in texts if t.strip()}


def build_vectors(out_dir: Path, datasets: Iterable[list[Question]]) -> str:
    """Embed the datasets' first-look texts with the bundled model (never from an existing store) and write
    ``<out_dir>/vectors/<model>.npy|.json``; returns a summary line."""
    from backend.methods.bridge.demos import DEMOS

    texts = {question for question, _ in DEMOS}
    for questions in datasets:
        texts |= first_look_texts(questions)
    ordered = sorted(texts, key=text_key)
    identity = embeddings.identity()
    if identity["runtime"] != "onnx" or not embeddings.model_path()[1]:
        raise RuntimeError("the shipped vectors are computed by the bundled model on ONNX Runtime: unset "
                           "CONFLICTLENS_EMBEDDING_MODEL and CONFLICTLENS_EMBEDDING_RUNTIME")
    store = VectorStore(identity, [text_key(t) for t in ordered], embeddings.compute(ordered))
    paths = store.write(Path(out_dir) / "vectors", identity["model"])
    size = sum(p.stat().st_size for p in paths)
    return f"{paths[0].parent}: {len(ordered)} texts embedded by {identity['model']} ({size / 1e6:.1f} MB)"
