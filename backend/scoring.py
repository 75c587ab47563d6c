"""THE definition of verdicts and metrics: every view, the CLI and batch evaluation score through here.

Ground truth (gold and wrong answers, document labels, true reliabilities) meets method output only in this
module. Answers are compared after SQuAD normalisation (``backend.answers.normalize``: lower case, punctuation
deleted, no articles), so "U.S." is "US" and "3,559" is "3559".

**Which gold or wrong answer a predicted answer names** (``answers.names``; every answer metric, verdict and
answer kind): the reference equals the answer (also as the same words in another order: "December 21, 1906" for
"21 December 1906") or is inside it as a whole-word span ("the Chicago Bulls", "born February 17, 1963" for
"1963"); failing that, the answer is a whole-word span of exactly one reference ("3,559"
for "3,559 people", "Bulls" for "Chicago Bulls"; "Abingdon" names neither "Abingdon, Illinois" nor "Abingdon,
Virginia"). Shared words alone never count: the token-F1 ≥ 0.5 rule used before took "Washington Irving" for
"George Washington" and the look-alike "10,000 people" for "3,559 people".

Metrics of one answer list against a question (the papers' multi-answer metrics, docs/methods/madam.md §3.6,
§8.7–8.8):

* ``strict_em`` — the paper's exact match: **every** gold answer is named by a predicted answer and **no**
  predicted answer names a wrong (misinformation) answer. Extra answers that are neither gold nor listed as wrong
  do not fail it.
* ``accuracy`` — at least one predicted answer names a gold answer. Wrong answers and missing gold answers are
  not penalised.
* ``precision_recall_f1`` — precision = predicted answers naming a gold answer / predicted answers (0 when
  none), recall = gold answers named / gold answers, F1 their harmonic mean (0 when both are 0).

What is predicted: unknowns ("I don't know", "unknown", blanks) are dropped and duplicates (after
normalisation) kept once.

**Which wrong answers count.** A listed wrong answer that equals, contains or is contained in a gold answer
(``answers.contains_match``) is dropped from the wrong list before scoring: such an answer cannot be told apart
from the gold answer it overlaps, so predicting it already counts as predicting that gold answer. (Under
``exact_match``, RA-RAG's EM taxonomy, only a wrong answer identical to a gold one is dropped.) In the bundled
``ramdocs_dev`` this affects 3 questions ("Hindi", "Division III" and "Infantry Regiment" listed as both gold and
wrong); the other bundled datasets have none. Every other listed wrong answer counts, wherever it appears
among the predicted answers ("Girls" beside the gold "All-girls" counts: normalised, "allgirls" does not hold it).

**RC-RAG's risk folds** label the candidate answer by the released code's rule instead (``risk_fold``,
``answers.rc_rag_correct``: exact, the raw gold string inside the answer, token F1 > 0.7 or ROUGE-L recall > 0.7,
" or " golds split), as the paper's benchmark is labelled (docs/methods/counterfactual.md §5.1).

**An answer the method could not read** (``Trace.invalid_answer``: BRIDGE's responder reply with no readable
option, its spec's P17) is wrong and never an abstention: verdict ``unreadable``, not ``refused`` (so never
right on a question whose right answer is to abstain), fold UK.

``verdict`` turns a method's result into the label the dashboard shows: ``correct`` (strict EM and nothing
else: every predicted answer is a gold answer), ``correct + extras`` (strict EM, but with extra answers that are
neither gold nor listed as wrong, e.g. "hockey; football" for the gold "Football": the paper's strict EM counts it
correct, and the verdict says what else was said), ``partly correct`` (accuracy but not strict EM: a gold answer
among others, or one of several missing), ``wrong``, ``unreadable`` (wrong: no readable answer in the reply),
``abstained``, ``error``, or ``no gold answers``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from backend.answers import contains_match, exact_match, is_idk, names, normalize, rc_rag_correct, token_f1
from backend.schema import Document, MethodResult, Question, ReliabilityEstimate, Source

Verdict = Literal["correct", "correct + extras", "partly correct", "wrong", "unreadable", "abstained", "error",
                  "no gold answers"]
AnswerKind = Literal["gold", "wrong", "other", "unknown"]


def predicted(answers: list[str]) -> list[str]:
    """The answer list to score: unknowns and blanks dropped, duplicates (normalised) kept once."""
    seen, out = set(), []
    for a in answers:
        n = normalize(a or "")
        if n and not is_idk(a) and n not in seen:
            seen.add(n)
            out.append(a)
    return out


def unreadable(result: MethodResult) -> bool:
    """The method's answer is invalid: its reply held no answer it could read (``Trace.invalid_answer``)."""
    return result.trace is not None and result.trace.invalid_answer()


