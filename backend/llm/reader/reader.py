"""The reading pipeline: analyse the question, rank sentences, extract typed candidates, score them in
context, and decide between the best candidate and "I don't know".

Work is split in two so a batch needs ONE embedding call: ``_prepare`` (all lexical work, per pair)
and ``_finish`` (adds the MiniLM cosine of the best answer's context, then decides). Nothing depends on
other pairs in the batch, so a pair's reading is the same alone or in any batch (cosines are rounded
to absorb float noise from different batch shapes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field

from backend.answers import normalize

from . import atype, rank, relevance, spans
from .lru import LRU
from .qtype import QInfo, analyse
from .score import context_score
from .text import split_sentences

#: Sentences holding candidates (lexically best first) whose candidates compete for the answer.
CANDIDATE_SENTENCES = 6
#: Answer confidence = best candidate's context score + W_COS * cosine(question, answer context)
#: - W_DEBRIS * (1 - prose). Below this -> "I don't know". Tuned on the RAMDocs dev set: 0.30 / 0.37 /
#: 0.43 abstain on 45 / 53 / 59% of noise passages for 2.0 / 3.3 / 5.5% of correct ones.
MIN_CONFIDENCE = 0.37
#: Confidence lost by a passage that is all page debris (menus, tables, reference lists, bytes).
W_DEBRIS = 0.1
#: Penalty for a one-word name the passage also uses as an ordinary lower-case word.
COMMON_WORD_PENALTY = 0.3
#: Extra credit per additional mention of the same answer (capped): the main fact is often repeated.
REPEAT_BONUS, REPEAT_CAP = 0.05, 0.15
#: Keep only candidates of the question's answer type (``atype.fits``: a person or organisation for who, a date
#: for when...), abstaining with ``atype.missing`` as the reason when none is left. False only to measure the
#: reader without the check (``benchmarks/reader_types.py --compare``; clear the caches when switching).
TYPE_CHECK = True


@dataclass(frozen=True)
class Reading:
    """What the reader found in one passage. ``answer`` None means "I don't know"."""

    answer: str | None
    sentence: str
    relevance: float
    qtype: str
    candidates: list[tuple[str, float]] = field(default_factory=list)
    #: Why: the signals behind relevance/abstention, for traces and the dashboard.
    signals: dict = field(default_factory=dict)


@dataclass
class _Prepared:
    q: QInfo
    sentences: list[str]
    best_lex: int                                   # index of the lexically best sentence
    lex_score: float                                # its lexical overlap
    ranked: list[tuple[float, str, str, str]]       # (lexical score, answer, sentence, key), best first
    window: str | None                              # text around the best answer, to embed
    wrong_type: int = 0                             # candidates dropped by the answer-type check


def answer_key(text: str) -> str:
    """Candidates that normalise alike are one answer (the project's shared normaliser)."""
    return normalize(text)


def _rank_candidates(q: QInfo, sents: list[str], lex: list[tuple[float, float]]):
    """Candidates of the lexically best sentences that hold any, scored in context, one per answer."""
    cands = {i: c for i, s in enumerate(sents) if (c := spans.extract(s, q))}
    keep = sorted(cands, key=lambda i: (-(lex[i][0] + 0.3 * lex[i][1]), i))[:CANDIDATE_SENTENCES]
    # words this passage also writes in lower case are ordinary words, not names ("Title", "Background")
    lower = {w for s in sents for w in re.findall(r"\b[a-z][a-z]+\b", s)}
    best: dict[str, tuple] = {}   # answer key -> (score, text, sentence, cand, position)
    counts: dict[str, int] = {}
    for i in sorted(keep):
        base = rank.sentence_score(*lex[i])
        for c in cands[i]:
            key = answer_key(c.text)
            if not key:
                continue
            sc = round(context_score(q, sents[i], c, base), 4)
            if c.kind in ("name", "place") and " " not in c.text and c.text.lower() in lower:
                sc -= COMMON_WORD_PENALTY
            counts[key] = counts.get(key, 0) + 1
            if key not in best or sc > best[key][0]:
                best[key] = (sc, c.text, sents[i], c, (i, c.start))
    # ties go to the earlier mention: passages state their main fact first
    scored = [(round(v[0] + min(REPEAT_CAP, REPEAT_BONUS * (counts[k] - 1)), 4), v[1], v[2], k, v[3], v[4])
              for k, v in best.items()]
    return sorted(scored, key=lambda t: (-t[0], t[5]))


def _prepare(question: str, passage: str) -> _Prepared:
    """Everything that needs no embedding, including the answer choice."""
    q = analyse(question)
    sents = split_sentences(passage)
    if not sents:
        return _Prepared(q, [], 0, 0.0, [], None)
    lex = rank.lexical_scores(q, sents)
    best_lex = max(range(len(lex)), key=lambda i: (lex[i][0] + 0.3 * lex[i][1], -i))
    ranked = _rank_candidates(q, sents, lex)
    kept = [r for r in ranked if atype.fits(q.qtype, r[1], q.text)] if TYPE_CHECK else ranked
    window = rank.answer_window(kept[0][2], kept[0][4]) if kept else None
    return _Prepared(q, sents, best_lex, lex[best_lex][0], [r[:4] for r in kept], window, len(ranked) - len(kept))


def _finish(p: _Prepared, passage: str, qvec, tvecs) -> Reading:
    q = p.q
    if not p.sentences:
        empty = dict.fromkeys(("prose", "coverage", "answer_context_cos", "best_lex", "confidence"), 0.0)
        return Reading(None, "", 0.0, q.qtype, [], {**empty, "reason": "empty passage"})
    cos = round(float(qvec @ tvecs[p.window]), 3) if p.window is not None else 0.0
    prose = relevance.prose(passage)
    # the same for every candidate, so they shift confidence, not the ranking: is the answer's context
    # about the question (MiniLM), and does the passage read as text rather than page debris?
    bonus = rank.W_COS * max(cos, 0.0) - W_DEBRIS * (1.0 - prose)
    ranked = [(round(s + bonus, 3), t, sent, k) for s, t, sent, k in p.ranked]
    signals = {
        "prose": round(prose, 3),
        "coverage": round(relevance.coverage(q, passage), 3),
        "answer_context_cos": cos,
        "best_lex": round(p.lex_score, 3),
        "confidence": ranked[0][0] if ranked else 0.0,
        "wrong_type": p.wrong_type,
    }
    top_sentence = ranked[0][2] if ranked else p.sentences[p.best_lex]
    if not ranked:   # names the missing type where one is checked: "no person or organisation named"
        answer, reason = None, atype.missing(q.qtype, q.text)
    elif ranked[0][0] < MIN_CONFIDENCE:
        answer, reason = None, f"low confidence {ranked[0][0]:.2f} < {MIN_CONFIDENCE}"
    else:
        answer, reason = ranked[0][1], "answered"
    signals["reason"] = reason
    return Reading(answer, top_sentence, _relevance(signals), q.qtype,
                   [(t, s) for s, t, _, _ in ranked[:5]], signals)


def _relevance(sig: dict) -> float:
    """One 0..1 relevance figure for display and for callers ranking passages (lexical and subject
    coverage only when the passage holds no candidate, since nothing was embedded then)."""
    r = 0.5 * max(sig["answer_context_cos"], 0.0) + 0.3 * sig["best_lex"] + 0.2 * sig["coverage"]
    return round(max(0.0, min(1.0, r * (0.5 + 0.5 * sig["prose"]))), 3)


# ------------------------------------------------------------------------------------------- caching

def _key(item: tuple[str, str]) -> bytes:
    """A fixed-size cache key, so long passages are not kept alive as dictionary keys."""
    return hashlib.blake2b(f"{item[0]}\x00{item[1]}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


#: (question, passage) -> Reading: the offline model reads the same pair for many tasks
_CACHE = LRU(8192)


def _copy(r: Reading) -> Reading:
    return dataclasses.replace(r, candidates=list(r.candidates), signals=dict(r.signals))


def read_batch(items: list[tuple[str, str]]) -> list[Reading]:
    """Read many (question, passage) pairs with one batched embedding call."""
    keys = [_key(it) for it in items]
    out: list[Reading | None] = [_CACHE.get(k) for k in keys]
    todo = [i for i, r in enumerate(out) if r is None]
    if todo:
        preps = {i: _prepare(*items[i]) for i in todo}
        need = [i for i in todo if preps[i].window is not None]   # no candidate: nothing to embed
        qv, tv = rank.embed_all([items[i][0] for i in need], [preps[i].window for i in need])
        for i in todo:
            r = _finish(preps[i], items[i][1], qv.get(items[i][0]), tv)
            _CACHE.put(keys[i], r)
            out[i] = r
    return [_copy(r) for r in out]


def read(question: str, passage: str) -> Reading:
    return read_batch([(question, passage)])[0]


def read_many(question: str, passages: list[str]) -> list[Reading]:
    return read_batch([(question, p) for p in passages])


def clear_caches() -> None:
    """Forget cached readings and question embeddings (tests, fair benchmarks)."""
    _CACHE.clear()
    rank.QUESTION_CACHE.clear()
