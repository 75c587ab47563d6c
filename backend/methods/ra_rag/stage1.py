"""RA-RAG stage 1 (§3.3, Algorithm 1): source reliability estimated over a dataset without labels.

``calibrate`` asks every source every calibration question (line 3, the N × M1 model calls) and hands the
matrix of filtered answers to ``estimate_reliability`` (lines 4–9, pure numerics, vectorised). The result is
a ``ReliabilityEstimate``: RA-RAG's dataset-level artefact (``Method.prepare``), which the runner caches in
memory and on disk (``<cache dir>/reliability/``) under ``calibration_key``: a hash of everything it depends
on (the calibration questions' stripped content, the source list, the model, the evidence mode, the method's
stage-1 parameters, the prompt included). Comparing it with true reliabilities is evaluation code
(``backend.scoring.reliability_vs_truth``).

Stable initialisation (``stable_init=True``, the released code's default, ``iterative_weighted_majority_voting``
in ml-postech/RA-RAG ``src/reliability_utils.py``): with every v_i = 1 the first vote is plain majority voting,
and a question whose answers tie has no majority; breaking the tie by source position would credit the
first-listed source. So the first iteration uses only the questions with a clear majority (one answer with
strictly more non-IDK votes than any other) for both the pseudo-labels and ŵ; if no question has one, all
questions are used (as released). Later iterations use every question.

[ours] Ties in later iterations (``ties=``): the released code gives a tied question to the answer seen first
in source order, so the estimate can still depend on the order in which sources are listed whenever two
answers tie exactly under the current weights (sources with equal ŵ). ``ties="skip"`` (default) gives such a
question no pseudo-label in that iteration: it counts neither for nor against any source (excluded from eq. 4's
numerator and denominator alike, as stable initialisation excludes its questions), so the estimate does not
depend on source order at all. ``ties="source_order"`` is the released code's behaviour: the tied question goes to
the answer seen first in source order, and with ``stable_init=True`` the estimate is the released estimator's.

The calibration replies are read by the run's reading (``backend.methods.reading``; ``answering.answer_source``):
the reading is part of ``calibration_key`` through the method's ``calibration_params`` when it is ``paper``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from backend.methods.base import Progress, RunContext, gather_all
from backend.schema import Question, RASourceAnswer, ReliabilityEstimate, ReliabilityIteration, SourceReliability

Ties = Literal["skip", "source_order"]
TIES: tuple[str, ...] = ("skip", "source_order")
#: Folder of the on-disk cache under the cache dir (kept from the first release: existing caches stay valid).
CACHE_FOLDER = "reliability"
_FORMAT = 2  # 2: stable initialisation and order-free ties (estimates of format 1 are recomputed)

_NO_LABEL = -2  # a question left without a pseudo-label (no clear majority, or an unresolved tie)


@dataclass
class Estimate:
    """What Algorithm 1 computes (numpy arrays over sources, in the matrix's column order)."""

    estimated: np.ndarray              # ŵ, NaN = no evidence
    weights: np.ndarray                # v = scale·ŵ − 1, 0 where ŵ is NaN
    pseudo_labels: list[str | None]    # ŷ^j after the last iteration (None: all IDK, or no label)
    answered: np.ndarray               # non-IDK answers per source on the labelled questions (eq. 4 denominator)
    agreed: np.ndarray                 # answers equal to ŷ^j per source (eq. 4 numerator)
    iterations: int
    converged: bool
    cycle: bool
    history: list[tuple[np.ndarray, np.ndarray, int]]  # (v, ŵ, pseudo-labels changed) per iteration
    unlabelled: int = 0                # questions with answers but no pseudo-label in the last iteration


def _encode(answers: Sequence[Sequence[str | None]]) -> np.ndarray:
    """Answer keys -> integer codes shared across the matrix (-1 = IDK)."""
    codes: dict[str, int] = {}
    width = len(answers[0]) if len(answers) else 0
    return np.array([[-1 if a is None else codes.setdefault(a, len(codes)) for a in row] for row in answers],
                    dtype=np.int64).reshape(len(answers), width)


def _prepare(answers: Sequence[Sequence[str | None]]):
    """Integer codes (M, N; -1 = IDK), the non-IDK mask, ``same[j, i, k]`` (source k gives source i's
    answer to question j) and each answer's first supporter (its candidate id; N for IDK)."""
    g = _encode(answers)
    known = g >= 0
    same = (g[:, :, None] == g[:, None, :]) & known[:, :, None]
    first = np.where(known, same.argmax(axis=2), g.shape[1])
    return g, known, same, first


def _one_answer(g: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row: do all columns in ``mask`` hold the same answer code?"""
    big = np.iinfo(np.int64).max
    return np.where(mask, g, big).min(axis=1) == np.where(mask, g, -1).max(axis=1)


def _vote_rows(g: np.ndarray, same: np.ndarray, known: np.ndarray, first: np.ndarray,
               v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 3 for every question at once, with ``weighted_vote``'s tie rule (higher score, then higher
    best-supporter weight, then lower source index). Returns per row the column of the winning answer's first
    supporter (-1 when the row is all IDK) and whether the winner needed the source-index rule (a tie)."""
    n = v.shape[0]
    score = np.round(same @ v, 9)                                   # (M, N): score of column i's answer
    score = np.where(known, score, -np.inf)
    tie = known & (score == score.max(axis=1, keepdims=True))
    best = np.round(np.where(same, v[None, None, :], -np.inf).max(axis=2), 9)
    best = np.where(tie, best, -np.inf)
    tie &= best == best.max(axis=1, keepdims=True)
    winner = np.where(tie, first, n).min(axis=1)
    answered = known.any(axis=1)
    return np.where(answered, winner, -1), answered & ~_one_answer(g, tie)


def _winners(answers: Sequence[Sequence[str | None]], win: np.ndarray) -> list[str | None]:
    return [answers[j][c] if c >= 0 else None for j, c in enumerate(win.tolist())]


def wmv_rows(answers: Sequence[Sequence[str | None]], weights: Sequence[float]) -> list[str | None]:
    """Eq. 3 for every question at once: ``weighted_vote`` of each row, vectorised."""
    g, known, same, first = _prepare(answers)
    return _winners(answers, _vote_rows(g, same, known, first, np.asarray(weights, dtype=float))[0])


def estimate_reliability(answers: Sequence[Sequence[str | None]], *, scale: float | None = None,
                         max_iter: int = 100, stable_init: bool = True, ties: Ties = "skip") -> Estimate:
    """Algorithm 1 lines 4–9 on an M × N matrix of filtered answer keys (None = IDK), vectorised.

    v ← 1; repeat: ŷ^j = WMV(a^j; v) (eq. 3); ŵ_i = #(a_i^j = ŷ^j) / #(a_i^j ≠ IDK) (eq. 4, over the questions
    that have a pseudo-label); v_i = scale·ŵ_i − 1; until ŷ stops changing (or cycles, or T iterations).
    ``stable_init`` and ``ties``: see the module docstring.
    """
    if max_iter < 1:
        raise ValueError("max_iter must be at least 1")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    g, known, same, first = _prepare(answers)
    m, n = g.shape
    scale = float(n if scale is None else scale)
    rows = np.arange(m)
    v = np.ones(n)
    labels_prev: np.ndarray | None = None
    seen: set[bytes] = set()
    history: list[tuple[np.ndarray, np.ndarray, int]] = []
    converged = cycle = False
    for it in range(max_iter):
        win, tied = _vote_rows(g, same, known, first, v)             # eq. 3 (line 6)
        labels = np.where(win >= 0, g[rows, np.maximum(win, 0)], -1)
        if it == 0 and stable_init and (~tied & known.any(axis=1)).any():
            labels = np.where(tied, _NO_LABEL, labels)               # only questions with a clear majority
        elif it > 0 and ties == "skip":
            labels = np.where(tied, _NO_LABEL, labels)
        counted = known & (labels[:, None] != _NO_LABEL)
        answered = counted.sum(axis=0)
        agreed = (counted & (g == labels[:, None])).sum(axis=0)
        w = np.where(answered > 0, agreed / np.maximum(answered, 1), np.nan)   # eq. 4 (line 7), guarded
        v = np.where(np.isnan(w), 0.0, scale * w - 1.0)                # line 8; no evidence -> neutral
        changed = m if labels_prev is None else int((labels != labels_prev).sum())
        history.append((v.copy(), w.copy(), changed))
        if labels_prev is not None and changed == 0:
            converged = True
            break
        if labels.tobytes() in seen:
            cycle = True
            break
        seen.add(labels.tobytes())
        labels_prev = labels
    pseudo = [answers[j][c] if c >= 0 and labels[j] != _NO_LABEL else None for j, c in enumerate(win.tolist())]
    return Estimate(w, v, pseudo, answered, agreed, len(history), converged, cycle, history,
                    unlabelled=int((labels == _NO_LABEL).sum()))


# --- line 3: every source answers every calibration question ----------------------------------------

AnswerFn = Callable[[Question, str], Awaitable[RASourceAnswer]]
ClusterFn = Callable[[Question, list[RASourceAnswer]], Awaitable[Any]]


async def calibrate(questions: Sequence[Question], sources: Sequence[str], ctx: RunContext, answer: AnswerFn, *,
                    cluster: ClusterFn | None = None, params: dict[str, Any], scale: float | None = None,
                    max_iter: int = 100, stable_init: bool = True, ties: Ties = "skip",
                    on_progress: Progress | None = None) -> ReliabilityEstimate:
    """Algorithm 1 over unlabelled ``questions``: ``answer(q, source)`` for every pair (line 3; calls run
    concurrently under the client's limit), optional re-clustering per question, then lines 4–9."""
    if not questions or not sources:
        raise ValueError("stage 1 needs at least one calibration question and one source")
    start = time.perf_counter()
    total, done = len(questions) * len(sources), 0
    if on_progress:
        on_progress(0, total)

    async def one(q: Question, s: str) -> RASourceAnswer:
        nonlocal done
        row = await answer(q, s)
        done += 1
        if on_progress:
            on_progress(done, total)
        return row

    async def question_row(q: Question) -> list[RASourceAnswer]:
        row = list(await gather_all(*(one(q, s) for s in sources)))
        if cluster is not None:
            await cluster(q, row)
        return row

    matrix = await gather_all(*(question_row(q) for q in questions))
    est = estimate_reliability([[r.cluster for r in row] for row in matrix], scale=scale, max_iter=max_iter,
                               stable_init=stable_init, ties=ties)
    calls = ctx.client.calls
    return ReliabilityEstimate(
        sources=[SourceReliability(
            name=s, estimated=None if np.isnan(est.estimated[i]) else round(float(est.estimated[i]), 6),
            weight=round(float(est.weights[i]), 6), answered=int(est.answered[i]), agreed=int(est.agreed[i]),
            idk=sum(row[i].cluster is None for row in matrix),
            no_documents=sum(not row[i].called for row in matrix)) for i, s in enumerate(sources)],
        questions=len(questions), iterations=est.iterations, converged=est.converged, cycle=est.cycle,
        unlabelled=est.unlabelled,
        history=[ReliabilityIteration(iteration=t, weights=[round(float(x), 6) for x in v],
                                      estimated=[None if np.isnan(x) else round(float(x), 6) for x in w],
                                      changed=c) for t, (v, w, c) in enumerate(est.history, start=1)],
        evidence_mode=ctx.evidence_mode, params=params, calls=len(calls),
        cache_hits=sum(c.cache_hit for c in calls), seconds=round(time.perf_counter() - start, 3))


def calibration_key(questions: Sequence[Question], sources: Sequence[str], model: str, evidence_mode: str,
                    params: dict[str, Any]) -> str:
    """sha256 over what stage 1 sees (never truth: callers pass stripped questions; labels are excluded)."""
    h = hashlib.sha256()
    h.update(json.dumps({"format": _FORMAT, "sources": list(sources), "model": model, "evidence": evidence_mode,
                         "params": params}, sort_keys=True, default=str).encode())
    for q in questions:
        h.update(json.dumps([q.id, q.question, [(d.id, d.source_name, d.text) for d in q.documents]],
                            ensure_ascii=False).encode())
    return h.hexdigest()
