"""What every method shares: the run context it may use, the dataset-level ``prepare`` hook, and the wrapper
that turns a run into a ``MethodResult`` (errors captured, calls attached, wall time measured)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from backend.answers import normalize
from backend.errors import text_of
from backend.llm.client import LLMClient, LLMError
from backend.methods.reading import Readings
from backend.schema import Dataset, Document, EvidenceMode, MethodResult, Question, Trace

#: ``on_progress(done, total)``: how far a long step (a method's ``prepare``) has come.
Progress = Callable[[int, int], None]


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
    #: What this method's ``prepare`` computed for this dataset and model (e.g. RA-RAG's stage-1 weights): an
    #: unsupervised artefact, never ground truth. None when the method needs none or it is not available.
    prepared: BaseModel | None = None
    #: How this run reads replies (``backend.methods.reading``): every decision a method reads from a reply goes
    #: through ``readings.decide``, which returns the run's reading's value and records where the other differs.
    readings: Readings = field(default_factory=Readings)

    def evidence(self, question: Question, source: str | None = None, k: int | None = None) -> list[Document]:
        if self.evidence_mode == "given":  # as backend.retrieval.evidence, without importing chromadb (0.6 s)
            return list(question.documents)
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
    #: answer -> document ids it rests on; methods that know their structure (sources, agents) fill it
    support: dict[str, list[str]] | None = None
    #: the documents the method read; without ``support``, an answer rests on those of them that state it
    #: (``default_support``), so a method that read nothing (closed book) rests on no document
    read: tuple[Document, ...] = ()


def default_support(answers: list[str], docs: list[Document] | tuple[Document, ...]) -> dict[str, list[str]]:
    """For each answer, the documents among ``docs`` whose text contains it (normalised word sequence)."""
    texts = {d.id: f" {normalize(d.text)} " for d in docs}
    return {a: [i for i, t in texts.items() if normalize(a) and f" {normalize(a)} " in t] for a in answers}


class Method:
    """Subclasses set ``name`` and ``steps`` and implement ``_run``; ``arun``/``run`` never raise for model
    failures.

    Dataset-level preparation (RA-RAG's stage 1): a method that needs it sets ``prepared_type`` to the pydantic
    model of its artefact and implements ``prepare_key`` and ``prepare``. The runner calls them without knowing
    the method: it computes the artefact on the truth-stripped dataset on first need, keeps it in memory and on
    disk (``<cache dir>/<prepared_folder>/``) under ``prepare_key``, and hands it to every run as
    ``RunContext.prepared``.
    """

    name: ClassVar[str]
    #: Every step name this method's calls may carry (the Model calls page shows them; the contract test checks
    #: them); ``{round}``-style fields stand for a number, e.g. ``"debate_round_{round}"``.
    steps: ClassVar[tuple[str, ...]] = ()
    #: The artefact ``prepare`` returns; None: the method needs no dataset-level preparation.
    prepared_type: ClassVar[type[BaseModel] | None] = None
    #: Folder of the on-disk cache of ``prepare``'s artefacts, under the cache dir (default: the method's name).
    prepared_folder: ClassVar[str] = ""
    #: What ``prepare`` does, in the words error messages and progress bars use.
    prepare_label: ClassVar[str] = "dataset-level preparation"
    #: True: the method searches the dataset's index itself (BRIDGE's multi-query retriever), so its context gets
    #: the retriever in every evidence mode, not only in ``retrieve``.
    needs_index: ClassVar[bool] = False
    #: False: the method never reads the question's evidence (closed book), so it neither waits for nor opens an index.
    reads_evidence: ClassVar[bool] = True

    @classmethod
    def declares_step(cls, step: str) -> bool:
        """Is ``step`` one of ``steps`` (a ``{field}`` matching any number)?"""
        return any(re.fullmatch(re.sub(r"\\\{\w+\\\}", r"\\d+", re.escape(s)), step) for s in cls.steps)

    def params(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    # -- dataset-level preparation (optional) ----------------------------------------------------------

    def prepare_key(self, dataset: Dataset, ctx: RunContext) -> str | None:
        """A hash of everything ``prepare``'s artefact depends on; None when there is nothing to prepare for
        this dataset (then ``prepare`` is never called)."""
        return None

    async def prepare(self, dataset: Dataset, ctx: RunContext, on_progress: Progress | None = None) -> BaseModel:
        """The artefact for ``dataset`` (truth-stripped). May raise: the runner reports it as this method's error."""
        raise NotImplementedError(f"{self.name} declares no dataset-level preparation")

    # -- one question -----------------------------------------------------------------------------------

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
            error = f"{type(err).__name__}: {text_of(err)}"  # a ValidationError by its fields, never its input
        wall_s, calls = round(time.perf_counter() - start, 4), ctx.client.calls
        return MethodResult(
            method=self.name, question_id=question.id,
            answers=outcome.answers if outcome else [], abstained=outcome.abstained if outcome else False,
            error=error, trace=outcome.trace if outcome else None, calls=calls,
            params=self.params(), wall_s=wall_s, first_run_s=None if error else ctx.client.first_run_s(calls, wall_s),
            support=self._support(outcome), reading=ctx.readings.reading, decisions_read=ctx.readings.decisions,
            reading_differences=list(ctx.readings.differences))

    @staticmethod
    def _support(outcome: Outcome | None) -> dict[str, list[str]]:
        if outcome is None:
            return {}
        if outcome.support is not None:
            return outcome.support
        return default_support(outcome.answers, outcome.read)

    def run(self, question: Question, ctx: RunContext) -> MethodResult:
        return run_sync(self.arun(question, ctx))


async def gather_all(*aws):
    """``asyncio.gather`` that lets every awaitable finish before raising the first failure. A method's concurrent
    calls all end before its result is built, so the result lists every request the method sent and nothing of it
    runs on after (``asyncio.gather`` raises at once and leaves the others running, unrecorded)."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


#: Threads of a run's default executor. litellm's ``acompletion`` hops through it on every model call, and methods
#: run their blocking work there too (embedding, index search); asyncio's default (cores + 4: 6 on two cores) let a
#: few questions' threads, parked on a first use (the embedding model's load, the index's build), hold up every
#: model call of the run for as long (measured: 20 s before the first request of a 50-question evaluation).
EXECUTOR_THREADS = 64


async def _on_roomy_executor(coro):
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=EXECUTOR_THREADS, thread_name_prefix="conflictlens-run"))
    return await coro


def run_sync(coro):
    """Run a coroutine to completion from sync code, even when this thread already runs an event loop
    (Jupyter, Playwright's sync API): then it runs on a fresh loop in a worker thread. The loop's default executor
    has ``EXECUTOR_THREADS`` threads."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_on_roomy_executor(coro))
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _on_roomy_executor(coro)).result()
