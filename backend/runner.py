"""Run several methods on one question concurrently, sharing the model-call cache and the retriever.

Each method gets its own context (its own call list) and a truth-stripped question; one method's
failure is contained in its ``MethodResult.error``. Results can be consumed as they finish
(``on_result`` / ``run_iter``) so the dashboard fills columns in as methods complete.

The runner knows no method by name. A method that needs dataset-level work before answering declares it
(``Method.prepared_type``, ``prepare_key``, ``prepare``); the runner computes that artefact on the
truth-stripped dataset on first need, inside that method's own task (the others are not held up), and keeps
it in memory and on disk (``backend.prepared``) under the method's key. ``prepare_all`` computes every artefact a
set of methods needs before a run, with each stage's progress (the CLI, the app and the Ray driver call it); one
artefact is computed once in the process however many threads, event loops and runners ask for it at once.
``run_staged`` runs the methods with nothing to prepare at once and each other one after its own preparation, so
a first look shows results while a long stage runs. The retriever a method searches depends on the evidence mode
(``Runner.retriever``: the dense index in ``retrieve`` mode, BRIDGE's BM25-then-dense corpus retriever otherwise).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from backend import prepared as store
from backend import steps
from backend.errors import text_of
from backend.llm.cache import CallCache
from backend.limits import Stopped
from backend.llm.client import CallLog, LLMClient, LLMConfig, default_cache
from backend.methods import METHODS
from backend.methods.base import Method, Progress, RunContext, run_sync
from backend.methods.reading import DEFAULT_READING, Reading, Readings
from backend.schema import Dataset, EvidenceMode, MethodResult, Preparation, Question, strip_truth
from backend.schema.data import EDITED_FROM

ResultCallback = Callable[[MethodResult], None]
#: ``on_progress(stage, done, total, unit)``: progress of one named stage of ``Runner.prepare_all`` (an index build,
#: a method's dataset-level preparation).
StageProgress = Callable[[str, int, int, str], None]
INDEX_STAGE = "Embedding documents"

#: The artefacts being computed in this process, by (folder, dataset, key, replay): whoever asks for one while it is
#: being computed (another thread, event loop or runner) waits for that computation instead of starting a second one.
_FLIGHTS: dict[tuple[str, str, str, bool], concurrent.futures.Future] = {}
_FLIGHTS_LOCK = threading.Lock()


def index_step(retriever: Any) -> tuple:
    """The step key of ``retriever``'s index build in ``backend.steps``: its kind, location and collection (two
    retriever objects over one index share it), else the object itself."""
    location = getattr(retriever, "location", None)
    if location is None:
        return "index", id(retriever)
    return "index", type(retriever).__name__, str(location), getattr(retriever, "collection_name", "")


def build_published(retriever: Any, label: str, ready: Callable[[], bool], on_progress: Progress | None = None
                    ) -> None:
    """Build (or sync) ``retriever``'s index as a step published under ``index_step(retriever)``, so every run or page
    waiting for this index (any session) shows the same progress; while another thread builds it, wait for that build
    and sync only if the index is still not ``ready`` after it."""
    key = index_step(retriever)
    if (other := steps.current(key)) is not None:
        other.ended.wait()
        if ready():
            return
    with steps.step(key, label, "document", also=on_progress) as report:
        retriever.build(on_progress=report)


@dataclass
class Runner:
    dataset: Dataset
    llm: LLMConfig = field(default_factory=LLMConfig)
    #: The model-call cache: None runs without one (a "live" config is then run as "off"); "default" opens the
    #: per-user cache (``backend.llm.client.default_cache()``, the CLI's default).
    cache: CallCache | str | None = None
    log: CallLog | None = None
    #: A key typed for ``llm.api_base`` (``backend.llm.keys``: where it may go); never in a repr.
    api_key: str | None = field(default=None, repr=False)
    evidence_mode: EvidenceMode = "given"
    top_k: int = 3
    #: Per method name, the keyword arguments of its constructor (``{name: {parameter: value}}``).
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: A chroma server (``http://host:port``) holding the retrieval index instead of the cache folder's embedded one.
    chroma_url: str | None = None
    #: How methods read replies (``backend.methods.reading``): the project's tolerant readers or the papers' rules.
    reading: Reading = DEFAULT_READING
    #: The truth-stripped dataset and a retriever over it, when the caller keeps them for many runners (the app: one
    #: per dataset per process): stripping copies every document, and each new retriever re-checks the whole index.
    stripped_dataset: Dataset | None = None
    retriever_source: Callable[[], Any] | None = None
    #: Set once whoever owns this runner's runs is gone (the app: the session ended, ``backend.limits``): no model
    #: call is sent after it (each raises ``Stopped``); the calls in flight finish and their replies stay cached.
    stop: threading.Event | None = None
    _retriever: Any = None
    _stripped: Dataset | None = None
    # per runner, never copied by ``dataclasses.replace`` (a copy with other method parameters has other keys)
    _prepared: dict[tuple[str, str], tuple[BaseModel, Preparation]] = field(default_factory=dict, init=False)
    _retriever_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _keys: dict[str, str | None] = field(default_factory=dict, init=False)
    #: why a method's preparation failed in the last ``prepare_all``: its runs report it instead of trying again
    _failed: dict[str, str] = field(default_factory=dict, init=False)
    _ids: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.cache == "default":
            self.cache = default_cache()
        elif isinstance(self.cache, str):
            raise ValueError(f"cache must be a CallCache, 'default' or None, got {self.cache!r}")
        if self.cache is None and self.llm.cache_mode == "live":  # Runner(dataset) works out of the box
            self.llm = self.llm.model_copy(update={"cache_mode": "off"})
        self._client = LLMClient(self.llm, cache=self.cache, api_key=self.api_key, log=self.log, stop=self.stop)

    @property
    def stripped(self) -> Dataset:
        if self._stripped is None:
            self._stripped = self.stripped_dataset if self.stripped_dataset is not None else strip_truth(self.dataset)
        return self._stripped

    def retriever(self):
        """The retriever over the truth-stripped dataset that methods search in this evidence mode: in ``retrieve``
        mode the dense index (``backend.retrieval``: every method retrieves its evidence there, BRIDGE's K_ret
        too); in ``given`` mode only a method that needs the whole corpus searches (BRIDGE's K_ret), and it gets the
        BM25-then-dense corpus retriever (``backend.corpus``: built in under a second and kept on disk, where the
        dense index embeds every document first). ``retriever_source`` and ``chroma_url`` are the dense index's."""
        with self._retriever_lock:  # a long-lived runner serves several threads
            if self._retriever is None:
                if self.evidence_mode != "retrieve":
                    from backend import corpus

                    self._retriever = corpus.shared(self.stripped)
                else:
                    from backend.retrieval import Retriever

                    self._retriever = (self.retriever_source() if self.retriever_source
                                       else Retriever(self.stripped, chroma_host=self.chroma_url or None))
            return self._retriever

    def index_ready(self) -> bool:
        """Whether the retriever is ready to search without a build (in this process, or saved for this content)."""
        if self._retriever is None and self.evidence_mode == "retrieve" and self.retriever_source is None:
            return False  # a dense index of its own, not opened yet (opening it costs a sync); a shared one may be built
        retriever = self.retriever()
        ready = getattr(retriever, "ready", None)
        return ready() if ready is not None else getattr(retriever, "last_build", None) is not None

    def method(self, name: str) -> Method:
        return METHODS[name](**self.method_params.get(name, {}))

    def needs_index(self, name: str) -> bool:
        """Whether method ``name`` searches the retrieval index in this runner's evidence mode (closed book never)."""
        method = METHODS[name]
        return method.needs_index or self.evidence_mode == "retrieve" and method.reads_evidence

    def context(self, name: str, prepared: BaseModel | None = None, question_id: str | None = None,
                edited: tuple[Question, str] | None = None) -> RunContext:
        """``edited``: (the stripped edited question, its original's id), when the question is a what-if edit of a
        dataset question: the retriever then sees the edited documents instead of the original ones."""
        retriever = self.retriever() if self.needs_index(name) else None
        if retriever is not None and edited is not None:
            from backend.whatif.overlay import EditedQuestionRetriever

            retriever = EditedQuestionRetriever(retriever, *edited)
        return RunContext(client=self._client.for_method(name, dataset=self.stripped.name, question_id=question_id),
                          retriever=retriever,
                          evidence_mode=self.evidence_mode, top_k=self.top_k,
                          sources=self.stripped.source_names(), prepared=prepared,
                          readings=Readings(self.reading))

    # -- dataset-level preparation: computed on the stripped dataset on first need, kept in memory and on disk

    def prepare_key(self, name: str) -> str | None:
        """The key of ``name``'s artefact for this dataset, model and parameters (None: nothing to prepare)."""
        if name not in self._keys:  # dataset, model and parameters are fixed per runner; the key hashes the data
            method = self.method(name)
            self._keys[name] = (None if method.prepared_type is None
                                else method.prepare_key(self.stripped, self.context(name)))
        return self._keys[name]

    def prepared(self, name: str) -> BaseModel | None:
        """``name``'s artefact if already computed (by this runner or in the on-disk cache); never computes."""
        found = self._lookup(name)
        return found[0] if found else None

    def preparation(self, name: str) -> Preparation | None:
        """What ``name``'s artefact cost when it was computed (None: not computed yet, or nothing to prepare)."""
        found = self._lookup(name)
        return found[1] if found else None

    def _lookup(self, name: str) -> tuple[BaseModel, Preparation] | None:
        method, key = self.method(name), self.prepare_key(name)
        if key is None:
            return None
        if (name, key) not in self._prepared:
            found = store.load(method.prepared_type, method.prepared_folder or name, self.stripped.name, key)
            if found is not None:
                self._prepared[(name, key)] = found
        return self._prepared.get((name, key))

    def adopt_prepared(self, name: str, artefact: BaseModel, preparation: Preparation) -> None:
        """Use ``name``'s artefact computed by another runner on the same dataset, model and parameters (the Ray
        engine's driver hands its own to every worker, so no worker computes it again)."""
        key = self.prepare_key(name)
        if key is None or getattr(artefact, "key", key) != key:
            raise ValueError(f"{name}: the artefact was computed for other data, model or parameters")
        self._prepared[(name, key)] = (artefact, preparation)

    # -- long steps, published process-wide (``backend.steps``) so that whoever waits for one sees its progress

    def _flight(self, name: str, key: str) -> tuple[str, str, str, bool]:
        """The computation of ``name``'s artefact ``key`` in ``_FLIGHTS`` (and, prefixed, in ``backend.steps``)."""
        return self.method(name).prepared_folder or name, self.stripped.name, key, self.llm.cache_mode == "replay"

    def index_label(self) -> str:
        """The name of the index build's step (the retriever's own, e.g. BM25's, else ``INDEX_STAGE``)."""
        return getattr(self.retriever(), "stage", INDEX_STAGE)

    def build_index(self, on_progress: Progress | None = None) -> None:
        """Build (or sync) the retriever's index, published as a step under ``index_step(retriever)``. While another
        thread builds the same index, wait for that build (its step is what the waiting runs show) and sync only if
        the index is still not ready after it."""
        build_published(self.retriever(), self.index_label(), self.index_ready, on_progress)

    def waiting(self, names: list[str]) -> list[tuple[steps.Stage, list[str]]]:
        """The steps in progress in this process (computed by any runner, thread or session) that ``names`` wait
        for: the build of the index they search (once this runner has its retriever) and their artefacts' flights;
        each with the methods waiting for it, in ``names`` order. Never computes anything."""
        found: dict[int, tuple[steps.Stage, list[str]]] = {}
        for name in names:
            keys = []
            try:
                if self.needs_index(name) and self._retriever is not None:
                    keys.append(index_step(self._retriever))
                if (key := self.prepare_key(name)) is not None:
                    keys.append(("prepare", *self._flight(name, key)))
            except Exception:  # noqa: BLE001 - a key that cannot be computed: its run reports why
                continue
            for k in keys:
                if (stage := steps.current(k)) is not None:
                    found.setdefault(id(stage), (stage, []))[1].append(name)
        return list(found.values())

    async def aprepare(self, name: str, on_progress: Progress | None = None,
                       refresh: bool = False) -> BaseModel | None:
        """``name``'s artefact, computed when missing (or when ``refresh``); None when it needs none."""
        key = self.prepare_key(name)
        if key is None:
            return None
        if not refresh and (found := self.prepared(name)) is not None:
            return found
        # one computation per artefact in the process: concurrent questions, runs, threads and runners share it. A
        # replay (answers from the reply cache only, failing on a miss) never joins a live computation, nor a live one
        # a replay: one would wait minutes for what it may not compute, the other inherit a cache miss as its failure
        flight = self._flight(name, key)
        with _FLIGHTS_LOCK:
            future = _FLIGHTS.get(flight)
            owner = future is None and (refresh or (name, key) not in self._prepared)
            if owner:
                future = _FLIGHTS[flight] = concurrent.futures.Future()
        if future is None:  # computed by another caller between the look above and the lock
            return self._prepared[(name, key)][0]
        if not owner:
            # shielded: a waiter cancelled (its run stopped) leaves the computation, and its owner, alone
            try:
                artefact, preparation = await asyncio.shield(asyncio.wrap_future(future))
            except Stopped:  # its owner left (another session): this runner computes it, from the replies cached
                if self.stop is not None and self.stop.is_set():
                    raise
                return await self.aprepare(name, on_progress, refresh)
            self._prepared[(name, key)] = (artefact, preparation)
            return artefact
        try:
            if not refresh and (found := self._lookup(name)) is not None:  # saved by a flight that just ended
                future.set_result(found)
                return found[0]
            # published process-wide while it runs: every run waiting for this flight (any session) shows it
            with steps.step(("prepare", *flight), self.method(name).prepare_label, "call", also=on_progress) as report:
                artefact = await self._compute(name, key, report)
            future.set_result(self._prepared[(name, key)])
            return artefact
        except BaseException as err:  # the waiters get the same failure (an interruption as a plain error)
            future.set_exception(err if isinstance(err, Exception) else RuntimeError(f"{name}: interrupted"))
            raise
        finally:
            with _FLIGHTS_LOCK:
                _FLIGHTS.pop(flight, None)

    def prepare_all(self, names: list[str], on_progress: StageProgress | None = None) -> dict[str, str]:
        """Compute every dataset-level artefact ``names`` need that is not computed yet (in memory or on disk), one
        method after another, before a run or a batch; a preparation that searches the retrieval index syncs the
        index first, as its own stage. ``on_progress(stage, done, total, unit)`` follows each stage. Callers that
        need the same artefact at once compute it once (the others wait and share it). Returns, per method whose
        preparation failed, why: every run of that method until the next ``prepare_all`` reports it as the method's
        error instead of trying again (one failed stage 1, not one per question of a batch); the other methods still
        prepare."""
        failures: dict[str, str] = {}
        for name in dict.fromkeys(names):
            if (why := run_sync(self._aprepare_one(name, on_progress))) is not None:
                failures[name] = why
        return failures

    async def _aprepare_one(self, name: str, on_progress: StageProgress | None = None) -> str | None:
        """``prepare_all`` for one method; None, or why its index or its preparation failed."""
        def stage(label: str, unit: str) -> Progress | None:
            return None if on_progress is None else lambda done, total: on_progress(label, done, total, unit)

        self._failed.pop(name, None)  # a new run or batch tries again
        try:
            todo = self.prepare_key(name) is not None and self.prepared(name) is None
            # the index first, as a named stage, for a method that searches it: synced before a preparation that
            # searches it, built when missing for any other (not left to the method's first search, where a long
            # build would show as nothing but a method still running); on a thread: building never needs the loop
            if self.needs_index(name) and (todo or not self.index_ready()):
                await asyncio.to_thread(self.build_index, stage(self.index_label(), "document"))
            if not todo:
                return None
        except Exception as err:  # noqa: BLE001 - this method's failure; the others still prepare
            return text_of(err)  # a ValidationError by its fields, never its input
        try:
            await self.aprepare(name, on_progress=stage(self.method(name).prepare_label, "call"))
        except Exception as err:  # noqa: BLE001 - as above; its runs report it
            self._failed[name] = text_of(err)
            return self._failed[name]
        return None

    async def _compute(self, name: str, key: str, on_progress: Progress | None) -> BaseModel:
        method, ctx, start = self.method(name), self.context(name), time.perf_counter()
        artefact = await method.prepare(self.stripped, ctx, on_progress)
        calls = ctx.client.calls
        preparation = Preparation(label=method.prepare_label, calls=len(calls),
                                  cache_hits=sum(c.cache_hit for c in calls),
                                  seconds=round(time.perf_counter() - start, 3), computed_at=time.time())
        store.save(artefact, preparation, method.prepared_folder or name, self.stripped.name, key)
        self._prepared[(name, key)] = (artefact, preparation)
        return artefact

    def prepare(self, name: str, on_progress: Progress | None = None, refresh: bool = False) -> BaseModel | None:
        return run_sync(self.aprepare(name, on_progress, refresh))

    # -- one question ------------------------------------------------------------------------------------

    async def arun(self, question: Question, methods: list[str], on_result: ResultCallback | None = None,
                   sequential: bool = False) -> dict[str, MethodResult]:
        """All ``methods`` on ``question``; concurrently unless ``sequential``. Keys keep ``methods`` order.
        ``question`` may be a what-if edit of a dataset question (``backend.whatif``): it is read from its
        ``meta`` here, before the truth (``meta`` included) is stripped."""
        q = strip_truth(question)
        original = question.meta.get(EDITED_FROM)
        # an edit saved into this dataset (an exported what-if set) is indexed like any of its questions
        edited = (q, str(original)) if original and not self._indexed(question.id) else None

        async def one(name: str) -> MethodResult:
            result = await self._run_one(name, q, edited)
            if on_result is not None:
                on_result(result)
            return result

        if sequential:
            results = [await one(m) for m in methods]
        else:
            results = await asyncio.gather(*(one(m) for m in methods))
        return {r.method: r for r in results}

    def _indexed(self, question_id: str) -> bool:
        if self._ids is None:
            self._ids = frozenset(q.id for q in self.stripped.questions)
        return question_id in self._ids

    async def _run_one(self, name: str, q: Question, edited: tuple[Question, str] | None = None) -> MethodResult:
        method, started = self.method(name), time.time()
        try:
            # failed in this batch's ``prepare_all``: not tried again per question, unless computed since elsewhere
            if name in self._failed and self.prepared(name) is None:
                raise RuntimeError(self._failed[name])
            artefact = await self.aprepare(name)
        except Exception as err:  # noqa: BLE001 - reported as this method's error; the others still run
            return MethodResult(method=name, question_id=q.id, params=method.params(), reading=self.reading,
                                error=f"{method.prepare_label} failed: {text_of(err)}")
        try:
            ctx = self.context(name, artefact, question_id=q.id, edited=edited)
        except Exception as err:  # noqa: BLE001 - e.g. the retrieval index cannot be opened: this method's error
            return MethodResult(method=name, question_id=q.id, params=method.params(), reading=self.reading,
                                error=text_of(err))
        result = await method.arun(q, ctx)
        if artefact is not None and (preparation := self.preparation(name)) is not None:
            reused = preparation.computed_at < started  # computed by an earlier run: this one paid nothing
            result.preparation = preparation.model_copy(update={"reused": reused})
        return result

    def run(self, question: Question, methods: list[str], on_result: ResultCallback | None = None,
            sequential: bool = False) -> dict[str, MethodResult]:
        return run_sync(self.arun(question, methods, on_result, sequential))

    def pending(self, methods: list[str]) -> list[str]:
        """The methods with dataset-level work still to do before they can answer: an artefact not computed yet
        (in memory or on disk), or an index to build that they search."""
        out = []
        for name in methods:
            try:
                todo = self.prepare_key(name) is not None and self.prepared(name) is None
                if todo or (self.needs_index(name) and not self.index_ready()):
                    out.append(name)
            except Exception:  # noqa: BLE001 - e.g. an index that cannot be opened: its preparation reports it
                out.append(name)
        return out

    def run_staged(self, question: Question, methods: list[str], on_result: ResultCallback | None = None,
                   on_progress: StageProgress | None = None) -> dict[str, MethodResult]:
        """All ``methods`` on ``question``, the ready ones first: the methods with nothing to prepare start at once,
        while each other method prepares (as ``prepare_all``, with ``on_progress``) and then runs, so a long stage 1
        holds up only its own method. One event loop for all (litellm's logging worker follows one loop at a time).
        Keys keep ``methods`` order."""
        return run_sync(self.arun_staged(question, methods, on_result, on_progress))

    async def arun_staged(self, question: Question, methods: list[str], on_result: ResultCallback | None = None,
                          on_progress: StageProgress | None = None) -> dict[str, MethodResult]:
        waiting = self.pending(methods)
        ready = [m for m in methods if m not in waiting]

        async def later(name: str) -> dict[str, MethodResult]:
            await self._aprepare_one(name, on_progress)  # a failure is reported by the run, as the method's error
            return await self.arun(question, [name], on_result)

        parts = await asyncio.gather(*([self.arun(question, ready, on_result)] if ready else []),
                                     *(later(m) for m in waiting))
        results = {name: result for part in parts for name, result in part.items()}
        return {m: results[m] for m in methods}

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
