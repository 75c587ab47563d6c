"""The retrieval index as an edited question sees it: the dataset's index without the original question's
documents, plus the edited question's own documents (embedded on the fly with the index's embedding function, and
scored with the same cosine similarity). BRIDGE's multi-query retriever and the ``retrieve`` evidence mode then find
an added or rewritten passage and no longer find a removed one, without rebuilding the dataset's index.

The base is either retriever the runner hands out: the dense index (``backend.retrieval``, ``retrieve`` mode) or
BRIDGE's BM25-then-dense corpus retriever (``backend.corpus``, ``given`` mode). The edited question's own documents
are few, so on the corpus retriever each one that shares a content word with the query (BM25 would score it above
zero) is scored densely beside the base's candidates [ours]: an edited passage competes on the cosine similarity
that decides the base's top hits, and one with no word in common is left out as BM25 would leave it out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from backend.hits import Hit
from backend.schema import Document, Question


class EditedQuestionRetriever:
    """Duck-types ``backend.retrieval.Retriever`` (``search``, ``search_many``, ``document``, ``retrieve``,
    ``evidence``) for one edited question ``question`` of the dataset question ``original``."""

    def __init__(self, base: Any, question: Question, original: str) -> None:
        self.base, self.question, self.original = base, question, original
        self.dataset = base.dataset
        self._own = {d.id: d for d in question.documents}
        self._vectors: np.ndarray | None = None

    def _own_vectors(self) -> np.ndarray:
        if self._vectors is None:
            texts = [d.text for d in self._own.values()]
            self._vectors = _unit(np.asarray(self.base.embed(texts), dtype=np.float32)) if texts else np.zeros((0, 1))
        return self._vectors

    def search(self, query: str, k: int = 3, source: str | None = None,
               exclude_question: str | None = None) -> list[Hit]:
        return self.search_many([query], k, source, exclude_question)[0]

    def search_many(self, queries: Sequence[str], k: int = 3, source: str | None = None,
                    exclude_question: str | None = None) -> list[list[Hit]]:
        if exclude_question not in (None, self.question.id, self.original):
            raise NotImplementedError("an edited question's retriever leaves out only that question's documents")
        if not queries:
            return []
        vectors = self.base.embed(queries)   # once, for the index and for the edited documents
        base = self.base.search_many(queries, k, source, exclude_question=self.original, query_vectors=vectors)
        own = [(i, d) for i, d in enumerate(self._own.values()) if source is None or d.source_name == source]
        if exclude_question is not None or not own:
            return [_ranked(hits, k) for hits in base]
        scores = _unit(np.asarray(vectors, dtype=np.float32)) @ self._own_vectors().T
        shared = self._shares_a_word(queries, [d for _, d in own])
        out = []
        for row, hits, ok in zip(scores, base, shared):
            mine = [Hit(rank=0, doc_id=d.id, question_id=self.question.id, source=d.source_name, text=d.text,
                        score=float(row[i])) for n, (i, d) in enumerate(own) if ok[n]]
            out.append(_ranked(hits + mine, k))
        return out

    def _shares_a_word(self, queries: Sequence[str], docs: list[Document]) -> list[list[bool]]:
        """Per query, which own documents may compete: all of them on the dense index; on BRIDGE's BM25-then-dense
        corpus retriever only those BM25 would score above zero (a content word in common with the query), the
        first stage every other document had to pass, so an edit that leaves a passage alone cannot change the
        hits by letting that passage skip it."""
        if not hasattr(self.base, "candidates_of"):
            return [[True] * len(docs) for _ in queries]
        from backend.corpus import tokenize

        words = [set(t) for t in tokenize([d.text for d in docs])]
        return [[bool(set(q) & w) for w in words] for q in tokenize(list(queries))]

    def document(self, doc_id: str) -> Document:
        return self._own[doc_id] if doc_id in self._own else self.base.document(doc_id)

    def retrieve(self, query: str, k: int = 3, source: str | None = None,
                 exclude_question: str | None = None) -> list[Document]:
        return [self.document(h.doc_id) for h in self.search(query, k, source, exclude_question)]

    def evidence(self, question: Question, mode: str = "given", k: int = 3, source: str | None = None):
        from backend.retrieval import evidence

        return evidence(question, mode, self, k=k, source=source)


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1, norms)


def _ranked(hits: list[Hit], k: int) -> list[Hit]:
    best = sorted(hits, key=lambda h: -h.score)[:k]  # stable: the index's order breaks ties
    return [h.model_copy(update={"rank": r}) for r, h in enumerate(best, start=1)]
