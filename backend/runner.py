"""Run several methods on one question concurrently, each with its own call list, none seeing truth."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from backend.llm.cache import CallCache
from backend.llm.client import CallLog, LLMClient, LLMConfig
from backend.methods import METHODS
from backend.methods.base import EvidenceMode, RunContext, run_sync
from backend.schema import Dataset, MethodResult, Question, strip_truth


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

    async def arun(self, question: Question, methods: list[str]) -> dict[str, MethodResult]:
        q = strip_truth(question)
        instances = [METHODS[m](**self.method_params.get(m, {})) for m in methods]
        results = await asyncio.gather(*(inst.arun(q, self.context(inst.name)) for inst in instances))
        return {r.method: r for r in results}

    def run(self, question: Question, methods: list[str]) -> dict[str, MethodResult]:
        return run_sync(self.arun(question, methods))