def refused(result: MethodResult) -> bool:
    """The method abstained or gave no answer that counts (``predicted``): an abstention for every metric. An
    unreadable answer is not an abstention (module docstring)."""
    return (result.abstained or not predicted(result.answers)) and not unreadable(result)


def counted_wrong(gold: list[str], wrong: list[str], match: Callable[[str, str], bool] = contains_match
                  ) -> list[str]:
    """The wrong answers that count: those that ``match`` a gold answer are dropped (module docstring)."""
    return [w for w in wrong if normalize(w) and not any(match(w, g) for g in gold)]


def named_gold(answers: list[str], gold: list[str]) -> list[str]:
    """The gold answers some predicted answer names (``answers.names``)."""
    hit = {normalize(g) for a in predicted(answers) for g in names(a, gold)}
    return [g for g in gold if normalize(g) in hit]


def strict_em(answers: list[str], gold: list[str], wrong: list[str]) -> bool:
    """Every gold answer named and no counted wrong answer named. No gold answers: never correct."""
    gold = [g for g in gold if normalize(g)]
    if not gold:
        return False
    bad = counted_wrong(gold, wrong)
    return len(named_gold(answers, gold)) == len(gold) and not any(names(p, bad) for p in predicted(answers))


def accuracy(answers: list[str], gold: list[str]) -> bool:
    """At least one predicted answer names a gold answer (``answers.names``)."""
    return any(names(p, gold) for p in predicted(answers))


def precision_recall_f1(answers: list[str], gold: list[str]) -> tuple[float, float, float]:
    pred = predicted(answers)
    gold = [g for g in gold if normalize(g)]
    p = sum(bool(names(x, gold)) for x in pred) / len(pred) if pred else 0.0
    r = len(named_gold(pred, gold)) / len(gold) if gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def extra_answers(answers: list[str], gold: list[str]) -> list[str]:
    """Predicted answers that name no gold answer."""
    return [a for a in predicted(answers) if not names(a, gold)]


def answer_kind(answer: str | None, question: Question, match: Callable[[str, str], bool] | None = None
                ) -> AnswerKind:
    """One answer against the question's lists: gold, wrong (a counted wrong answer), other, or unknown.
    ``match``: None (default) for ``answers.names``, as the answer metrics; ``exact_match`` for RA-RAG's EM
    taxonomy."""
    if not answer or is_idk(answer) or not normalize(answer):
        return "unknown"
    gold = question.gold_answers
    if match is None:
        bad = counted_wrong(gold, question.wrong_answers)
        return "gold" if names(answer, gold) else "wrong" if names(answer, bad) else "other"
    if any(match(answer, g) for g in gold):
        return "gold"
    if any(match(answer, w) for w in counted_wrong(gold, question.wrong_answers, match)):
        return "wrong"
    return "other"


def verdict(result: MethodResult, question: Question) -> Verdict:
    """The truth overlay for one method's result (module docstring)."""
    if result.error:
        return "error"
    if unreadable(result):
        return "unreadable"
    if result.abstained or not result.answers:
        return "abstained"
    if not question.gold_answers:
        return "no gold answers"
    if strict_em(result.answers, question.gold_answers, question.wrong_answers):
        return "correct + extras" if extra_answers(result.answers, question.gold_answers) else "correct"
    return "partly correct" if accuracy(result.answers, question.gold_answers) else "wrong"


