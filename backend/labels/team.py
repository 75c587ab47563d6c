"""Labelling as a team: rounds, each analyst's current label, and which label of a case is its gold.

A **round** (per dataset identity, stored in the label store) says how many analysts should label each case
(``overlap``, default 1) and who leads (``lead``): the lead sets the round and records adjudicated labels. Without a
round the overlap is 1 and there is no lead.

**Who may set a round** (``round_rule``, ``may_set_round``): when the deployment names leads (``[deployment] leads``,
``$CONFLICTLENS_LEADS``: signed-in analyst ids, ``backend.labels.analysts``), only they set or change any round, the
first one included, and the round's lead is one of them; on a server with sign-in that names none, nobody does (a
new version of a dataset, a new identity, opens nothing either). Only without sign-in or named leads (one user's
own app, names typed, marked self-declared) the first round may be set by anyone and a later change by its lead.
Names compare as ``backend.labels.analysts.same_analyst`` does: exactly, after NFC, no case folding.

Each analyst's versions of a question's label form their own chain (``Label.supersedes`` points at their previous
version); a case's **current labels** are the versions nothing supersedes (``heads``): one per analyst, plus the
lead's adjudicated label if there is one. Labels saved before team labelling kept their chains, where an edit by
another analyst replaced the label: the replaced one is not current.

**Gold** of a case (``resolve``): the adjudicated label if there is one; else, when every analyst's current label
gives the same answer (accepted answers as a set, case-insensitive, or unanswerable), that agreed label; else the
case is disputed and has no gold. A case with fewer labels than the round's overlap still counts as agreed when its
labels agree; ``GoldCounts.short`` says how many.

**Blind labelling that cannot be taken** (issue 36): other analysts' labels of a case are shown only to an analyst
who saved their own (``may_see_others``). So each analyst's *blind* label of a case is the newest version they
saved before that could happen; a version saved after it (they had a label there, and another analyst had one:
``saw_others``) is marked ``seen_others`` when it is stored and never counts: agreement, gold and the agreement
figures compare each analyst's blind label (``CaseLabels.counted``), so a throwaway label, then the others' answer
copied, leaves the throwaway counted (the case is disputed, for the lead to settle). The lead is not held to it:
the lead's adjudicated label settles a case whatever its analysts' labels say.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from backend.labels.analysts import named, same_analyst
from backend.labels.model import ADJUDICATED, ANALYST, SELF_DECLARED, Label

DEFAULT_OVERLAP = 1
MAX_OVERLAP = 10
GoldStatus = Literal["adjudicated", "agreed", "disputed"]
#: Where a round's ``set_by`` came from: a signed-in identity, a typed name, or ``python -m backend labels round``
#: (whoever runs the command on the server: its operator).
RoundSource = Literal["signed-in", "self-declared", "command-line"]
COMMAND_LINE: RoundSource = "command-line"


class Round(BaseModel):
    """A dataset's labelling round as set by its lead (one stored setting; the newest ``number`` is current)."""

    dataset: str
    number: int = Field(ge=1)
    overlap: int = Field(ge=1, le=MAX_OVERLAP)
    lead: str
    set_by: str
    set_by_source: RoundSource = SELF_DECLARED
    created_at: datetime


def leads(rnd: Round | None, analyst: str, named_leads: Iterable[str] | None = None) -> bool:
    """Whether ``analyst`` is the round's lead: the same name (``same_analyst``: exact after NFC and stripping, no
    case folding, no look-alikes) and, when the deployment names leads (``named_leads``; default: this process's
    deployment), one of them: a round set before they were named gives its lead nothing once they are."""
    if rnd is None or not same_analyst(analyst, rnd.lead):
        return False
    named_leads = _deployment_leads() if named_leads is None else tuple(named_leads)
    return not named_leads or named(analyst, named_leads)


def round_rule(named_leads: Iterable[str], signed_in: bool) -> tuple[str, ...] | None:
    """Who may set rounds: the deployment's leads (when it names any); nobody (``()``) on a server with sign-in
    that names none; None (no rule: the first round anyone's, later ones its lead's) without either."""
    named_leads = tuple(named_leads)
    return named_leads if named_leads or signed_in else None


def may_set_round(current: Round | None, analyst: str, rule: tuple[str, ...] | None) -> bool:
    """Whether ``analyst`` may set the dataset's round now (``current``: its round, None: none yet)."""
    if rule is not None:
        return named(analyst, rule)
    return bool(analyst.strip()) and (current is None or leads(current, analyst, named_leads=()))


def _deployment_leads() -> tuple[str, ...]:
    from backend import deployment  # the settings of this process (the app configures them from its secrets)

    return deployment.current().leads


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


def saw_others(earlier: Iterable[Label], analyst: str, kind: str = ANALYST) -> bool:
    """Whether a label ``analyst`` saves now on top of ``earlier`` (every version of the question so far) is saved
    after the other analysts' labels could be shown to them: they had a label of their own there and another
    analyst had one (``may_see_others``). An adjudicated label never is (the lead settles the case)."""
    if kind != ANALYST:
        return False
    saved = {lab.analyst for lab in earlier if lab.kind == ANALYST}
    return analyst in saved and bool(saved - {analyst})


