"""Questions, documents, sources and datasets: the data every method reads.

Ground truth lives in a few named fields only (``TRUTH_FIELDS``): gold/wrong answers, each document's
``label``, a source's ``true_reliability``/``coverage`` and the free-form ``meta``. They exist for evaluation
and for the dashboard's truth overlays; ``strip_truth`` removes all of them, and methods and models only
ever receive stripped questions.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from backend.schema.base import StrictModel

DocType = Literal["correct", "misinfo", "noise"]

#: Every field that carries ground truth, by model. Kept next to the models so a new truth field is
#: hard to forget in ``strip_truth``.
TRUTH_FIELDS = {
    "Question": ("gold_answers", "wrong_answers", "meta"),
    "Document": ("label",),
    "Source": ("true_reliability", "coverage"),
}

#: ``Question.meta`` key of a what-if edit (``backend.whatif``): the id of the dataset question it was made from.
EDITED_FROM = "edited_from"


class DocLabel(StrictModel):
    """Truth about one document: what kind it is and which answer it supports (``None`` for noise)."""

    type: DocType
    answer: str | None = None


class Document(StrictModel):
    id: str
    source: str | None = None  # None: the document is its own source (RAMDocs)
    text: str
    label: DocLabel | None = None

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is empty")
        return v

    @property
    def source_name(self) -> str:
        """The source this document counts under; a source-less document stands for itself."""
        return self.source or self.id


class Question(StrictModel):
    id: str
    question: str
    documents: list[Document]
    gold_answers: list[str] = Field(default_factory=list)
    wrong_answers: list[str] = Field(default_factory=list)
    #: What the simulated offline model "remembers" about this question (model input, not truth).
    internal_knowledge: str | None = None
    #: Answer options for multiple-choice settings (BRIDGE/TRD); an input, not truth.
    options: list[str] = Field(default_factory=list)
    #: Free-form annotations (scenario, provenance...). Treated as truth: never shown to a method.
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("question is empty")
        return v

    @property
    def has_truth(self) -> bool:
        return bool(self.gold_answers or self.wrong_answers or self.meta
                    or any(d.label for d in self.documents))


class Source(StrictModel):
    name: str
    true_reliability: float | None = Field(default=None, ge=0.0, le=1.0)
    coverage: float | None = Field(default=None, ge=0.0, le=1.0)


class Dataset(StrictModel):
    name: str
    path: str
    questions: list[Question]
    sources: list[Source] = Field(default_factory=list)
    format: Literal["project", "ramdocs"] = "project"
    #: Non-fatal observations made while loading (e.g. a very long document kept whole).
    notes: list[str] = Field(default_factory=list, exclude=True)

    def question(self, ref: str) -> Question:
        """A question by id, or by 1-based position written ``@N``."""
        if ref.startswith("@"):
            try:
                n = int(ref[1:])
            except ValueError:
                raise KeyError(f"{ref!r}: expected @N with N a number") from None
            if not 1 <= n <= len(self.questions):
                raise KeyError(f"{ref}: the dataset has {len(self.questions)} questions")
            return self.questions[n - 1]
        for q in self.questions:
            if q.id == ref:
                return q
        raise KeyError(f"no question with id {ref!r} in {self.name}")

    @property
    def multi_source(self) -> bool:
        """True when documents name sources shared across questions (RA-RAG's setting)."""
        return any(d.source for q in self.questions for d in q.documents)

    def source_names(self) -> list[str]:
        if self.sources:
            return [s.name for s in self.sources]
        seen: dict[str, None] = {}
        for q in self.questions:
            for d in q.documents:
                if d.source:
                    seen.setdefault(d.source)
        return list(seen)

    def documents(self) -> list[tuple[Question, Document]]:
        return [(q, d) for q in self.questions for d in q.documents]


def strip_truth(obj: Question | Dataset | Source | Document):
    """A deep copy of ``obj`` with every ground-truth field emptied (see ``TRUTH_FIELDS``)."""
    if isinstance(obj, Document):
        return obj.model_copy(update={"label": None})
    if isinstance(obj, Source):
        return obj.model_copy(update={"true_reliability": None, "coverage": None})
    if isinstance(obj, Question):
        return obj.model_copy(update={
            "gold_answers": [], "wrong_answers": [], "meta": {},
            "documents": [strip_truth(d) for d in obj.documents],
        })
    if isinstance(obj, Dataset):
        return obj.model_copy(update={
            "questions": [strip_truth(q) for q in obj.questions],
            "sources": [strip_truth(s) for s in obj.sources],
        })
    raise TypeError(f"strip_truth: unsupported type {type(obj).__name__}")