def evaluation(answers: list[str], question: Question) -> dict[str, Any]:
    """Every metric of one answer list, plus what is missing and which predicted answers are wrong."""
    p, r, f1 = precision_recall_f1(answers, question.gold_answers)
    named = named_gold(answers, question.gold_answers)
    return {"strict_em": strict_em(answers, question.gold_answers, question.wrong_answers),
            "accuracy": accuracy(answers, question.gold_answers),
            "precision": round(p, 3), "recall": round(r, 3), "f1": round(f1, 3),
            "missing gold": [g for g in question.gold_answers if g not in named],
            "included wrong": [a for a in answers if answer_kind(a, question) == "wrong"]}


# --- the papers' own metrics, under the papers' names ------------------------------------------------------------
#
# The project's ``accuracy`` and ``strict_em`` above read answers with ``answers.names`` (the lenient match: any order,
# a gold inside the answer, a shorter form of exactly one gold): the right rule for a dashboard, none of the papers'.
# The summary calls them "answer match (lenient)" and "all gold, no wrong (lenient)"; each paper's table is compared
# with the metric below that reproduces its rule (README, "Which number to compare with which paper").

def prediction_text(answers: list[str]) -> str:
    """The method's answer as one text, as the papers score it: its predicted answers joined by ", " (one answer for
    every single-answer method); "" for an abstention ("I don't know" is no answer: the papers count it wrong)."""
    return ", ".join(predicted(answers))


def squad_em(answers: list[str], gold: list[str]) -> bool:
    """SQuAD exact match (Rajpurkar et al. 2016), the max over gold answers: the normalised answer equals a normalised
    gold answer. RA-RAG's metric (docs/methods/ra_rag.md §6: Tables 1–9, "IDK counts as wrong") and BRIDGE's EM on
    RQA and HQA_P (docs/methods/bridge.md §6, Table 1)."""
    text = normalize(prediction_text(answers))
    return bool(text) and any(text == normalize(g) for g in gold if normalize(g))


def squad_f1(answers: list[str], gold: list[str]) -> float:
    """SQuAD token F1, the max over gold answers (0 for an abstention): reported beside EM, as SQuAD's script does."""
    text = prediction_text(answers)
    return max((token_f1(text, g) for g in gold if normalize(g)), default=0.0) if text else 0.0


def gold_in_response(answers: list[str], gold: list[str]) -> bool:
    """Astute RAG's accuracy (docs/methods/astute.md §5 "Metric", Tables 1, 3–5, 7): the response *contains* a gold
    answer, the answer "extracted from the special tokens" (the final answer the method read). The spec's choice
    (P12): SQuAD normalisation, then a substring test over any gold variant, as characters (so "1" is inside "1990":
    the paper's rule is a substring test, and the spec keeps it literal)."""
    text = normalize(prediction_text(answers))
    return bool(text) and any(normalize(g) in text for g in gold if normalize(g))


def ramdocs_em(answers: list[str], gold: list[str], wrong: list[str]) -> bool:
    """RAMDocs exact match, which MADAM-RAG calls accuracy (docs/methods/madam.md §3.6, Table 1): the output contains
    **all** gold answers and **no** wrong (misinformation) answer.

    Which rule decides the containment: the paper's text, since the released code has no evaluator (§3.6: "[C] has no
    evaluator"), read as the spec's §8.7 decides: against the parsed answer list, never the explanation (explanations
    name the rejected misinformation: "Agent 3 … 1998"); an answer matches a gold or wrong answer when their
    normalised forms are equal or one holds the other as whole words (``answers.contains_match``: "3,559" and "3,559
    people"); a wrong answer equal to a gold answer is ignored. No gold answers: never correct."""
    gold = [g for g in gold if normalize(g)]
    if not gold:
        return False
    pred = predicted(answers)
    bad = [w for w in wrong if normalize(w) and not any(exact_match(w, g) for g in gold)]
    all_gold = all(any(contains_match(p, g) for p in pred) for g in gold)
    return all_gold and not any(contains_match(p, w) for p in pred for w in bad)


