"""Run several methods on one question concurrently, each with its own call list, none seeing truth."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backend.llm.cache import CallCache
from backend.llm.client import CallLog, LLMClient, LLMConfig
from backend.methods import METHODS
from backend.methods.base import EvidenceMode, RunContext, run_sync
from backend.schema import Dataset, MethodResult, Question, ReliabilityEstimate, strip_truth


@dataclass
class Runner:
    dataset: Dataset
    llm: LLMConfig = field(default_factory=LLMConfig)
    cache: CallCache | None = None
    log: CallLog | None = None
    api_key: str | None = None
    evidence_mode: EvidenceMode = "given"
    top_k: int = 3
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: RA-RAG stage 1: calibration questions (None: the method's default, the paper's 200).
    calibration_limit: int | None = None
    _retriever: Any = None
    _stripped: Dataset | None = None
    _reliability: dict[str, ReliabilityEstimate] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._client = LLMClient(self.llm, cache=self.cache, api_key=self.api_key, log=self.log)

    @property
    def stripped(self) -> Dataset:
        if self._stripped is None:
            self._stripped = strip_truth(self.dataset)
        return self._stripped

    def retriever(self):
        """The retriever over the truth-stripped dataset (same on-disk index as the labelled one)."""
        if self._retriever is None:
            from backend.retrieval import Retriever

            self._retriever = Retriever(self.stripped)
        return self._retriever

    def context(self, method: str, reliability: ReliabilityEstimate | None = None) -> RunContext:
        needs_index = self.evidence_mode == "retrieve"
        return RunContext(client=self._client.for_method(method),
                          retriever=self.retriever() if needs_index else None,
                          evidence_mode=self.evidence_mode, top_k=self.top_k,
                          sources=self.stripped.source_names(), reliability=reliability)

    # -- RA-RAG stage 1: computed on the stripped dataset on first need, kept in memory and on disk ---

    def _calibration(self, limit: int | None):
        from backend.methods.ra_rag import RARAG
        from backend.reliability import calibration_key

        method = RARAG(**self.method_params.get("ra_rag", {}))
        questions = self.stripped.questions[:limit or self.calibration_limit or method.calibration_size]
        sources = self.stripped.source_names()
        key = calibration_key(questions, sources, self.llm.model, self.evidence_mode, method.calibration_params())
        return method, questions, sources, key

    def cached_reliability(self, limit: int | None = None) -> ReliabilityEstimate | None:
        """Stage-1 weights if already computed (this runner or the on-disk cache); never computes."""
        if not self.stripped.multi_source:
            return None
        from backend import reliability

        key = self._calibration(limit)[3]
        if key not in self._reliability and (est := reliability.load(self.stripped.name, key)) is not None:
            self._reliability[key] = est
        return self._reliability.get(key)

    async def areliability(self, limit: int | None = None, on_progress: Callable[[int, int], None] | None = None,
                           refresh: bool = False) -> ReliabilityEstimate | None:
        """RA-RAG stage 1 for this dataset + model + evidence mode (None when documents name no source)."""
        if not self.stripped.multi_source:
            return None
        if not refresh and (est := self.cached_reliability(limit)) is not None:
            return est
        from backend import reliability

        method, questions, sources, key = self._calibration(limit)
        est = await method.calibrate(questions, sources, self.context("ra_rag"), on_progress)
        est = est.model_copy(update={"dataset": self.stripped.name, "model": self.llm.model, "key": key})
        reliability.save(est)
        self._reliability[key] = est
        return est

    def reliability(self, limit: int | None = None, on_progress: Callable[[int, int], None] | None = None,
                    refresh: bool = False) -> ReliabilityEstimate | None:
        return run_sync(self.areliability(limit, on_progress, refresh))

    async def arun(self, question: Question, methods: list[str]) -> dict[str, MethodResult]:
        q = strip_truth(question)
        weights, failed = None, None
        if "ra_rag" in methods:
            try:
                weights = await self.areliability()
            except Exception as err:  # noqa: BLE001 - reported as RA-RAG's error; the other methods still run
                failed = MethodResult(method="ra_rag", question_id=q.id, error=f"RA-RAG stage 1 failed: {err}")
        instances = [METHODS[m](**self.method_params.get(m, {})) for m in methods
                     if not (failed and m == "ra_rag")]
        results = await asyncio.gather(*(inst.arun(q, self.context(inst.name, weights if inst.name == "ra_rag"
                                                                     else None)) for inst in instances))
        by_name = {r.method: r for r in [*results, *([failed] if failed else [])]}
        return {m: by_name[m] for m in methods}

    def run(self, question: Question, methods: list[str]) -> dict[str, MethodResult]:
        return run_sync(self.arun(question, methods))
