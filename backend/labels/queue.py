"""The review queue: the questions on which the methods disagree, most disputed first.

Disagreement is ``backend.agreement``'s (the one definition Evaluate and Inspect use too): the methods are grouped
by answer set (abstaining is an answer of its own; a failed run is left out), and how much they disagree is the
entropy (bits) H = −Σ p_k log₂ p_k over the share of methods per group. Seven methods giving one answer: 0 bits;
all different: log₂ 7 ≈ 2.81. The queue is blind: its order and membership never read gold answers or labels
(``Case.wrong`` is for display with the truth on).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from backend.agreement import ABSTAINS, answer_set
from backend.agreement import groups as answer_groups
from backend.labels.model import Label
from backend.schema import Dataset, MethodResult, Question
from backend.scoring import accuracy, predicted

ABSTAINED = "(abstained)"
Labelled = Literal["all", "unlabelled", "labelled"]


@dataclass(frozen=True)
class Case:
    """One question in the queue, shaped for the label page."""

    question: Question
    position: int                         # 1-based, in the dataset
    answers: dict[str, list[str]]         # method -> predicted answers ([] = abstained); failed runs left out
    errors: list[str]                     # methods whose run failed
    groups: list[tuple[str, list[str]]]   # (answer key as text, methods), largest first
    entropy: float                        # bits
    wrong: list[str] = field(default_factory=list)  # methods with no gold answer among theirs (gold known)
    dataset_type: str = "none"           # the conflict the dataset's truth shows (misinformation, noise, ...)

    @property
    def id(self) -> str:
        return self.question.id

    @property
    def disagree(self) -> bool:
        return len(self.groups) > 1

    def candidates(self) -> list[str]:
        """Every answer a method gave, once (first spelling), in method order: what the analyst picks from."""
        seen, out = set(), []
        for answers in self.answers.values():
            for a in answers:
                if a.casefold() not in seen:
                    seen.add(a.casefold())
                    out.append(a)
        return out

    def minority(self) -> set[str]:
        """Methods outside the majority answer group (every method when the largest groups tie): those a method
        filter should find. Blind, as the queue is: who is wrong plays no part."""
        tie = len(self.groups) > 1 and len(self.groups[0][1]) == len(self.groups[1][1])
        outside = self.groups if tie else self.groups[1:]
        return {m for _, ms in outside for m in ms}


def entropy(counts: Iterable[int]) -> float:
    counts = [c for c in counts if c]
    n = sum(counts)
    return round(-sum(c / n * math.log2(c / n) for c in counts), 6) + 0.0 if n else 0.0


def dataset_type(q: Question) -> str:
    """The conflict type the dataset's truth suggests (for filtering before a label exists)."""
    kinds = {d.label.type for d in q.documents if d.label}
    if "misinfo" in kinds:
        return "misinformation"
    if len(q.gold_answers) > 1:
        return "ambiguity"
    return "noise" if "noise" in kinds else "none"


def case_for(q: Question, position: int, results: dict[str, MethodResult]) -> Case:
    """The case of one question from its methods' results (method -> result): the methods grouped by answer set
    (``backend.agreement.groups``), each group named by its first method's answers."""
    answers = {m: [] if answer_set(r) == ABSTAINS else predicted(r.answers) for m, r in results.items() if not r.error}
    errors = [m for m, r in results.items() if r.error]
    groups = [(" | ".join(answers[ms[0]]) or ABSTAINED, ms) for ms in answer_groups(results)]
    wrong = [m for m, ans in answers.items() if q.gold_answers and not accuracy(ans, q.gold_answers)]
    return Case(question=q, position=position, answers=answers, errors=errors, groups=groups,
                entropy=entropy(len(ms) for _, ms in groups), wrong=wrong, dataset_type=dataset_type(q))


def build_queue(dataset: Dataset, results: dict[tuple[str, str], MethodResult], methods: list[str] | None = None,
                include_agreeing: bool = False) -> list[Case]:
    """The dataset's questions that have results, as cases, most disputed first (entropy, then number of answer
    sets, then dataset order). Only cases where the methods disagree (``backend.agreement``), unless
    ``include_agreeing``. Blind: neither the order nor the membership reads gold answers or labels."""
    wanted = set(methods) if methods is not None else None
    per_question: dict[str, dict[str, MethodResult]] = {}
    for (qid, m), r in results.items():
        if wanted is None or m in wanted:
            per_question.setdefault(qid, {})[m] = r
    cases = []
    for pos, q in enumerate(dataset.questions, 1):
        if q.id in per_question:
            order = methods or sorted(per_question[q.id])
            case = case_for(q, pos, {m: per_question[q.id][m] for m in order if m in per_question[q.id]})
            if include_agreeing or case.disagree:
                cases.append(case)
    return sorted(cases, key=lambda c: (-c.entropy, -len(c.groups), c.position))


def filter_cases(cases: list[Case], labels: dict[str, Label], conflict_type: str | None = None,
                 method: str | None = None, labelled: Labelled = "all", todo: set[str] | None = None) -> list[Case]:
    """Cases by conflict type (the label's when labelled, else the dataset's), by method (it is in a minority
    or wrong) and by whether a label exists. ``labels``: the analyst's own; ``todo``: the cases that still need
    their label (``backend.labels.team.needs``: in a round with overlap, a case others labelled enough is not
    theirs to do); without it, those without a label in ``labels``."""
    out = []
    for c in cases:
        label = labels.get(c.id)
        pending = label is None if todo is None else c.id in todo
        if labelled == "labelled" and label is None or labelled == "unlabelled" and not pending:
            continue
        kind = label.conflict_type if label and label.conflict_type else c.dataset_type
        if conflict_type and kind != conflict_type:
            continue
        if method and method not in c.minority():
            continue
        out.append(c)
    return out


def progress(cases: list[Case], labels: dict[str, Label]) -> tuple[int, int]:
    """(labelled, total) over the queue."""
    return sum(c.id in labels for c in cases), len(cases)


def group_counts(cases: list[Case]) -> Counter:
    return Counter(len(c.groups) for c in cases)
