"""Labels as gold answers: score the methods against what the analysts accepted (``evaluate --gold``).

A question's gold is settled as a team (``backend.labels.team.resolve``): the lead's adjudicated label if there is
one, else the analysts' label when every analyst's current label gives the same answer (``team.answer_key``);
when they disagree the question is **disputed** and left out, and the summary names it. ``analyst``: only that
analyst's labels, so every case is agreed. The gold label's accepted answers become the question's gold; a question
labelled unanswerable has no gold answer and counts as answered correctly by a method that abstains
(``backend.evaluate``). The dataset's wrong answers are kept for strict EM, minus any the analysts accepted
(``scoring.counted_wrong`` drops those anyway). Questions without a label are left out, and the summary says how
many. Only the labels saved for this very version
of the dataset count (its identity, ``backend.labels.identity``): labels of another file with the same name, or of
the file before an edit, are not this dataset's gold until carried over (``python -m backend labels carry``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from backend.labels.files import read_labels
from backend.labels.identity import dataset_key, name_of
from backend.labels.model import Label
from backend.labels.team import CaseLabels, GoldCounts, by_case, overlap_of, resolve
from backend.schema import Dataset, Question

FILE_SUFFIXES = (".csv", ".jsonl", ".json")


@dataclass
class Gold:
    """The gold labels of a dataset's questions and how they were settled."""

    labels: dict[str, Label]  # question id -> its gold label (adjudicated or agreed); disputed ones are left out
    counts: GoldCounts
    elsewhere: int            # questions labelled only for other versions of the dataset's name (not used)


def _named(spec: str | Path, name: str) -> tuple[list[Label], dict[str, int] | None]:
    """Every label version in an export or a store whose dataset is a version of ``name``, and (a store) the
    overlap of each version's round (an export has no rounds: None)."""
    text = str(spec)
    if Path(text).suffix.lower() in FILE_SUFFIXES and "://" not in text:
        return [lab for lab in read_labels(text) if name_of(lab.dataset) == name], None
    from backend.labels.store import LabelStore

    if "://" not in text and not Path(text).is_file():
        raise FileNotFoundError(f"{text}: no such label store or labels file")
    store = LabelStore(text)
    try:
        keys = store.identities(name)
        return ([lab for key in keys for lab in store.versions(key)],
                {key: overlap_of(store.round(key)) for key in keys})
    finally:
        store.close()


def team_gold(spec: str | Path, dataset: Dataset | str, analyst: str | None = None) -> Gold:
    """The gold labels of ``dataset`` (a ``Dataset``: its identity, ``identity.dataset_key``; a string: that
    identity exactly) from an export (``.csv`` / ``.jsonl`` of every version) or a store (a SQLite path or a
    database URL). The current labels are computed from the versions (``team.heads``) either way. The overlap the
    counts compare with is the store's round; an export has no rounds, so there it is the most labels any case of
    the dataset has. ``analyst``: only that analyst's own labels (their current one per question; never an
    adjudicated one), so every case is agreed and the overlap is 1."""
    key = dataset_key(dataset) if isinstance(dataset, Dataset) else dataset
    labels, overlaps = _named(spec, name_of(key))
    cases = by_case(lab for lab in labels if lab.dataset == key)
    if analyst is not None:  # their current label (one another analyst's older edit replaced is not theirs now)
        cases = {q: CaseLabels(q, {analyst: c.analysts[analyst]}) for q, c in cases.items() if analyst in c.analysts}
    if analyst is not None:
        overlap = 1
    elif overlaps is not None:
        overlap = overlaps.get(key, overlap_of(None))
    else:
        overlap = max((case.count() for case in cases.values()), default=overlap_of(None))
    gold, counts = resolve(cases, overlap)
    others = {lab.question_id for lab in labels if lab.dataset != key} - set(cases)
    return Gold(gold, counts, len(others))


def settled_text(gold: dict) -> str:
    """'2 adjudicated, 4 agreed; 1 disputed (left out: q7)' from ``summary.json``'s ``gold`` (``GoldCounts``)."""
    text = f"{gold.get('adjudicated', 0)} adjudicated, {gold.get('agreed', 0)} agreed"
    overlap, short = gold.get("overlap", 1), gold.get("agreed_below_overlap", 0)
    if short:
        text += f" ({short} of them with fewer than {overlap} label{'' if overlap == 1 else 's'})"
    if gold.get("disputed"):
        text += f"; {gold['disputed']} disputed (left out: {', '.join(gold.get('disputed_ids', []))})"
    if seen := gold.get("seen_others_not_counted"):
        text += (f"; {seen} with a label saved after seeing the other analysts' (not counted: the analyst's blind "
                 "label was)")
    return text


def gold_labels(spec: str | Path, dataset: Dataset | str, analyst: str | None = None
                ) -> tuple[dict[str, Label], int]:
    """The gold label of each settled question of ``dataset`` (see ``team_gold``), and how many questions have
    labels for other versions of its name only (not used: carry them over first)."""
    gold = team_gold(spec, dataset, analyst)
    return gold.labels, gold.elsewhere


def load_gold(spec: str | Path, dataset: Dataset | str, analyst: str | None = None) -> dict[str, Label]:
    """The gold label of each settled question of ``dataset`` (see ``team_gold``), by question id."""
    return team_gold(spec, dataset, analyst).labels


def apply_gold(dataset: Dataset, labels: dict[str, Label], disputed: Iterable[str] = ()
               ) -> tuple[list[Question], dict]:
    """The labelled questions of ``dataset`` (dataset order) with the labels' answers as gold, and what was done
    (``{"labels", "questions", "unanswerable", "unlabelled", "unknown"}``: ``unknown`` are labels whose question
    is not in the dataset; ``unlabelled`` does not count the ``disputed`` questions, labelled but without gold)."""
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
            "unlabelled": len(dataset.questions) - len(out) - len(known & set(disputed) - set(labels)),
            "unknown": sorted(set(labels) - known)}
    return out, info
