"""Labelling as a team: rounds, each analyst's current label, and which label of a case is its gold.

A **round** (per dataset identity, stored in the label store) says how many analysts should label each case
(``overlap``, default 1) and who leads (``lead``): the lead sets the round and records adjudicated labels. Without a
round the overlap is 1 and there is no lead; the first round may be set by anyone, a later change only by its lead.

Each analyst's versions of a question's label form their own chain (``Label.supersedes`` points at their previous
version); a case's **current labels** are the versions nothing supersedes (``heads``): one per analyst, plus the
lead's adjudicated label if there is one. Labels saved before team labelling kept their chains, where an edit by
another analyst replaced the label: the replaced one is not current.

**Gold** of a case (``resolve``): the adjudicated label if there is one; else, when every analyst's current label
gives the same answer (accepted answers as a set, case-insensitive, or unanswerable), that agreed label; else the
case is disputed and has no gold. A case with fewer labels than the round's overlap still counts as agreed when its
labels agree; ``GoldCounts.short`` says how many.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from backend.labels.model import ADJUDICATED, ANALYST, SELF_DECLARED, AnalystSource, Label

DEFAULT_OVERLAP = 1
MAX_OVERLAP = 10
GoldStatus = Literal["adjudicated", "agreed", "disputed"]


class Round(BaseModel):
    """A dataset's labelling round as set by its lead (one stored setting; the newest ``number`` is current)."""

    dataset: str
    number: int = Field(ge=1)
    overlap: int = Field(ge=1, le=MAX_OVERLAP)
    lead: str
    set_by: str
    set_by_source: AnalystSource = SELF_DECLARED
    created_at: datetime


def leads(rnd: Round | None, analyst: str) -> bool:
    """Whether ``analyst`` is the round's lead. [ours] Compared without case or surrounding spaces: a lead typed as
    ``Ana@Example.org`` is the signed-in ``ana@example.org`` (a provider's email is not case-sensitive)."""
    return rnd is not None and bool(analyst.strip()) and analyst.strip().casefold() == rnd.lead.strip().casefold()


def overlap_of(rnd: Round | None) -> int:
    return rnd.overlap if rnd is not None else DEFAULT_OVERLAP


def heads(versions: Iterable[Label]) -> list[Label]:
    """The current labels among versions of one dataset: those no other version supersedes (in write order)."""
    versions = list(versions)
    replaced = {lab.supersedes for lab in versions if lab.supersedes}
    return [lab for lab in versions if lab.uid not in replaced]


def answer_key(label: Label) -> tuple:
    """What gold is made of, comparable across analysts: unanswerable, or the accepted answers as a set."""
    if label.unanswerable:
        return ("unanswerable",)
    return ("answers", frozenset(a.strip().casefold() for a in label.answers))  # as agreement compares them


@dataclass
class CaseLabels:
    """The current labels of one question: each analyst's own, and the adjudicated one."""

    question_id: str
    analysts: dict[str, Label] = field(default_factory=dict)  # analyst -> their current label
    adjudicated: Label | None = None

    def count(self) -> int:
        return len(self.analysts)

    def agree(self) -> bool:
        """Whether every analyst's label gives the same answer (no label or one label: trivially)."""
        return len({answer_key(lab) for lab in self.analysts.values()}) <= 1

    def status(self) -> GoldStatus | None:
        if self.adjudicated is not None:
            return "adjudicated"
        if not self.analysts:
            return None
        return "agreed" if self.agree() else "disputed"

    def settled_before(self) -> list[str]:
        """The analysts whose current label is not among those the adjudicated label settled (saved or changed
        after it): the lead may want to look again. Empty without an adjudicated label."""
        if self.adjudicated is None:
            return []
        return sorted(a for a, lab in self.analysts.items() if lab.uid not in set(self.adjudicated.settles))

    def gold(self) -> Label | None:
        """The label whose answers are this case's gold (None: disputed or unlabelled)."""
        status = self.status()
        if status == "adjudicated":
            return self.adjudicated
        if status == "agreed":
            return max(self.analysts.values(), key=lambda lab: (lab.created_at, lab.version))
        return None