@dataclass(frozen=True)
class PaperMetric:
    """One paper's answer metric, as its table reports it."""

    key: str           # the summary's key
    name: str          # the paper's name for it
    papers: str        # whose tables report it
    rule: str          # the rule, in a line
    tables: str        # which published table a figure of ours is set beside
    score: Callable[[list[str], Question], float]   # one answer list against one question, in [0, 1]


PAPER_METRICS: dict[str, PaperMetric] = {m.key: m for m in (
    PaperMetric("squad_em", "EM (SQuAD)", "RA-RAG, BRIDGE", "the normalised answer equals a gold answer (max over "
                "gold); \"I don't know\" is wrong", "RA-RAG Tables 1–9; BRIDGE Table 1 (RQA, HQA_P EM)",
                lambda a, q: float(squad_em(a, q.gold_answers))),
    PaperMetric("squad_f1", "F1 (SQuAD)", "SQuAD's script, beside EM", "token F1 against the best gold answer",
                "no paper table (shown beside EM)", lambda a, q: squad_f1(a, q.gold_answers)),
    PaperMetric("gold_in_response", "accuracy (gold in response)", "Astute RAG", "the normalised response contains a "
                "normalised gold answer (substring)", "Astute RAG Tables 1, 3–5, 7",
                lambda a, q: float(gold_in_response(a, q.gold_answers))),
    PaperMetric("ramdocs_em", "accuracy (RAMDocs exact match)", "MADAM-RAG", "every gold answer and no wrong answer "
                "in the parsed answer list (equal or whole-word containment)", "MADAM-RAG Table 1 (RAMDocs, FaithEval, "
                "AmbigDocs)", lambda a, q: float(ramdocs_em(a, q.gold_answers, q.wrong_answers))),
)}
#: RC-RAG's own metrics are its risk and coverage (``risk_metrics`` below: its Tables 1–3).
RISK_METRIC_NAME = "risk / coverage"


def paper_score(key: str, answers: list[str], question: Question, abstained: bool) -> float | None:
    """``PAPER_METRICS[key]`` of one answer list; on a question labelled unanswerable (no gold answers) or whose gold
    answer is "I don't know" (BRIDGE's refuse-to-answer items) an abstention is right (1) and anything else wrong (0),
    as BRIDGE scores those items; None without gold answers otherwise."""
    if not question.gold_answers:
        return (1.0 if abstained else 0.0) if question.meta.get("unanswerable") else None
    if all(is_idk(g) for g in question.gold_answers):  # BRIDGE's refuse-to-answer items: the gold option is "I don't
        return 1.0 if abstained else 0.0           # know", so refusing is right there and only there (bridge.md §6)
    return PAPER_METRICS[key].score(answers, question)


# --- selective answering: RC-RAG's risk metrics (docs/methods/counterfactual.md §5.1-5.2) ----------------------------

Fold = Literal["AK", "AD", "UK", "UD"]
FOLDS: tuple[Fold, ...] = ("AK", "AD", "UK", "UD")
RISK_METRICS = ("risk", "carefulness", "alignment", "coverage")
#: In the released RC-RAG code, not in the paper.
CODE_ONLY_METRICS = ("overcaution", "recall")


def candidate_answers(result: MethodResult) -> list[str] | None:
    """The answer a method had before deciding whether to give it: RC-RAG's RAG answer (kept or not); for any
    other method its answers when it answered, and None (unknown) when it abstained."""
    if result.trace is not None and (candidate := result.trace.candidate_answers()) is not None:
        return candidate
    if result.abstained or not predicted(result.answers):
        return None
    return result.answers


def answerable(answers: list[str], gold: list[str]) -> bool:
    """RC-RAG's label of a candidate answer: some answer is correct by the released code's rule
    (``answers.rc_rag_correct``), not by ``accuracy``'s."""
    return any(rc_rag_correct(a, gold) for a in predicted(answers))


