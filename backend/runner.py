"""Run several methods on one question concurrently, sharing the model-call cache and the retriever.

Each method gets its own context (its own call list) and a truth-stripped question; one method's
failure is contained in its ``MethodResult.error``. Results can be consumed as they finish
(``on_result`` / ``run_iter``) so the dashboard fills columns in as methods complete.
"""

from __future__ import annotations

import asyncio
import hashlib
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from backend.llm.cache import CallCache
from backend.llm.client import CallLog, LLMClient, LLMConfig
from backend.methods import METHODS
from backend.methods.base import EvidenceMode, RunContext, run_sync
from backend.schema import Dataset, MethodResult, Question, ReliabilityEstimate, strip_truth

ResultCallback = Callable[[MethodResult], None]


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
        # the endpoint is part of the model's identity (two servers may serve the same name); only a hash of
        # it enters the key, never the URL itself
        endpoint = hashlib.sha256(self.llm.api_base.encode()).hexdigest()[:12] if self.llm.api_base else ""
        key = calibration_key(questions, sources, f"{self.llm.model}@{endpoint}" if endpoint else self.llm.model,
                              self.evidence_mode, method.calibration_params())
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

    async def arun(self, question: Question, methods: list[str], on_result: ResultCallback | None = None,
                   sequential: bool = False) -> dict[str, MethodResult]:
        """All ``methods`` on ``question``; concurrently unless ``sequential``. Keys keep ``methods`` order."""
        q = strip_truth(question)

        async def one(name: str) -> MethodResult:
            result = await self._run_one(name, q)
            if on_result is not None:
                on_result(result)
            return result

        if sequential:
            results = [await one(m) for m in methods]
        else:
            results = await asyncio.gather(*(one(m) for m in methods))
        return {r.method: r for r in results}

    async def _run_one(self, name: str, q: Question) -> MethodResult:
        weights = None
        if name == "ra_rag":  # stage 1 on first need, inside RA-RAG's own task so the others are not held up
            try:
                weights = await self.areliability()
            except Exception as err:  # noqa: BLE001 - reported as RA-RAG's error; the other methods still run
                return MethodResult(method="ra_rag", question_id=q.id, error=f"RA-RAG stage 1 failed: {err}")
        return await METHODS[name](**self.method_params.get(name, {})).arun(q, self.context(name, weights))

    def run(self, question: Question, methods: list[str], on_result: ResultCallback | None = None,
            sequential: bool = False) -> dict[str, MethodResult]:
        return run_sync(self.arun(question, methods, on_result, sequential))

    def run_iter(self, question: Question, methods: list[str]) -> Iterator[MethodResult]:
        """Yield each method's result as soon as it finishes (the run happens on a worker thread)."""
        done: queue.Queue = queue.Queue()
        failure: list[BaseException] = []

        def work() -> None:
            try:
                self.run(question, methods, on_result=done.put)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                failure.append(exc)
            finally:
                done.put(None)

        thread = threading.Thread(target=work, name="conflictlens-runner", daemon=True)
        thread.start()
        while (item := done.get()) is not None:
            yield item
        thread.join()
        if failure:
            raise failure[0]