@dataclass
class CaseLabels:
    """The current labels of one question: each analyst's own, and the adjudicated one; ``blind``: each analyst's
    newest version saved blind (not ``seen_others``), what agreement and gold count (None: every current label)."""

    question_id: str
    analysts: dict[str, Label] = field(default_factory=dict)  # analyst -> their current label
    adjudicated: Label | None = None
    blind: dict[str, Label] | None = None  # analyst -> their newest version saved blind

    def count(self) -> int:
        return len(self.analysts)

    def counted(self) -> dict[str, Label]:
        """The label of each analyst that counts toward agreement and gold: their newest saved blind (an analyst
        with none, every version of theirs saved after seeing the others', is left out)."""
        if self.blind is None:
            return dict(self.analysts)
        return {a: self.blind[a] for a in self.analysts if a in self.blind}

    def seen(self) -> list[str]:
        """The analysts whose current label was saved after seeing the others' (it does not count)."""
        return sorted(a for a, lab in self.analysts.items() if lab.seen_others)

    def agree(self) -> bool:
        """Whether every analyst's counted label gives the same answer (no label or one label: trivially)."""
        return len({answer_key(lab) for lab in self.counted().values()}) <= 1

    def status(self) -> GoldStatus | None:
        if self.adjudicated is not None:
            return "adjudicated"
        if not self.analysts:
            return None
        return "agreed" if self.counted() and self.agree() else "disputed"

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
            return max(self.counted().values(), key=lambda lab: (lab.created_at, lab.version))
        return None


def by_case(versions: Iterable[Label]) -> dict[str, CaseLabels]:
    """Every labelled question's current labels, from the versions of one dataset, and each analyst's newest
    version saved blind. Should two current labels of one analyst exist (two chains from before team labelling),
    the newer is theirs."""
    versions = sorted(versions, key=lambda lab: (lab.created_at, lab.version))
    out: dict[str, CaseLabels] = {}
    for lab in heads(versions):
        case = out.setdefault(lab.question_id, CaseLabels(lab.question_id, blind={}))
        if lab.kind == ADJUDICATED:
            case.adjudicated = lab
        else:
            case.analysts[lab.analyst] = lab
    for lab in versions:  # oldest first: the newest blind version of each analyst stays
        if lab.kind == ANALYST and not lab.seen_others and lab.question_id in out:
            out[lab.question_id].blind[lab.analyst] = lab
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


def visible(versions: Iterable[Label], analyst: str, lead: bool = False) -> list[Label]:
    """The versions ``analyst`` may see (what the page's exports hold): every one for the round's lead; else their
    own, and every version of the cases whose labels are shown to them (``may_see_others``), in the given order.
    Nobody named sees none."""
    versions = list(versions)
    if lead:
        return versions
    if not analyst:
        return []
    shown = {qid for qid, case in by_case(versions).items() if may_see_others(case, analyst)}
    return [lab for lab in versions if lab.question_id in shown or (lab.kind == ANALYST and lab.analyst == analyst)]


@dataclass
class GoldCounts:
    """How the gold of a dataset's labelled questions was settled (``summary.json``'s ``gold``)."""

    adjudicated: int = 0
    agreed: int = 0
    disputed: int = 0
    short: int = 0       # agreed with fewer labels than the round's overlap
    overlap: int = DEFAULT_OVERLAP
    disputed_ids: list[str] = field(default_factory=list)
    seen: int = 0        # not adjudicated, with a current label saved after seeing the others' (not counted)

    def as_dict(self) -> dict:
        out = {"adjudicated": self.adjudicated, "agreed": self.agreed, "disputed": self.disputed,
               "agreed_below_overlap": self.short, "overlap": self.overlap, "disputed_ids": self.disputed_ids}
        if self.seen:  # only when it happened: summaries of honest rounds read as before
            out["seen_others_not_counted"] = self.seen
        return out


def resolve(cases: dict[str, CaseLabels], overlap: int = DEFAULT_OVERLAP) -> tuple[dict[str, Label], GoldCounts]:
    """Each question's gold label (adjudicated, else agreed) and the counts; disputed questions are left out."""
    gold: dict[str, Label] = {}
    counts = GoldCounts(overlap=overlap)
    for qid, case in cases.items():
        status = case.status()
        if status is None:
            continue
        counts.seen += status != "adjudicated" and bool(case.seen())
        if status == "disputed":
            counts.disputed += 1
            counts.disputed_ids.append(qid)
            continue
        gold[qid] = case.gold()
        if status == "adjudicated":
            counts.adjudicated += 1
        else:
            counts.agreed += 1
            counts.short += len(case.counted()) < overlap
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
           "may_see_others", "saw_others", "visible", "progress", "case_progress", "overlap_of", "leads", "DEFAULT_OVERLAP", "MAX_OVERLAP", "ANALYST",
           "ADJUDICATED", "round_rule", "may_set_round", "RoundSource", "COMMAND_LINE"]
