"""Labels as gold answers: score the methods against what the analysts accepted (``evaluate --gold``).

The gold of a labelled question becomes the label's accepted answers; a question labelled unanswerable has no gold
answer and counts as answered correctly by a method that abstains (``backend.evaluate``). The dataset's wrong
answers are kept for strict EM, minus any the analysts accepted (``scoring.counted_wrong`` drops those anyway).
Questions without a label are left out, and the summary says how many. Only the labels saved for this very version
of the dataset count (its identity, ``backend.labels.identity``): labels of another file with the same name, or of
the file before an edit, are not this dataset's gold until carried over (``python -m backend labels carry``).
"""

from __future__ import annotations

from pathlib import Path

from backend.labels.files import read_labels
from backend.labels.identity import dataset_key, name_of
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


def _named(spec: str | Path, name: str) -> list[Label]:
    """Every label version in an export or a store whose dataset is a version of ``name``."""
    text = str(spec)
    if Path(text).suffix.lower() in FILE_SUFFIXES and "://" not in text:
        return [lab for lab in read_labels(text) if name_of(lab.dataset) == name]
    from backend.labels.store import LabelStore

    if "://" not in text and not Path(text).is_file():
        raise FileNotFoundError(f"{text}: no such label store or labels file")
    store = LabelStore(text)
    try:
        return [lab for key in store.identities(name) for lab in store.versions(key)]
    finally:
        store.close()


def gold_labels(spec: str | Path, dataset: Dataset | str, analyst: str | None = None
                ) -> tuple[dict[str, Label], int]:
    """The current labels of ``dataset`` (a ``Dataset``: its identity, ``identity.dataset_key``; a string: that
    identity exactly) from an export (``.csv`` / ``.jsonl``) or a store (a SQLite path or a database URL), and how
    many questions have labels for other versions of its name only (not used: carry them over first).
    ``analyst``: only that analyst's labels (their newest per question)."""
    key = dataset_key(dataset) if isinstance(dataset, Dataset) else dataset
    labels = _named(spec, name_of(key))
    if analyst is not None:
        labels = [lab for lab in labels if lab.analyst == analyst]
    mine = newest([lab for lab in labels if lab.dataset == key])
    others = {lab.question_id for lab in labels if lab.dataset != key} - set(mine)
    return mine, len(others)


def load_gold(spec: str | Path, dataset: Dataset | str, analyst: str | None = None) -> dict[str, Label]:
    """The current labels of ``dataset`` (see ``gold_labels``), by question id."""
    return gold_labels(spec, dataset, analyst)[0]


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
