"""Candidate scoring in context: the sentence's rank, the span's prior, and how close it sits to the
question's relation words (cues) and subject (focus) — the rules that paid off most in the prototype."""

from __future__ import annotations

import re

from .qtype import QInfo
from .spans import Cand
from .text import stem, word_spans

W_SENT, W_PRIOR = 1.0, 0.35
CUE_BEFORE, CUE_AFTER, FOCUS_NEAR = 0.5, 0.25, 0.25
CUE_WINDOW, FOCUS_WINDOW = 7, 10


def _positions(sentence: str, keys: frozenset) -> list[int]:
    return [i for i, (w, _, _) in enumerate(word_spans(sentence)) if stem(w.lower().removesuffix("'s")) in keys]


def _token_range(spans: list[tuple[str, int, int]], cand: Cand) -> tuple[int, int]:
    idx = [i for i, (_, s, e) in enumerate(spans) if s < cand.end and e > cand.start]
    return (idx[0], idx[-1] + 1) if idx else (0, 0)


def _near(d: int, window: int) -> float:
    """1 for an adjacent word, falling linearly to 0 at ``window`` words away."""
    return max(0.0, 1.0 - (d - 1) / window) if d >= 1 else 0.0


def _date_role(sentence: str, cand: Cand) -> str | None:
    """Birth/death dates in a biography's parentheses: '(2 July 1829 – 12 May 1913)'."""
    before = sentence[max(0, cand.start - 40):cand.start]
    if re.search(r"\(\s*(?:born\s+|b\.\s*)?$", before):
        return "first"
    if re.search(r"\([^()]*[\u2013\u2014-]\s*(?:died\s+|d\.\s*)?$", before):
        return "second"
    return None


def context_score(q: QInfo, sentence: str, cand: Cand, sent_score: float) -> float:
    spans = word_spans(sentence)
    a, b = _token_range(spans, cand)
    cue_pos = [i for i in _positions(sentence, q.cues) if not a <= i < b]
    foc_pos = [i for i in _positions(sentence, q.focus_stems) if not a <= i < b]
    before = min((a - i for i in cue_pos if i < a), default=0)
    after = min((i - b + 1 for i in cue_pos if i >= b), default=0)
    focus = min((abs(i - a) if i < a else i - b + 1 for i in foc_pos), default=0)
    score = W_SENT * sent_score + W_PRIOR * cand.prior
    if q.qtype == "NUM":  # counts are named by the noun AFTER them (in the prior); cues before matter less
        score += 0.3 * _near(before, 4) if before else 0.0
    else:
        score += CUE_BEFORE * _near(before, CUE_WINDOW) if before else 0.0
    score += CUE_AFTER * _near(after, CUE_WINDOW) if after else 0.0
    score += FOCUS_NEAR * _near(focus, FOCUS_WINDOW) if focus else 0.0
    if q.qtype == "DATE":
        role = _date_role(sentence, cand)
        if q.predicate in ("born", "birth") and role:
            score += 0.5 if role == "first" else -0.4
        elif q.predicate in ("died", "die", "death") and role:
            score += 0.5 if role == "second" else -0.2
        elif role:
            score -= 0.4  # life dates of a person are not when something was founded or released
    if q.qtype in ("PERSON", "LOC", "WHAT") and cand.kind in ("name", "place", "head"):
        own = {stem(w) for w in re.findall(r"\w+", cand.text.lower())}
        if own & q.focus_stems:
            score -= 0.3  # shares words with the subject: likely the subject's own name
    if q.qtype == "PERSON" and re.match(r"\s*(?:'s\s+)?(?:\d{4}\s+)?(?:debut\s+)?(?:album|song|single|EP|film|"
                                        r"novel|painting|band|composition)\s*\)", sentence[cand.end:]):
        score += 0.5  # Wikipedia disambiguation: "Feel the Fire (Family Brown album)"
    left = sentence[max(0, cand.start - 40):cand.start]
    if q.qtype == "PERSON" and re.search(r"\bby\s+(?:[a-z-]+\s+){0,3}$", left):
        score += 0.3  # "directed by X", "an album by American rapper X"
    if q.qtype == "LOC":
        if re.search(r"\b(?:in|at|near|of)\s+(?:the\s+)?$", left):
            score += 0.2
        elif re.search(r"\bby\s+$", left):
            score -= 0.3  # "published by David Reid": an agent, not a place
    return score
