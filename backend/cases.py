"""Cases worth looking at: the questions of a set of results that tell something about the methods (issue 27).

Pure: from each question's method results (an evaluation's rows, or a run on the fly) and, when there is one, an
attack's rows, ``find_cases`` picks the telling kinds (``KINDS``):

* ``one_right`` — exactly one method right (of at least two scored);
* ``all_wrong`` — every scored method wrong (at least two);
* ``talked_out`` — MADAM's debate talked an agent out of the right answer: one of its answers in an earlier round
  names a gold answer, its last one does not;
* ``attack_fooled`` — the attack fooled every method: on an attacked copy of the question, every method that
  answered gave the attack's target (``backend.whatif.attack.outcome``);
* ``source_split`` — the methods split by source: two answer groups (``backend.agreement.groups``) that rest on
  disjoint sets of sources (``MethodResult.support`` → each document's source).

"Right" is Evaluate's: the verdict is correct or correct + extras (strict EM, ``backend.scoring.verdict``); on a
question labelled unanswerable, abstaining. These use ground truth (all but ``source_split``): they are for the
analyst with the truth shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from backend import files
from backend.agreement import answer_set, disagree, groups
from backend.methods import title
from backend.paths import SAMPLE_DATA
from backend.schema import MethodResult, Question
from backend.scoring import answer_kind, refused, verdict

KINDS: dict[str, str] = {
    "one_right": "Only one method right",
    "all_wrong": "All wrong",
    "talked_out": "Debate talked an agent out of the right answer",
    "attack_fooled": "The attack fooled every method",
    "source_split": "The methods split by source",
}
#: The kinds that need ground truth (``source_split`` reads only the methods' answers and documents).
TRUTH_KINDS = frozenset(KINDS) - {"source_split"}
#: Verdicts that count as right (Evaluate's "right" column: strict EM).
RIGHT = ("correct", "correct + extras")
#: How much of an answer a one-line why quotes.
QUOTE = 40

QuestionResults = Mapping[str, MethodResult]   # method -> result


@dataclass(frozen=True)
class Case:
    kind: str                      # a key of KINDS
    question_id: str
    right: tuple[str, ...]         # the methods that were right
    scored: tuple[str, ...]        # the methods whose rightness is known
    why: str                       # one line


_t = title  # a method's display name, short for the many sentences below


def _q(text: str) -> str:
    text = " ".join(text.split())
    return f"“{text[:QUOTE]}…”" if len(text) > QUOTE else f"“{text}”"


def is_right(result: MethodResult, question: Question) -> bool | None:
    """Evaluate's rule: strict EM on a question with gold answers; abstaining on one labelled unanswerable; None
    when it cannot be told (an error, no truth)."""
    if result.error:
        return None
    if question.gold_answers:
        return verdict(result, question) in RIGHT
    if question.meta.get("unanswerable"):
        return refused(result)
    return None


def tally(question: Question, results: QuestionResults) -> tuple[list[str], list[str]]:
    """(the methods right, the methods scored) on ``question``."""
    known = {m: ok for m, r in results.items() if (ok := is_right(r, question)) is not None}
    return [m for m, ok in known.items() if ok], list(known)


def _talked_out(question: Question, results: QuestionResults) -> str | None:
    for name, result in results.items():
        trace = result.trace
        if trace is None or getattr(trace, "kind", None) != "madam" or result.error:
            continue
        last: dict[int, tuple[int, str | None]] = {}
        first_gold: dict[int, tuple[int, str]] = {}
        for rnd in trace.rounds:
            for turn in rnd.turns:
                last[turn.agent] = (rnd.round, turn.answer)
                if turn.answer and answer_kind(turn.answer, question) == "gold":
                    first_gold.setdefault(turn.agent, (rnd.round, turn.answer))
        for agent, (rnd, answer) in sorted(first_gold.items()):
            end, final = last[agent]
            if end > rnd and (not final or answer_kind(final, question) != "gold"):
                then = _q(final) if final else "no answer"
                return f"{_t(name)}: agent {agent} said {_q(answer)} (right) in round {rnd}, then {then} in round {end}"
    return None


def _source_split(question: Question, results: QuestionResults) -> str | None:
    source_of = {d.id: d.source_name for d in question.documents}
    rested: list[tuple[list[str], set[str], str]] = []
    for group in groups(results):
        sources = {source_of[d] for m in group for docs in results[m].support.values() for d in docs
                   if d in source_of}
        if sources:
            answers = sorted(answer_set(results[group[0]]) or ())
            rested.append((group, sources, results[group[0]].answers[0] if results[group[0]].answers else
                           answers[0] if answers else ""))
    for i, (ga, sa, aa) in enumerate(rested):
        for gb, sb, ab in rested[i + 1:]:
            if not sa & sb:
                return (f"{', '.join(map(_t, ga))}: {_q(aa)} from {_few(sa)}; "
                        f"{', '.join(map(_t, gb))}: {_q(ab)} from {_few(sb)}")
    return None


def _few(names: Iterable[str], n: int = 2) -> str:
    names = sorted(names)
    return ", ".join(names[:n]) + (f" +{len(names) - n}" if len(names) > n else "")


def question_cases(question: Question, results: QuestionResults) -> list[Case]:
    """The telling kinds of one question (every kind but ``attack_fooled``), in ``KINDS`` order."""
    right, scored = tally(question, results)
    found: list[Case] = []

    def add(kind: str, why: str) -> None:
        found.append(Case(kind, question.id, tuple(right), tuple(scored), why))

    if len(scored) >= 2 and len(right) == 1:
        add("one_right", f"only {_t(right[0])} is right; {len(scored) - 1} others are not")
    if len(scored) >= 2 and not right:
        add("all_wrong", f"none of {len(scored)} methods is right")
    if (why := _talked_out(question, results)) is not None:
        add("talked_out", why)
    if (why := _source_split(question, results)) is not None:
        add("source_split", why)
    return found


def attack_cases(questions: Mapping[str, Question], rows: Iterable) -> list[Case]:
    """``attack_fooled`` cases from an attack's rows (``backend.outputs.AttackRow``): the smallest k at which every
    method that answered (at least two) gave the target. ``questions``: the clean questions by id."""
    from backend.whatif.attack import outcome  # the attack's own success rule

    by: dict[tuple[str, int], list] = {}
    for row in rows:
        if row.k and row.attack_of in questions and row.target:
            by.setdefault((row.attack_of, row.k), []).append(row)
    found: dict[str, Case] = {}
    for (qid, k), group in sorted(by.items()):
        answered = [r for r in group if not r.result.error]
        if qid in found or len(answered) < 2:
            continue
        q = questions[qid]
        if all(outcome(r.result, q, r.target).succeeded for r in answered):
            names = tuple(r.method for r in answered)
            found[qid] = Case("attack_fooled", qid, (), names,
                              f"{k} planted passage{'s' if k > 1 else ''} for {_q(group[0].target)} fooled all "
                              f"{len(answered)} methods")
    return list(found.values())


def by_question(results: Mapping[tuple[str, str], MethodResult], methods: Iterable[str] | None = None
                ) -> dict[str, dict[str, MethodResult]]:
    """An evaluation's ``{(question id, method): result}`` as ``{question id: {method: result}}`` (``methods``
    order when given)."""
    out: dict[str, dict[str, MethodResult]] = {}
    order = list(methods) if methods is not None else None
    for (qid, m), r in results.items():
        out.setdefault(qid, {})[m] = r
    if order is not None:
        out = {q: {m: rs[m] for m in order if m in rs} for q, rs in out.items()}
    return out


def find_cases(questions: Iterable[Question], results: Mapping[str, QuestionResults], attack_rows: Iterable = ()
               ) -> list[Case]:
    """Every telling case of ``questions`` (those with results), question by question in the given order, then the
    attack's."""
    questions = list(questions)
    found = [c for q in questions if (rs := results.get(q.id)) for c in question_cases(q, rs)]
    return found + attack_cases({q.id: q for q in questions}, attack_rows)


