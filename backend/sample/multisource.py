"""RA-RAG-style multi-source benchmark (docs/methods/ra_rag.md §5), built from real questions.

Per question: a pool of factual passages and, per wrong answer, a pool of misinformation passages
(see ``pools``). Per question and source i, independently: with probability r_i (coverage) the
source holds up to ``DOCS_PER_SOURCE`` passages; with probability p_i (true reliability) they are drawn
from the factual pool, otherwise from the pool of ONE wrong answer chosen uniformly. Draws are without
replacement, so a source holds fewer passages when a pool is smaller.

[ours] RA-RAG leaves a question with no relevant source possible; our Question model needs documents,
so when no source is relevant the coverage draws are repeated (same generator, next numbers) until one is.
The number of repeats is kept in ``meta.coverage_redraws``.
"""

from __future__ import annotations

import numpy as np

from backend.sample.pools import Candidate
from backend.schema import DocLabel, Document, Question, Source

N_SOURCES = 8
DOCS_PER_SOURCE = 3
MIN_FACTUAL = 3
#: Spammer–hammer prior: 3 spammers (p = 0.1) spread among 5 hammers (p = 0.9), fixed.
SPAMMERS = (2, 5, 7)
#: Coverage r_i per source, fixed (RA-RAG's main setting uses 0.6 everywhere; we vary it a little).
COVERAGE = (0.6, 0.7, 0.8, 0.65, 0.75, 0.6, 0.7, 0.8)
BETA_MEAN = 0.6  # w̄: p_i ~ Beta(2w̄/(1−w̄), 2) = Beta(3, 2)


def spammer_hammer_sources() -> list[Source]:
    return [Source(name=f"src-{i}", true_reliability=0.1 if i in SPAMMERS else 0.9, coverage=COVERAGE[i - 1])
            for i in range(1, N_SOURCES + 1)]


def beta_sources(seed: int) -> list[Source]:
    rng = np.random.default_rng(seed)
    p = rng.beta(2 * BETA_MEAN / (1 - BETA_MEAN), 2, size=N_SOURCES)
    return [Source(name=f"src-{i}", true_reliability=round(float(p[i - 1]), 3), coverage=COVERAGE[i - 1])
            for i in range(1, N_SOURCES + 1)]


def eligible(c: Candidate, wrongs: dict[str, str]) -> dict[str, list[str]] | None:
    """Misinformation pools of the usable wrong answers, or None when the question cannot be used
    (fewer than MIN_FACTUAL factual passages, or no wrong answer with a misinformation passage)."""
    if len(c.factual) < MIN_FACTUAL:
        return None
    pools = {w: pool for w in wrongs if (pool := c.misinfo_pool(w))}
    return pools or None


def build_multisource(cands: list[tuple[Candidate, dict[str, str]]], sources: list[Source],
                      seed: int) -> list[Question]:
    """``cands``: (candidate, its wrong answers -> kind) in output order. One generator per question,
    seeded with (seed, question number), so a change to one question never shifts the others."""
    questions: list[Question] = []
    for c, wrongs in cands:
        pools = eligible(c, wrongs)
        if pools is None:
            continue
        qid = f"ms-{len(questions) + 1:04d}"
        rng = np.random.default_rng([seed, len(questions) + 1])
        coverage = np.array([s.coverage for s in sources])
        relevant = rng.random(len(sources)) < coverage
        redraws = 0
        while not relevant.any():
            relevant = rng.random(len(sources)) < coverage
            redraws += 1
        docs: list[Document] = []
        assignment: dict[str, str] = {}
        wrong_list = list(pools)
        for src, holds in zip(sources, relevant):
            # Draw both numbers for every source so one source's outcome never shifts another's draws.
            factual = rng.random() < src.true_reliability
            wrong = wrong_list[int(rng.integers(len(wrong_list)))]
            if not holds:
                assignment[src.name] = "none"
                continue
            pool, label = (c.factual, DocLabel(type="correct", answer=c.gold)) if factual else \
                (pools[wrong], DocLabel(type="misinfo", answer=wrong))
            picks = rng.choice(len(pool), size=min(DOCS_PER_SOURCE, len(pool)), replace=False)
            for k, j in enumerate(picks, start=1):
                docs.append(Document(id=f"{qid}-{src.name}-d{k}", source=src.name, text=pool[int(j)], label=label))
            assignment[src.name] = "correct" if factual else f"misinfo: {wrong}"
        questions.append(Question(
            id=qid, question=c.question, documents=docs, gold_answers=[c.gold], wrong_answers=wrong_list,
            meta={"origin": c.origin, **c.meta, "assignment": assignment,
                  "wrong_answer_kinds": {w: wrongs[w] for w in wrong_list}, "coverage_redraws": redraws}))
    return questions
