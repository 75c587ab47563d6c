"""One question's scores by the papers' own rules, beside the project's lenient verdict: what the HTML report, the
Inspect table and ``inspect --json`` show per method (pure; ``backend.scoring`` computes, this module words).

Each method is scored by its own paper's metric (``MethodSpec.paper_metric``: "EM (SQuAD)" for RA-RAG, BRIDGE and
the baselines, "accuracy (gold in response)" for Astute RAG, "accuracy (RAMDocs exact match)" for MADAM-RAG;
RC-RAG's own is risk and coverage, of which one question gives its fold: AK, AD, UK or UD). The verdict
(``scoring.verdict``) is the project's lenient match, none of the papers'.
"""

from __future__ import annotations

from backend.evaluate import own_metric  # one lookup of MethodSpec.paper_metric, the summary's
from backend.schema import MethodResult, Question
from backend.scoring import PAPER_METRICS, RISK_METRIC_NAME, paper_score, refused, risk_fold, verdict

#: What each RC-RAG fold means for one question (docs/methods/counterfactual.md §5.1).
FOLD_WORDS = {"AK": "a right answer kept", "AD": "a right answer discarded", "UK": "a wrong answer kept",
              "UD": "a wrong answer discarded"}


def paper_metrics(result: MethodResult, question: Question) -> dict[str, float | None]:
    """Every paper's metric of one result on its question, ``{key: value in [0, 1]}``: None for an error, and for a
    question without gold answers unless it is labelled unanswerable (``scoring.paper_score``)."""
    if result.error:
        return dict.fromkeys(PAPER_METRICS)
    return {key: paper_score(key, result.answers, question, refused(result)) for key in PAPER_METRICS}


def value_text(key: str, value: float | None) -> str:
    """"yes" / "no" for a right-or-wrong metric, F1 to two decimals, "n/a" without gold answers."""
    if value is None:
        return "n/a"
    if key == "squad_f1":
        return f"{value:.2f}"
    return "yes" if value >= 1 else "no"


def own_metric_text(result: MethodResult, question: Question, method: str | None = None) -> tuple[str, str] | None:
    """The method's own paper's metric on this question, as (its paper's name, the value in words), e.g.
    ("EM (SQuAD)", "no"), ("risk / coverage", "UK: a wrong answer kept"); ("…", "error") for an error; None for a
    method no paper scores. ``method``: the registry name (default: the result's)."""
    key = own_metric(method or result.method)
    if key is None:
        return None
    if key == "risk":
        if result.error:
            return RISK_METRIC_NAME, "error"
        fold = risk_fold(result, question)
        return RISK_METRIC_NAME, f"{fold}: {FOLD_WORDS[fold]}" if fold else "n/a (no gold answers)"
    name = PAPER_METRICS[key].name
    if result.error:
        return name, "error"
    return name, value_text(key, paper_metrics(result, question)[key])


def own_metric_cell(result: MethodResult, question: Question, method: str | None = None) -> str:
    """``own_metric_text`` in one cell: "EM (SQuAD): no"; "—" for a method no paper scores."""
    named = own_metric_text(result, question, method)
    return f"{named[0]}: {named[1]}" if named else "—"


def inspect_metrics(result: MethodResult, question: Question, method: str | None = None) -> dict[str, object]:
    """One method's scores for ``inspect --json``: ``own_metric`` (the key of its paper's metric), ``paper_metrics``
    (every paper's metric, ``{key: value in [0, 1] or None}``), the lenient ``verdict`` and, for RC-RAG, the question's
    risk ``fold``."""
    key = own_metric(method or result.method)
    out: dict[str, object] = {"own_metric": key, "paper_metrics": paper_metrics(result, question),
                              "verdict": verdict(result, question)}
    if key == "risk":
        out["fold"] = None if result.error else risk_fold(result, question)
    return out


__all__ = ["FOLD_WORDS", "own_metric", "paper_metrics", "value_text", "own_metric_text", "own_metric_cell",
           "inspect_metrics"]
