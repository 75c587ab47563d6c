"""What a label is: one analyst's judgement of one question, and the checks it must pass before it is stored.

A ``LabelDraft`` is what the analyst submits; the store turns it into a ``Label`` version (uid, version number,
the version it supersedes, a UTC timestamp, where the analyst's name came from, the fingerprint of the question it
judged). Versions are never changed once written: an edit is a new version.

A label's ``dataset`` is the dataset's identity (``backend.labels.identity.dataset_key``: name and content hash) and
its ``question_id`` is the question's id exactly as the dataset spells it: neither is ever trimmed or otherwise
altered, so a label for ``"q1 "`` can only ever be stored on ``"q1 "``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ConflictType = Literal["ambiguity", "misinformation", "noise", "outdated", "none", "other"]
#: Where a label's analyst came from: the identity the user signed in with (``st.user``), or a name they typed.
AnalystSource = Literal["signed-in", "self-declared"]
SIGNED_IN: AnalystSource = "signed-in"
SELF_DECLARED: AnalystSource = "self-declared"
#: What a label version is: one analyst's judgement (``analyst``), or the final label a round's lead recorded where
#: the analysts' labels disagree (``adjudicated``; ``settles`` names the analysts' labels it settled).
LabelKind = Literal["analyst", "adjudicated"]
ANALYST: LabelKind = "analyst"
ADJUDICATED: LabelKind = "adjudicated"
#: The conflict types in the order the form offers them, with the words the analyst reads.
CONFLICT_TYPES: dict[str, str] = {"ambiguity": "ambiguity", "misinformation": "misinformation", "noise": "noise",
                                  "outdated": "outdated knowledge", "none": "no conflict", "other": "other"}
MAX_NOTE = 10_000
MAX_ANSWER = 1_000
MAX_ANALYST = 100


class LabelError(ValueError):
    """A label that cannot be stored; ``problems`` says why, one sentence each."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


class LabelDraft(BaseModel):
    """An analyst's label as submitted. ``answers`` are the accepted answers (picked among the methods'
    candidates or typed); ``unanswerable`` instead says no answer is supported. ``wrong_documents`` /
    ``wrong_sources``: the evidence judged wrong (ids / source names)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    question_id: str
    answers: list[str] = Field(default_factory=list)
    unanswerable: bool = False
    conflict_type: ConflictType | None = None
    wrong_documents: list[str] = Field(default_factory=list)
    wrong_sources: list[str] = Field(default_factory=list)
    best_method: str | None = None
    note: str = ""
    analyst: str

    def cleaned(self) -> LabelDraft:
        """Whitespace trimmed, blank and repeated entries dropped (first spelling kept), empty method → None. The
        dataset and question id are kept exactly as given: they name a dataset and a question, and an id with
        surrounding spaces is another question's id (or none), never the trimmed one's."""
        return self.model_copy(update={
            "answers": _unique(self.answers), "wrong_documents": _unique(self.wrong_documents),
            "wrong_sources": _unique(self.wrong_sources), "best_method": (self.best_method or "").strip() or None,
            "note": self.note.strip(), "analyst": self.analyst.strip()})


class Label(LabelDraft):
    """One stored version of a question's label."""

    uid: str
    version: int = Field(ge=1)
    supersedes: str | None = None  # the uid of the version this one replaced
    created_at: datetime           # UTC
    #: ``signed-in``: the analyst is the identity the user signed in with; ``self-declared``: a name they typed
    #: (every label saved before sign-in existed).
    analyst_source: AnalystSource = SELF_DECLARED
    #: ``identity.question_fingerprint`` of the question as it was judged (None: saved before it was recorded).
    question_fingerprint: str | None = None
    #: The uid of the label (of another version of the dataset) this one was carried over from.
    carried_from: str | None = None
    #: ``analyst``: one analyst's own label (each analyst's versions form their own chain, ``supersedes`` pointing
    #: at their previous one); ``adjudicated``: the lead's final label, its own chain.
    kind: LabelKind = ANALYST
    #: An adjudicated label: the uids of the analysts' labels it settled (the ones the lead saw side by side).
    settles: list[str] = Field(default_factory=list)
    #: Saved after the other analysts' labels of the case could be shown to this analyst (they had a label of their
    #: own there, and another analyst had one: ``backend.labels.team.saw_others``). Kept and shown, never counted
    #: toward agreement or gold: their newest version saved blind counts instead.
    seen_others: bool = False

    def draft(self) -> LabelDraft:
        return LabelDraft(**self.model_dump(include=set(LabelDraft.model_fields)))


def _unique(items: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for item in items:
        text = str(item).strip()
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out


def problems(draft: LabelDraft, dataset=None, methods: Iterable[str] | None = None) -> list[str]:
    """Everything wrong with a (cleaned) draft, as sentences naming the question. With ``dataset`` (a
    ``backend.schema.Dataset``) the question, documents and sources must exist in it; with ``methods`` the best
    method must be one of them."""
    from backend.labels.identity import dataset_key, name_of

    where = f"{name_of(draft.dataset) or '?'} / {draft.question_id or '?'}"
    out: list[str] = []
    if not draft.dataset:
        out.append("the label names no dataset")
    if not draft.question_id:
        out.append("the label names no question")
    if not draft.analyst:
        out.append(f"{where}: say who labels (the analyst's name is empty)")
    elif len(draft.analyst) > MAX_ANALYST:
        out.append(f"{where}: the analyst's name is over {MAX_ANALYST} characters")
    if draft.unanswerable and draft.answers:
        out.append(f"{where}: a label is either unanswerable or has accepted answers, not both")
    if not draft.unanswerable and not draft.answers:
        out.append(f"{where}: accept at least one answer, or mark the question unanswerable")
    if any(len(a) > MAX_ANSWER for a in draft.answers):
        out.append(f"{where}: an accepted answer is over {MAX_ANSWER:,} characters")
    if len(draft.note) > MAX_NOTE:
        out.append(f"{where}: the note has {len(draft.note):,} characters; the limit is {MAX_NOTE:,}")
    if methods is not None and draft.best_method is not None and draft.best_method not in set(methods):
        out.append(f"{where}: best_method: not one of the methods ({', '.join(methods)})")
    if dataset is not None:
        # the dataset's identity, or its name as a shorthand for it (the store saves under the identity)
        if draft.dataset and draft.dataset not in (dataset_key(dataset), dataset.name):
            out.append(f"{where}: the label is for dataset {name_of(draft.dataset)!r}"
                       f"{' (another version of it)' if name_of(draft.dataset) == dataset.name else ''}, "
                       f"not {dataset.name!r}")
        question = next((q for q in dataset.questions if q.id == draft.question_id), None)
        if question is None and draft.question_id:
            out.append(f"{where}: no question with id {draft.question_id!r} in {dataset.name}")
        elif question is not None:
            doc_ids = {d.id for d in question.documents}
            sources = {d.source_name for d in question.documents}
            if unknown := [d for d in draft.wrong_documents if d not in doc_ids]:
                out.append(f"{where}: the question has no document {', '.join(map(repr, unknown))}")
            if unknown := [s for s in draft.wrong_sources if s not in sources]:
                out.append(f"{where}: no document of the question comes from {', '.join(map(repr, unknown))}")
    return out


def check(draft: LabelDraft, dataset=None, methods: Iterable[str] | None = None) -> LabelDraft:
    """The cleaned draft, or ``LabelError`` listing every problem."""
    draft = draft.cleaned()
    if found := problems(draft, dataset, methods):
        raise LabelError(found)
    return draft
