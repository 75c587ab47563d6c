"""Is this passage about the question at all? Passage-level signals behind abstaining on noise.

Noise in retrieval pools is mostly (a) page debris: menus, reference lists, tables, PDF bytes;
(b) pages about something else that share a word with the question; (c) on-topic pages that do not
state the fact. The pipeline abstains when its *answer confidence* is low: the best typed candidate's
context score (cue words and subject next to it: catches (b) and (c)), plus the MiniLM cosine of the
answer's context, minus a small debris penalty from ``prose`` (a).

``coverage`` (is the subject named at all?) is reported but NOT used to abstain: RAMDocs passages are
100-word chunks, and 12% of the dev set's correct chunks never name the subject ("As of the census
of 2000, there were 370 people...").
"""

from __future__ import annotations

import re

from .qtype import QInfo
from .text import STOPWORDS, content_stems, words

_BOILER = re.compile(r"\b(?:retrieved|archived from|wikipedia|cookies?|privacy policy|log ?in|sign in|jump to|"
                     r"isbn|oldid|endobj|endstream|obj|copyright|all rights reserved|terms of use|"
                     r"advertisement|subscribe|newsletter|click here|website by|powered by|"
                     r"main menu|navigation|toggle|see more|read more)\b", re.I)


def prose(text: str) -> float:
    """How much the passage reads like running prose (0..1): function-word share, clean characters and
    little page furniture. Tables, menus, reference lists and binary debris score low."""
    toks = words(text)
    if not toks:
        return 0.0
    func = sum(t in STOPWORDS for t in toks) / len(toks)
    clean = sum(ch.isalnum() or ch.isspace() or ch in ".,;:'\"()-%$&!?" for ch in text) / max(1, len(text))
    digits = sum(t.isdigit() for t in toks) / len(toks)
    boiler = len(_BOILER.findall(text)) / max(1.0, len(toks) / 20)
    score = min(1.0, func / 0.35) * clean ** 3 - 0.5 * max(0.0, digits - 0.15) - 0.15 * min(boiler, 3)
    return max(0.0, min(1.0, score))


def coverage(q: QInfo, text: str) -> float:
    """Weighted share of the subject's words (from the question's names/titles) found in the passage;
    1.0 when the question names no subject."""
    focus = q.focus_stems
    if not focus:
        return 1.0
    present = content_stems(text)
    return sum(1 for s in focus if s in present) / len(focus)

