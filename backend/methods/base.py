"""What every method shares: the run context it may use, and the wrapper that turns a run into a
``MethodResult`` (errors captured, calls attached, wall time measured)."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from backend.answers import normalize
from backend.llm.client import LLMClient, LLMError
from backend.schema import Document, MethodResult, Question, ReliabilityEstimate, Trace

EvidenceMode = Literal["given", "retrieve"]


@dataclass
class RunContext:
    """All a method may touch: a model client (its own call list) and, optionally, a retriever.

    Built by the runner from a truth-stripped question and dataset; methods never see ground truth.
    """

    client: LLMClient
    retriever: Any | None = None          # backend.retrieval.Retriever over the stripped dataset
    evidence_mode: EvidenceMode = "given"
    top_k: int = 3
    #: The dataset's named sources in dataset order (empty when documents name no source).
    sources: list[str] = field(default_factory=list)
    #: RA-RAG stage-1 weights for this dataset and model: an unsupervised estimate, not ground truth.
    reliability: ReliabilityEstimate | None = None

    def evidence(self, question: Question, source: str | None = None, k: int | None = None) -> list[Document]:
        from backend.retrieval import evidence

        return evidence(question, self.evidence_mode, self.retriever, k=k or self.top_k, source=source)


def passages_field(docs: list[Document]) -> list[dict[str, str]]:
    """Documents as the task field ``passages`` (ids, source labels and text; never labels)."""
    return [{"id": d.id, "source": d.source_name, "text": d.text} for d in docs]


@dataclass(frozen=True)
class Outcome:
    answers: list[str]
    abstained: bool
    trace: Trace
    #: answer -> document ids it rests on; methods that know their structure (sources, agents) fill it,
    #: otherwise ``default_support`` finds the read documents that state the answer
    support: dict[str, list[str]] | None = None


def default_support(answers: list[str], docs: list[Document]) -> dict[str, list[str]]:
    """For each answer, the documents whose text contains it (normalised word sequence)."""
    texts = {d.id: f" {normalize(d.text)} " for d in docs}
    return {a: [i for i, t in texts.items() if normalize(a) and f" {normalize(a)} " in t] for a in answers}


class Method:
    """Subclasses set ``name`` and implement ``_run``; ``arun``/``run`` never raise for model failures."""

    name: ClassVar[str]

    def params(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        raise NotImplementedError

    async def arun(self, question: Question, ctx: RunContext) -> MethodResult:
        start = time.perf_counter()
        error, outcome = None, None
        try:
            outcome = await self._run(question, ctx)
        except LLMError as err:
            error = f"model call failed: {err}"
        except Exception as err:  # noqa: BLE001 - one method's bug must not hide the others
            error = f"{type(err).__name__}: {err}"
        return MethodResult(
            method=self.name, question_id=question.id,
            answers=outcome.answers if outcome else [], abstained=outcome.abstained if outcome else False,
            error=error, trace=outcome.trace if outcome else None, calls=ctx.client.calls,
            params=self.params(), wall_s=round(time.perf_counter() - start, 4),
            support=self._support(outcome, question))

    @staticmethod
    def _support(outcome: Outcome | None, question: Question) -> dict[str, list[str]]:
        if outcome is None:
            return {}
        if outcome.support is not None:
            return outcome.support
        return default_support(outcome.answers, question.documents)

    def run(self, question: Question, ctx: RunContext) -> MethodResult:
        return run_sync(self.arun(question, ctx))


def run_sync(coro):
    """Run a coroutine to completion from sync code, even when this thread already runs an event loop
    (Jupyter, Playwright's sync API): then it runs on a fresh loop in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