def by_kind(cases: Iterable[Case]) -> dict[str, list[Case]]:
    """The cases grouped by kind, in ``KINDS`` order (kinds with none left out)."""
    out: dict[str, list[Case]] = {k: [] for k in KINDS}
    for c in cases:
        out[c.kind].append(c)
    return {k: v for k, v in out.items() if v}


#: The featured kinds, most telling first: what the app opens on (``featured``).
FEATURE_ORDER = ("one_right", "source_split", "talked_out", "all_wrong")


def featured(cases: Iterable[Case]) -> Case | None:
    """The most telling case: the first of the first kind in ``FEATURE_ORDER`` that has one."""
    kinds = by_kind(cases)
    return next((kinds[k][0] for k in FEATURE_ORDER if k in kinds), None)


def mark(question: Question, results: QuestionResults, show_truth: bool) -> str:
    """A short mark for the question picker: "≠3" when the methods disagree (``backend.agreement``: 3 answer sets,
    an abstention one of them), and with the truth on how many were right ("✓ 3/7"). "" when there is nothing to
    say."""
    parts = [f"≠{len(groups(results))}"] if disagree(results) else []
    if show_truth:
        right, scored = tally(question, results)
        if scored:
            parts.append(f"✓ {len(right)}/{len(scored)}")
    return " ".join(parts)


# --- the question the app opens on ----------------------------------------------------------------------------

#: Per bundled dataset, its featured case (``scripts/featured_cases.py`` computes it with the offline model;
#: tests/test_cases.py recomputes it): ``{dataset: {"question": id, "kind": kind, "model": model}}``.
FEATURED_FILE = SAMPLE_DATA / "featured.json"


def featured_question(dataset: str) -> str | None:
    """The id of the question the app opens on for the bundled ``dataset``; None when it has none (or the file
    cannot be read: then the first question, as before)."""
    try:
        entry = json.loads(files.read_text(FEATURED_FILE)).get(dataset)
    except (files.FileRefused, OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None
    question = entry.get("question") if isinstance(entry, dict) else None
    return question if isinstance(question, str) else None


__all__ = ["Case", "FEATURED_FILE", "FEATURE_ORDER", "KINDS", "RIGHT", "TRUTH_KINDS", "attack_cases", "by_kind",
           "by_question", "featured", "featured_question", "find_cases", "is_right", "mark", "question_cases", "tally"]
