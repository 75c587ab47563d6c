"""Run several methods on one question concurrently, sharing the model-call cache and the retriever.

Each method gets its own context (its own call list) and a truth-stripped question; one method's
failure is contained in its ``MethodResult.error``. Results can be consumed as they finish
(``on_result`` / ``run_iter``) so the dashboard fills columns in as methods complete.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from backend.llm.cache import CallCache
from backend.llm.client import CallLog, LLMClient, LLMConfig
from backend.methods import METHODS
from backend.methods.base import EvidenceMode, RunContext, run_sync
from backend.schema import Dataset, MethodResult, Question, strip_truth

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
    _retriever: Any = None
    _stripped: Dataset | None = None

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

    def context(self, method: str) -> RunContext:
        needs_index = self.evidence_mode == "retrieve"
        return RunContext(client=self._client.for_method(method),
                          retriever=self.retriever() if needs_index else None,
                          evidence_mode=self.evidence_mode, top_k=self.top_k)

    async def arun(self, question: Question, methods: list[str], on_result: ResultCallback | None = None,
                   sequential: bool = False) -> dict[str, MethodResult]:
        """All ``methods`` on ``question``; concurrently unless ``sequential``. Keys keep ``methods`` order."""
        q = strip_truth(question)

        async def one(name: str) -> MethodResult:
            result = await METHODS[name](**self.method_params.get(name, {})).arun(q, self.context(name))
            if on_result is not None:
                on_result(result)
            return result

        if sequential:
            results = [await one(m) for m in methods]
        else:
            results = await asyncio.gather(*(one(m) for m in methods))
        return {r.method: r for r in results}

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
