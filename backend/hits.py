"""One retrieved document (``Hit``) and the document look-ups every retriever offers (``DocumentLookup``), shared by the
dense index (``backend.retrieval``), BRIDGE's corpus retriever (``backend.corpus``) and the what-if overlay; a module
of its own so that using a hit never imports chromadb."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from backend.schema import Document, Question


class Hit(BaseModel):
    """One retrieved document. ``score`` is the cosine similarity of the query's and the document's MiniLM vectors
    (``backend.retrieval``: 1 - cosine distance in the index; ``backend.corpus``: computed on the candidates)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: int  # 1-based
    doc_id: str
    question_id: str
    source: str
    text: str
    score: float


class DocumentLookup:
    """What a retriever offers besides ``search``: its dataset's documents by id, search results as documents, and
    a question's evidence. Needs ``self.dataset``, ``self._docs`` (id -> (question, document)) and ``self.search``."""

    def document(self, doc_id: str) -> Document:
        """The dataset's ``Document`` with this id (labelled or not, as the dataset is)."""
        try:
            return self._docs[doc_id][1]
        except KeyError:
            raise KeyError(f"no document with id {doc_id!r} in {self.dataset.name}") from None

    def retrieve(self, query: str, k: int = 3, source: str | None = None,
                 exclude_question: str | None = None) -> list[Document]:
        """Like ``search`` but returns the dataset's ``Document`` objects."""
        return [self.document(hit.doc_id) for hit in self.search(query, k, source, exclude_question)]

    @staticmethod
    def given(question: Question) -> list[Document]:
        """The ``given`` evidence: the question's own documents, in dataset order."""
        return list(question.documents)

    def evidence(self, question: Question, mode: str = "given", k: int = 3,
                 source: str | None = None) -> list[Document]:
        """Evidence for a question: its own documents (``given``) or the top ``k`` from the whole corpus,
        optionally from one source (``retrieve``)."""
        if mode == "given":
            return self.given(question)
        if mode == "retrieve":
            return self.retrieve(question.question, k=k, source=source)
        raise ValueError(f"unknown evidence mode {mode!r}; expected 'given' or 'retrieve'")