def by_case(versions: Iterable[Label]) -> dict[str, CaseLabels]:
    """Every labelled question's current labels, from the versions of one dataset. Should two current labels of one
    analyst exist (two chains from before team labelling), the newer is theirs."""
    out: dict[str, CaseLabels] = {}
    for lab in sorted(heads(versions), key=lambda lab: (lab.created_at, lab.version)):
        case = out.setdefault(lab.question_id, CaseLabels(lab.question_id))
        if lab.kind == ADJUDICATED:
            case.adjudicated = lab
        else:
            case.analysts[lab.analyst] = lab
    return out


def needs(case: CaseLabels | None, analyst: str, overlap: int) -> bool:
    """Whether a case still needs ``analyst``'s label: they have none, it has fewer than ``overlap`` labels and the
    lead has not settled it (a settled case needs no more labels)."""
    if case is None:
        return True
    return analyst not in case.analysts and case.count() < overlap and case.adjudicated is None


def may_see_others(case: CaseLabels | None, analyst: str) -> bool:
    """Blind labelling: other analysts' labels of a case are shown only to an analyst who saved their own."""
    return case is not None and bool(analyst) and analyst in case.analysts


@dataclass
class GoldCounts:
    """How the gold of a dataset's labelled questions was settled (``summary.json``'s ``gold``)."""

    adjudicated: int = 0
    agreed: int = 0
    disputed: int = 0
    short: int = 0       # agreed with fewer labels than the round's overlap
    overlap: int = DEFAULT_OVERLAP
    disputed_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"adjudicated": self.adjudicated, "agreed": self.agreed, "disputed": self.disputed,
                "agreed_below_overlap": self.short, "overlap": self.overlap, "disputed_ids": self.disputed_ids}


def resolve(cases: dict[str, CaseLabels], overlap: int = DEFAULT_OVERLAP) -> tuple[dict[str, Label], GoldCounts]:
    """Each question's gold label (adjudicated, else agreed) and the counts; disputed questions are left out."""
    gold: dict[str, Label] = {}
    counts = GoldCounts(overlap=overlap)
    for qid, case in cases.items():
        status = case.status()
        if status is None:
            continue
        if status == "disputed":
            counts.disputed += 1
            counts.disputed_ids.append(qid)
            continue
        gold[qid] = case.gold()
        if status == "adjudicated":
            counts.adjudicated += 1
        else:
            counts.agreed += 1
            counts.short += case.count() < overlap
    counts.disputed_ids.sort()
    return gold, counts


def progress(cases: dict[str, CaseLabels], question_ids: Iterable[str], overlap: int) -> dict:
    """Progress over ``question_ids``: cases with all ``overlap`` labels, labels per analyst, and per case
    ``"n of overlap"``."""
    ids = list(question_ids)
    per_analyst: dict[str, int] = {}
    for qid in ids:
        for who in cases.get(qid, CaseLabels(qid)).analysts:
            per_analyst[who] = per_analyst.get(who, 0) + 1
    complete = sum(cases.get(qid, CaseLabels(qid)).count() >= overlap for qid in ids)
    return {"cases": len(ids), "complete": complete, "overlap": overlap,
            "analysts": dict(sorted(per_analyst.items(), key=lambda kv: (-kv[1], kv[0]))),
            "labels": sum(per_analyst.values()), "needed": len(ids) * overlap}


def case_progress(case: CaseLabels | None, overlap: int) -> str:
    """'2 of 2 labels' (more than the overlap is shown as it is)."""
    n = case.count() if case else 0
    return f"{n} of {overlap} label{'' if overlap == 1 else 's'}"


__all__ = ["Round", "CaseLabels", "GoldCounts", "heads", "by_case", "answer_key", "resolve", "needs",
           "may_see_others", "progress", "case_progress", "overlap_of", "leads", "DEFAULT_OVERLAP", "MAX_OVERLAP", "ANALYST",
           "ADJUDICATED"]