def risk_fold(result: MethodResult, question: Question, reference: MethodResult | None = None) -> Fold | None:
    """Answerable (A: the candidate answer is correct, ``answerable``) or not (U), kept (K) or discarded (D).

    RC-RAG labels a question by whether the RAG answer is right (docs/methods/counterfactual.md §5.1). A method
    that abstains without a candidate answer (RA-RAG, Astute RAG) is labelled by ``reference``'s candidate answer
    (the risk sweep passes RC-RAG's own RAG answer to the same question), else not at all (None). An unreadable
    answer was given, and is wrong: UK. None too for errors and questions without gold answers."""
    if result.error or not question.gold_answers:
        return None
    if unreadable(result):
        return "UK"
    answers = candidate_answers(result)
    if answers is None and reference is not None and not reference.error:
        answers = candidate_answers(reference) or reference.answers   # a reference that refused: U
    if answers is None:
        return None
    kept = not result.abstained and bool(predicted(result.answers))
    label = "A" if answerable(answers, question.gold_answers) else "U"
    return label + ("K" if kept else "D")  # type: ignore[return-value]


def risk_metrics(folds: dict[str, int]) -> dict[str, float | None]:
    """Percentages from fold counts: risk = UK/(AK+UK), carefulness = UD/(UK+UD), alignment = (AK+UD)/N,
    coverage = (AK+UK)/N; overcaution = AD/(AD+UD) and recall = AK/(AK+AD) ([code] only). None when a
    denominator is 0 (shown "n/a")."""
    ak, ad, uk, ud = (int(folds.get(f, 0)) for f in FOLDS)
    n = ak + ad + uk + ud

    def pct(num: int, den: int) -> float | None:
        return round(100 * num / den, 2) if den else None

    return {"risk": pct(uk, ak + uk), "carefulness": pct(ud, uk + ud), "alignment": pct(ak + ud, n),
            "coverage": pct(ak + uk, n), "overcaution": pct(ad, ad + ud), "recall": pct(ak, ak + ad)}


def count_folds(folds: list[Fold | None]) -> dict[str, int]:
    """Fold counts (unlabelled questions left out)."""
    return {f: sum(1 for x in folds if x == f) for f in FOLDS}


def doc_kind(doc: Document) -> str:
    """A document's true type for overlays: correct / misinfo / noise, or unlabelled."""
    return doc.label.type if doc.label else "unlabelled"


# --- RA-RAG stage 1 against the true source reliabilities ---------------------------------------------

def pearson(xs: list[float], ys: list[float]) -> float | None:
    """Pearson r; None with fewer than two points or no variance."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def reliability_vs_truth(est: ReliabilityEstimate, truth: list[Source]) -> dict[str, Any]:
    """``{"sources": [...], "mae", "pearson_r", "iterations"}``: per source ŵ, v, true p_i (null when
    unknown), counts and |ŵ − p|; MAE and r over sources with both an estimate and a true value."""
    true = {s.name: s.true_reliability for s in truth}
    rows, pairs = [], []
    for s in est.sources:
        p = true.get(s.name)
        both = p is not None and s.estimated is not None
        rows.append({"name": s.name, "estimated": s.estimated, "weight": s.weight, "true_reliability": p,
                     "abs_error": round(abs(s.estimated - p), 6) if both else None,
                     "answered": s.answered, "agreed": s.agreed, "idk": s.idk, "no_documents": s.no_documents})
        if both:
            pairs.append((s.estimated, p))
    mae = round(sum(abs(a - b) for a, b in pairs) / len(pairs), 6) if pairs else None
    r = pearson([a for a, _ in pairs], [b for _, b in pairs])
    return {"sources": rows, "mae": mae, "pearson_r": None if r is None else round(r, 6),
            "iterations": est.iterations}


__all__ = ["Verdict", "AnswerKind", "predicted", "unreadable", "refused", "counted_wrong", "named_gold", "strict_em",
           "accuracy", "precision_recall_f1", "extra_answers", "answer_kind", "verdict", "evaluation", "answerable",
           "risk_fold", "doc_kind", "pearson", "reliability_vs_truth", "exact_match", "prediction_text", "squad_em",
           "squad_f1", "gold_in_response", "ramdocs_em", "PaperMetric", "PAPER_METRICS", "paper_score"]
