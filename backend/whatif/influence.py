"""Document influence: leave each document of a question out in turn, re-run each method, and record which
documents flip which method's answer (or, for a method that abstains, its keep/abstain decision).

The ablated questions are what-if edits (``RemoveDocuments``), so they run exactly as an analyst's edit would
(truth stripped, the retriever without the removed document); calls whose prompt the removal does not change come
from the cache. ``estimate_calls`` gives the cost before running: an upper bound, every method making as many calls
per ablation as it made on the whole question.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from backend.agreement import answer_set
from backend.llm import pricing
from backend.llm.client import LLMConfig
from backend.methods.base import run_sync
from backend.schema import MethodResult, Question
from backend.schema.base import StrictModel
from backend.scoring import refused
from backend.whatif.edits import RemoveDocuments, apply_edits

Flip = Literal["answer", "keep→abstain", "abstain→keep"]
#: Ablated questions run at once (each runs its methods concurrently; the client bounds the calls in flight).
ABLATIONS_AT_ONCE = 4


def is_free(config: LLMConfig) -> bool:
    """Calls to this model cost nothing (the offline reader, in process; ``backend.llm.pricing.is_free``)."""
    return pricing.is_free(config.model)


def estimate_calls(base: dict[str, MethodResult], documents: int) -> int:
    """Model calls a leave-one-out over ``documents`` documents may make, at most (before the cache)."""
    return documents * sum(len(r.calls) for r in base.values())


def ablations(question: Question) -> list[Question]:
    """The questions a leave-one-out runs: ``question`` without each of its documents in turn (what-if edits), so
    their cost can be estimated before anything is sent (``backend.cost.estimate_run``)."""
    return [apply_edits(question, [RemoveDocuments(ids=[d.id])]) for d in question.documents]


def flip_of(before: MethodResult, after: MethodResult) -> Flip | None:
    """How leaving a document out changed a method's outcome (None: no change; errors are not flips)."""
    if before.error or after.error:
        return None
    if refused(before) != refused(after):
        return "keep→abstain" if refused(after) else "abstain→keep"
    if not refused(after) and answer_set(before) != answer_set(after):
        return "answer"
    return None


class InfluenceCell(StrictModel):
    document_id: str
    method: str
    answers: list[str] = Field(default_factory=list)
    abstained: bool = False
    error: str | None = None
    flip: Flip | None = None
    calls: int = 0
    cache_hits: int = 0


class Influence(StrictModel):
    """The document × method matrix of one question (``cells`` row by row, documents in question order)."""

    question_id: str
    methods: list[str]
    documents: list[str]
    base: dict[str, list[str]] = Field(default_factory=dict)         # each method's answers on the whole question
    base_abstained: dict[str, bool] = Field(default_factory=dict)
    cells: list[InfluenceCell] = Field(default_factory=list)

    def cell(self, document_id: str, method: str) -> InfluenceCell:
        return next(c for c in self.cells if c.document_id == document_id and c.method == method)

    @property
    def calls(self) -> int:
        return sum(c.calls for c in self.cells)

    @property
    def cache_hits(self) -> int:
        return sum(c.cache_hits for c in self.cells)

    def flips(self, method: str | None = None) -> list[InfluenceCell]:
        return [c for c in self.cells if c.flip and (method is None or c.method == method)]


async def aleave_one_out(runner, question: Question, methods: list[str],
                         base: dict[str, MethodResult] | None = None,
                         on_progress: Callable[[int, int], None] | None = None) -> Influence:
    """The influence matrix of ``question`` for ``methods``. ``base``: the methods' results on the whole question
    when the caller has them (else they are computed first)."""
    if base is None or any(m not in base for m in methods):
        base = {**(base or {}), **await runner.arun(question, [m for m in methods if m not in (base or {})])}
    docs = [d.id for d in question.documents]
    slots, done = asyncio.Semaphore(ABLATIONS_AT_ONCE), 0
    if on_progress is not None:
        on_progress(0, len(docs))

    async def ablate(doc_id: str) -> list[InfluenceCell]:
        nonlocal done
        async with slots:
            results = await runner.arun(apply_edits(question, [RemoveDocuments(ids=[doc_id])]), methods)
        done += 1
        if on_progress is not None:
            on_progress(done, len(docs))
        return [InfluenceCell(document_id=doc_id, method=m, answers=r.answers, abstained=r.abstained, error=r.error,
                              flip=flip_of(base[m], r), calls=len(r.calls),
                              cache_hits=sum(c.cache_hit for c in r.calls)) for m, r in results.items()]

    rows = await asyncio.gather(*(ablate(d) for d in docs))
    return Influence(question_id=question.id, methods=list(methods), documents=docs,
                     base={m: base[m].answers for m in methods},
                     base_abstained={m: refused(base[m]) for m in methods},
                     cells=[c for row in rows for c in row])


def leave_one_out(runner, question: Question, methods: list[str], base: dict[str, MethodResult] | None = None,
                  on_progress: Callable[[int, int], None] | None = None) -> Influence:
    return run_sync(aleave_one_out(runner, question, methods, base, on_progress))
