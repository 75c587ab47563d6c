"""RA-RAG eq. 1 weighted majority voting on one question, and §3.4 / Algorithm 2 κ-RRSS."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from backend.schema import RASourceAnswer, RAWalkStep
from backend.methods.base import gather_all

# --- eq. 1 weighted majority voting ----------------------------------------------------------------

def _r(x: float) -> float:
    return round(float(x), 9)


@dataclass(frozen=True)
class Vote:
    winner: str | None                 # the winning cluster key; None = every answer IDK
    scores: dict[str, float]           # cluster key -> Σ v_i over its supporters (first-seen order)


def weighted_vote(keys: Sequence[str | None], weights: Sequence[float]) -> Vote:
    """ŷ = argmax_u Σ_i v_i 𝟙(a_i = u) over non-IDK answers (``keys`` in source order; None = IDK).
    Ties: higher score, then higher best-supporter weight, then lower source index."""
    scores: dict[str, float] = {}
    best: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, (k, v) in enumerate(zip(keys, weights)):
        if k is None:
            continue
        scores[k] = scores.get(k, 0.0) + float(v)
        best[k] = max(best.get(k, -math.inf), float(v))
        first.setdefault(k, i)
    if not scores:
        return Vote(None, {})
    winner = max(scores, key=lambda k: (_r(scores[k]), _r(best[k]), -first[k]))
    return Vote(winner, scores)



# --- §3.4 / Algorithm 2: κ-RRSS ---------------------------------------------------------------------

def rank_sources(names: Sequence[str], weights: dict[str, float]) -> list[str]:
    """Sources by weight, descending; equal weights keep the dataset order (stable sort)."""
    return sorted(names, key=lambda s: -_r(weights.get(s, 0.0)))


async def kappa_rrss(ranked: Sequence[str], ask: Callable[[str], Awaitable[RASourceAnswer]],
                     kappa: int) -> tuple[list[RAWalkStep], dict[str, RASourceAnswer]]:
    """Walk ``ranked`` asking each source; IDK sources are skipped; stop once κ are selected. Each round
    asks the next κ − |selected| sources at once: the lazy walk would ask all of them anyway."""
    selected: list[str] = []
    answers: dict[str, RASourceAnswer] = {}
    pos = 0
    while len(selected) < kappa and pos < len(ranked):
        batch = list(ranked[pos:pos + kappa - len(selected)])
        pos += len(batch)
        for source, row in zip(batch, await gather_all(*(ask(s) for s in batch))):
            answers[source] = row
            if row.cluster is not None:
                selected.append(source)
    walk = [RAWalkStep(rank=r, source=s, weight=0.0,
                       status="selected" if s in selected else "skipped" if s in answers else "not_queried")
            for r, s in enumerate(ranked, start=1)]
    return walk, answers
