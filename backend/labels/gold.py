"""Labels as gold answers: score the methods against what the analysts accepted (``evaluate --gold``).

The gold of a labelled question becomes the label's accepted answers; a question labelled unanswerable has no gold
answer and counts as answered correctly by a method that abstains (``backend.evaluate``). The dataset's wrong
answers are kept for strict EM, minus any the analysts accepted (``scoring.counted_wrong`` drops those anyway).
Questions without a label are left out, and the summary says how many.
"""

from __future__ import annotations

from pathlib import Path

from backend.labels.files import read_labels
from backend.labels.model import Label
from backend.schema import Dataset, Question

FILE_SUFFIXES = (".csv", ".jsonl", ".json")


def newest(labels: list[Label]) -> dict[str, Label]:
    """The current label of each question among versions (highest version, then the latest time)."""
    out: dict[str, Label] = {}
    for lab in labels:
        have = out.get(lab.question_id)
        if have is None or (lab.version, lab.created_at) > (have.version, have.created_at):
            out[lab.question_id] = lab
    return out


def load_gold(spec: str | Path, dataset: str, analyst: str | None = None) -> dict[str, Label]:
    """The current labels of ``dataset`` from an export (``.csv`` / ``.jsonl``) or a store (a SQLite path or a
    database URL). ``analyst``: only that analyst's labels (their newest per question)."""
    text = str(spec)
    if Path(text).suffix.lower() in FILE_SUFFIXES and "://" not in text:
        labels = [lab for lab in read_labels(text) if lab.dataset == dataset]
    else:
        from backend.labels.store import LabelStore

        if "://" not in text and not Path(text).is_file():
            raise FileNotFoundError(f"{text}: no such label store or labels file")
        store = LabelStore(text)
        try:
            labels = store.versions(dataset)
        finally:
            store.close()
    if analyst is not None:
        labels = [lab for lab in labels if lab.analyst == analyst]
    return newest(labels)


def apply_gold(dataset: Dataset, labels: dict[str, Label]) -> tuple[list[Question], dict]:
    """The labelled questions of ``dataset`` (dataset order) with the labels' answers as gold, and what was done
    (``{"labels", "questions", "unanswerable", "unlabelled", "unknown"}``: ``unknown`` are labels whose question
    is not in the dataset)."""
    out = []
    for q in dataset.questions:
        lab = labels.get(q.id)
        if lab is None:
            continue
        meta = {**q.meta, "gold_from": "label", "label_uid": lab.uid}
        if lab.unanswerable:
            meta["unanswerable"] = True
        out.append(q.model_copy(update={"gold_answers": list(lab.answers), "meta": meta}))
    known = {q.id for q in dataset.questions}
    unanswerable = sum(lab.unanswerable for lab in labels.values() if lab.question_id in known)
    info = {"labels": len(labels), "questions": len(out), "unanswerable": unanswerable,
            "unlabelled": len(dataset.questions) - len(out), "unknown": sorted(set(labels) - known)}
    return out, info
