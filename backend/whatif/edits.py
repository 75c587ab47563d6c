"""Edits of one question's evidence: remove documents, add a typed document, rewrite a document, flip a source's
documents to another answer. ``apply_edits`` returns a new question and never touches the one it was given (nor the
loaded dataset): the what-if lab compares the two.

An edited question is marked everywhere by its id, ``<original id>~<tag>`` (the tag hashes the edits, so the same
edits give the same id and a re-run finds its cached calls), and in ``meta``: ``edited_from`` (the original id) and
``edits`` (what was done, in order). ``meta`` is truth-side: the runner reads ``edited_from`` to search the edited
documents instead of the original ones, and strips ``meta`` before any method sees the question.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Literal, Union

from pydantic import Field, TypeAdapter, field_validator

from backend.answer_text import mentions, substitute
from backend.schema import DocLabel, Document, Question
from backend.schema.base import StrictModel
from backend.schema.data import EDITED_FROM

EDITS = "edits"


class EditError(ValueError):
    """An edit that cannot apply to this question (unknown document, nothing to flip, empty text)."""


class _Text(StrictModel):
    @field_validator("text", check_fields=False)
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is empty")
        return v


class RemoveDocuments(StrictModel):
    op: Literal["remove"] = "remove"
    ids: list[str]


class AddDocument(_Text):
    op: Literal["add"] = "add"
    text: str
    source: str | None = None      # None: the document is its own source
    id: str | None = None          # None: ``<question id>-added<n>``
    position: int | None = Field(default=None, ge=0)   # where it goes among the documents; None: last
    #: Truth about the added document (e.g. an attack passage: misinfo for the target). Kept for the truth overlays
    #: and evaluation; stripped, like every label, before a method runs.
    label: DocLabel | None = None


class EditDocument(_Text):
    op: Literal["edit"] = "edit"
    id: str
    text: str


class FlipSource(StrictModel):
    """Every document of ``source`` that states ``from_answer`` states ``to_answer`` instead (answer substitution,
    numbers token by token, as the sample builder makes misinformation)."""

    op: Literal["flip"] = "flip"
    source: str
    from_answer: str
    to_answer: str


Edit = Annotated[Union[RemoveDocuments, AddDocument, EditDocument, FlipSource],  # noqa: UP007
                 Field(discriminator="op")]


def edit_tag(edits: list[Edit]) -> str:
    blob = json.dumps([e.model_dump(mode="json") for e in edits], sort_keys=True, ensure_ascii=False)
    return "edit-" + hashlib.sha256(blob.encode()).hexdigest()[:8]


def original_id(question: Question) -> str:
    return str(question.meta.get(EDITED_FROM) or question.id)


def is_edited(question: Question) -> bool:
    return bool(question.meta.get(EDITED_FROM))


def _apply_one(docs: list[Document], edit: Edit, question: Question) -> list[Document]:
    qid, ids = question.id, [d.id for d in docs]
    if isinstance(edit, RemoveDocuments):
        if unknown := [i for i in edit.ids if i not in ids]:
            raise EditError(f"remove: no document {', '.join(map(repr, unknown))} in {qid}")
        return [d for d in docs if d.id not in set(edit.ids)]
    if isinstance(edit, AddDocument):
        new_id = edit.id or next(f"{qid}-added{n}" for n in range(1, len(docs) + 2) if f"{qid}-added{n}" not in ids)
        if new_id in ids:
            raise EditError(f"add: {qid} already has a document {new_id!r}")
        doc = Document(id=new_id, source=edit.source or None, text=edit.text, label=edit.label)
        at = len(docs) if edit.position is None else min(edit.position, len(docs))
        return [*docs[:at], doc, *docs[at:]]
    if isinstance(edit, EditDocument):
        if edit.id not in ids:
            raise EditError(f"edit: no document {edit.id!r} in {qid}")
        # the old label described the old text: the new text's is unknown
        return [d.model_copy(update={"text": edit.text, "label": None}) if d.id == edit.id else d for d in docs]
    if isinstance(edit, FlipSource):
        out, flipped = [], 0
        for d in docs:
            new = substitute(d.text, edit.from_answer, edit.to_answer) if d.source_name == edit.source else None
            if new is None:
                out.append(d)
                continue
            flipped += 1
            # a flip to a gold answer restores the truth: that document is correct, not misinformation
            kind = "correct" if any(_same(edit.to_answer, g) for g in question.gold_answers) else "misinfo"
            out.append(d.model_copy(update={"text": new, "label": DocLabel(type=kind, answer=edit.to_answer)}))
        if not flipped:
            stated = any(d.source_name == edit.source and mentions(d.text, edit.from_answer) for d in docs)
            raise EditError(f"flip: no document of source {edit.source!r} in {qid} states {edit.from_answer!r}"
                            + (" in a form that can be replaced" if stated else ""))
        return out
    raise EditError(f"unknown edit {edit!r}")


def apply_edits(question: Question, edits: list[Edit], tag: str | None = None) -> Question:
    """A new question: ``question`` with ``edits`` applied in order (``question`` itself is left as it was).
    Editing an edited question adds to its edits; the id is ``<original id>~<tag>``, the tag by default a hash of
    all the edits (an attack names its own: ``attack-k3``, and ``attack-k3-edit-<hash of all the edits>`` on a
    question edited before)."""
    if not edits:
        return question
    before = list(question.meta.get(EDITS, []))
    all_edits = [*[_parse(e) for e in before], *edits]
    docs = list(question.documents)
    for edit in edits:
        docs = _apply_one(docs, edit, question)
    orig = original_id(question)
    meta = {**question.meta, EDITED_FROM: orig, EDITS: [e.model_dump(mode="json") for e in all_edits]}
    suffix = tag or edit_tag(all_edits)
    if tag and before:  # e.g. an attack on an edited question: not the id of the same attack on the original
        suffix = f"{tag}-{edit_tag(all_edits)}"
    return question.model_copy(update={"id": f"{orig}~{suffix}", "documents": docs, "meta": meta}, deep=True)


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


_EDIT = TypeAdapter(Edit)


def _parse(data) -> Edit:
    return _EDIT.validate_python(data)


def parse_edits(data: list) -> list[Edit]:
    """Edits from plain data (``meta["edits"]``, a JSON file)."""
    return [_parse(e) for e in data]


__all__ = ["AddDocument", "Edit", "EditDocument", "EditError", "FlipSource", "RemoveDocuments", "apply_edits",
           "edit_tag", "is_edited", "original_id", "parse_edits", "EDITED_FROM", "EDITS"]
