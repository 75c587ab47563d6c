"""Answer normalisation, matching and clustering, shared by methods, evaluation and the offline model.

Matching follows the papers' lenient rule (RAMDocs/MADAM, the reader note): after lower-casing and
dropping punctuation and articles, two answers match when one contains the other as a word sequence
or their token F1 is at least 0.5. ``strict`` keeps only the F1 rule.

Metrics and verdicts built on these rules live in ``backend.scoring``.
"""

from __future__ import annotations

import re
import string
from collections import Counter

IDK = "I don't know"
_IDK_RE = re.compile(
    r"^\W*(i\s+(do\s*n[o']?t|dont|don’t)\s+know|unknown|no\s+answer|not\s+(stated|mentioned|provided|given)"
    r"|cannot\s+(be\s+)?(determined|answered)|n/?a|none)\W*$", re.I)


def is_idk(text: str | None) -> bool:
    """True for "I don't know" and its usual variants (and for empty text)."""
    return text is None or not text.strip() or bool(_IDK_RE.match(text.strip()))


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


def contains_match(a: str, b: str) -> bool:
    """Normalised equality or word-sequence containment either way, without the token-F1 rule: F1 would
    make "3,559 people" match the wrong answer "10,000 people" (F1 = 0.5). Used by the strict metrics."""
    na, nb = normalize(a), normalize(b)
    return bool(na and nb) and (_contains(na, nb) or _contains(nb, na))
