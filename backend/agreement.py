"""The one definition of agreement between methods, used by Evaluate's "methods disagree" filter, the Label queue,
Inspect's matrix and the What-if counts (issue 27).

Two methods agree on a question when their answer sets match: the same answers after SQuAD normalisation
(``backend.answers.normalize``: case, punctuation and articles aside), in any order and multiplicity. Abstaining is an
answer of its own (it agrees with another abstention only). A method that failed has no answer: it neither agrees
nor disagrees (``None``), and is left out of the groups.
"""

from __future__ import annotations

from collections.abc import Mapping

from backend.answers import normalize
from backend.schema import MethodResult
from backend.scoring import predicted

#: The answer set of a method that abstained (no answer): matches only another abstention.
ABSTAINS: frozenset[str] = frozenset({"\u2205 abstains"})

AnswerSet = frozenset[str]


def answers_set(answers: list[str], abstained: bool = False) -> AnswerSet:
    """The answer set of an answer list: the normalised answers that count (``backend.scoring.predicted``: "I don't
    know" and blanks are no answer); ``ABSTAINS`` when the method abstained or none counts."""
    if abstained:
        return ABSTAINS
    return frozenset(normalize(a) for a in predicted(answers)) or ABSTAINS


def answer_set(result: MethodResult) -> AnswerSet | None:
    """The normalised answers of ``result``; ``ABSTAINS`` when it gave none; None when it failed."""
    if result.error:
        return None
    return answers_set(result.answers, result.abstained)


def agree(a: MethodResult, b: MethodResult) -> bool | None:
    """Whether two methods' answer sets match (None: either failed)."""
    sa, sb = answer_set(a), answer_set(b)
    if sa is None or sb is None:
        return None
    return sa == sb


def groups(results: Mapping[str, MethodResult]) -> list[list[str]]:
    """The methods that answered, grouped by answer set: largest group first, then in the order given."""
    by_set: dict[AnswerSet, list[str]] = {}
    for name, result in results.items():
        if (s := answer_set(result)) is not None:
            by_set.setdefault(s, []).append(name)
    return sorted(by_set.values(), key=len, reverse=True)


def disagree(results: Mapping[str, MethodResult]) -> bool:
    """Whether the methods that answered split into more than one answer set."""
    return len(groups(results)) > 1
