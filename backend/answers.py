"""Answer normalisation, matching and clustering, shared by methods, evaluation and the offline model.

Matching follows the papers' lenient rule (RAMDocs/MADAM, the reader note): after lower-casing and
dropping punctuation and articles, two answers match when one contains the other as a word sequence
or their token F1 is at least 0.5. ``strict`` keeps only the F1 rule.

Multi-answer metrics (MADAM-RAG/RAMDocs): ``strict_em`` (all gold answers, no wrong answer; matching by
``contains_match``, containment without the F1 rule), ``accuracy`` (any gold answer) and
``precision_recall_f1``.
"""

from __future__ import annotations

import re
import string
from collections import Counter

from backend.llm.formats import is_idk

_ARTICLES = {"a", "an", "the"}
_PUNCT = re.compile(f"[{re.escape(string.punctuation)}‘’“”–—]")


def normalize(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation, no articles, single spaces."""
    words = _PUNCT.sub(" ", text.lower()).split()
    return " ".join(w for w in words if w not in _ARTICLES)


def token_f1(a: str, b: str) -> float:
    ta, tb = normalize(a).split(), normalize(b).split()
    common = sum((Counter(ta) & Counter(tb)).values())
    if not ta or not tb or common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


def _contains(a: str, b: str) -> bool:
    """True when word sequence b occurs inside word sequence a."""
    return f" {b} " in f" {a} " if b else False


def exact_match(a: str, b: str) -> bool:
    return normalize(a) == normalize(b) and bool(normalize(a))


def matches(a: str, b: str, strict: bool = False) -> bool:
    na, nb = normalize(a), normalize(b)
    if not na or not nb:
        return False
    if not strict and (_contains(na, nb) or _contains(nb, na)):
        return True
    return token_f1(a, b) >= 0.5


def matches_any(answer: str, references: list[str], strict: bool = False) -> bool:
    return any(matches(answer, r, strict) for r in references)


def cluster(answers: list[str]) -> list[list[int]]:
    """Group answer indices whose normalised forms are equal or contain one another (first-come order)."""
    clusters: list[list[int]] = []
    keys: list[str] = []
    for i, a in enumerate(answers):
        na = normalize(a)
        for c, key in enumerate(keys):
            if na and (na == key or _contains(na, key) or _contains(key, na)):
                clusters[c].append(i)
                break
        else:
            clusters.append([i])
            keys.append(na)
    return clusters


# --- multi-answer metrics (MADAM-RAG / RAMDocs, madam-rag.md §3.6, §8.7-8.8) ------------------------

def contains_match(a: str, b: str) -> bool:
    """Normalised equality or word-sequence containment either way, without the token-F1 rule: F1 would
    make "3,559 people" match the wrong answer "10,000 people" (F1 = 0.5). Used by the strict metrics."""
    na, nb = normalize(a), normalize(b)
    return bool(na and nb) and (_contains(na, nb) or _contains(nb, na))


def _predicted(predicted: list[str]) -> list[str]:
    """The answer list to score: unknowns and blanks dropped, duplicates (normalised) kept once."""
    seen, out = set(), []
    for p in predicted:
        n = normalize(p or "")
        if n and not is_idk(p) and n not in seen:
            seen.add(n)
            out.append(p)
    return out


def strict_em(predicted: list[str], gold: list[str], wrong: list[str]) -> bool:
    """The paper's exact match for multi-answer questions: every gold answer is among the predicted
    answers and no predicted answer is a wrong (misinformation) answer. Matching is ``contains_match``
    on the answer list only (never an explanation). A wrong answer that matches a gold answer is ignored
    (RAMDocs has 10 such rows). No gold answers: never correct."""
    pred = _predicted(predicted)
    gold = [g for g in gold if normalize(g)]
    if not gold:
        return False
    wrong = [w for w in wrong if normalize(w) and not any(contains_match(w, g) for g in gold)]
    all_gold = all(any(contains_match(p, g) for p in pred) for g in gold)
    return all_gold and not any(contains_match(p, w) for p in pred for w in wrong)


def accuracy(predicted: list[str], gold: list[str]) -> bool:
    """Plain accuracy: at least one predicted answer matches a gold answer (``matches``, the lenient rule
    the baselines' verdict uses). Wrong answers and missing gold answers are not penalised."""
    return any(matches_any(p, gold) for p in _predicted(predicted)) if gold else False


def precision_recall_f1(predicted: list[str], gold: list[str]) -> tuple[float, float, float]:
    """madam-rag.md §8.8: precision = predicted answers matching a gold answer / predicted (0 when none),
    recall = gold answers matched / gold, F1 their harmonic mean (0 when both are 0)."""
    pred = _predicted(predicted)
    p = sum(any(contains_match(x, g) for g in gold) for x in pred) / len(pred) if pred else 0.0
    r = sum(any(contains_match(x, g) for x in pred) for g in gold) / len(gold) if gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)
