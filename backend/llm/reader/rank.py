"""Sentence ranking and the embedding step.

Sentences are ranked by static-weight lexical overlap with the question plus a bonus for holding one
of the question's relation words (born, directed, population...). MiniLM then embeds ONE short text
per passage, the window around the lexically best answer, and its cosine with the question is added
to every candidate's score: it measures whether the answer's context is about the question at all.

Why not rank sentences by cosine: on the RAMDocs dev set, embedding 1, 2, 3 or 6 sentences per
passage and mixing their cosine into the sentence score changed correct-passage accuracy by less than
0.5 points (the prototype saw +0.8 with its gazetteer), while the model's cost grows with every token
(whole sentences: ~10-30 passages/s on 2 cores; one 17-word window: ~150). The cosine's real value is
as a relevance signal for abstaining.
"""

from __future__ import annotations


import numpy as np

from .qtype import QInfo
from .spans import Cand
from .lru import LRU
from .text import content_stems

#: Words either side of the answer that are embedded (about 25 model tokens).
EMBED_WORDS = 8
W_LEX, W_CUE, W_COS = 0.45, 0.15, 0.40


def lexical(q: QInfo, stems: set[str]) -> float:
    """Weighted share of the question's terms present in the sentence (0..1)."""
    total = sum(q.terms.values())
    if not total:
        return 0.0
    return sum(w for s, w in q.terms.items() if s in stems) / total


def cue_hit(q: QInfo, stems: set[str]) -> float:
    """1 when the sentence holds a relation word of the question (born, directed, population...)."""
    return 1.0 if q.cues & stems else 0.0


def lexical_scores(q: QInfo, sentences: list[str]) -> list[tuple[float, float]]:
    out = []
    for s in sentences:
        st = content_stems(s)
        out.append((lexical(q, st), cue_hit(q, st)))
    return out


def sentence_score(lex: float, cue: float) -> float:
    return W_LEX * lex + W_CUE * cue


def answer_window(sentence: str, cand: Cand, width: int | None = None) -> str:
    """The candidate with ``width`` words either side: what MiniLM compares with the question."""
    width = EMBED_WORDS if width is None else width
    left = sentence[:cand.start].split()[-width:]
    right = sentence[cand.end:].split()[:width]
    return " ".join(left + [sentence[cand.start:cand.end]] + right)


#: question embeddings: the same question is read against many passages and by many tasks
QUESTION_CACHE = LRU(2048)


def embed_all(questions: list[str], texts: list[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Embeddings for distinct questions and texts in ONE encode call (question embeddings cached).

    Each text is embedded on its own (padding is masked), so a passage's score does not depend on what
    else is in the batch; callers round cosines to absorb float noise from different batch shapes."""
    from backend.embeddings import encode

    qs = list(dict.fromkeys(questions))
    missing_q = [q for q in qs if QUESTION_CACHE.get(q) is None]
    uniq = list(dict.fromkeys(texts))
    batch = missing_q + uniq
    vecs = encode(batch) if batch else np.zeros((0, 384), dtype="float32")
    for q, v in zip(missing_q, vecs[:len(missing_q)]):
        QUESTION_CACHE.put(q, v)
    qv = {q: QUESTION_CACHE.get(q) for q in qs}
    tv = dict(zip(uniq, vecs[len(missing_q):]))
    return qv, tv
