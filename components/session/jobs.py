"""Background jobs started from a page: each runs on a worker thread owned by the session, so a rerun, a click or
a visit to another page never interrupts it. One ``Job`` type serves every kind (methods on a question, a
dataset-level preparation alone, a risk sweep, a leave-one-out, a batch evaluation, an attack): it keeps each
method's result as soon as that method finishes (the page polls it and fills columns in), the progress of the stage
in progress ("Evaluating": done / total with a measured estimate of the time left: ``backend.steps.Stage``), the
dataset-level steps its methods wait for (``waits``: an index build or a stage 1 is published process-wide by whoever
computes it, so a run started after a reload shows the same step, from its start), what it computes besides
(``value``) and its error, and for a run the model calls its methods have made so far (``calls``: read from the
session's call log, which records each call as it ends); ``components.session.progress.follow`` draws any of them. A store holds one job
per key: starting a key that is still running returns the running job instead of a second one. No Streamlit here:
the worker threads touch only their job, and the page reads it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from backend.errors import text_of
from backend.schema import LLMCall, MethodResult
from backend.steps import Stage

#: What a job's methods wait for: each step in progress (``backend.steps``: process-wide, perhaps started by another
#: session) with the job's methods that wait for it.
Waits = Callable[[], list[tuple[Stage, list[str]]]]

__all__ = ["Job", "Jobs", "Stage", "Timed", "Waits", "launch"]


@dataclass
class Timed:
    """When a background job started and finished (``perf_counter``); shared by every kind of job."""

    started: float = field(default_factory=time.perf_counter, kw_only=True)
    finished: float | None = field(default=None, kw_only=True)

    @property
    def running(self) -> bool:
        return self.finished is None

    @property
    def elapsed(self) -> float:
        return (self.finished or time.perf_counter()) - self.started


@dataclass
class Job(Timed):
    methods: list[str] = field(default_factory=list)  # whose results the job fills in, one by one (may be none)
    question_id: str = ""
    about: Any = None  # what the job works on, for the page (a batch's settings and folder)
    stage: Stage | None = None  # the stage in progress, if any
    #: the process-wide steps its methods wait for (a run's index build or stage 1, whoever computes it)
    waits: Waits | None = None
    value: Any = None  # what a job computes besides per-method results (a risk sweep, an evaluation, an attack)
    #: the model calls its methods have made so far on its question (finished calls: a call is logged as it ends)
    calls: Callable[[], list[LLMCall]] | None = None
    error: str | None = None  # a failure outside any one method (it is also every missing method's error)
    thread: threading.Thread | None = None
    _results: dict[str, MethodResult] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _done: threading.Event = field(default_factory=threading.Event)

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for the job to finish; whether it has."""
        return self._done.wait(timeout)

    def add(self, result: MethodResult) -> None:
        """One method finished (called from the worker)."""
        with self._lock:
            self._results[result.method] = result

    def results(self) -> dict[str, MethodResult]:
        """The results so far, in ``methods`` order."""
        with self._lock:
            return {m: self._results[m] for m in self.methods if m in self._results}

    def pending(self) -> list[str]:
        with self._lock:
            return [m for m in self.methods if m not in self._results]

    def progress(self, label: str, unit: str = "call", each: str = "", times: int = 1) -> Callable[[int, int], None]:
        """An ``on_progress(done, total)`` callback for a new stage (called from the worker); ``each``/``times``:
        see ``Stage``."""
        stage = self.stage = Stage(label, unit, times=times, each=each)
        return stage.report


Work = Callable[[Job], None]


def _guarded(job: Job, work: Work) -> None:
    """Run ``work``; whatever it raises becomes the job's error and every unfinished method's, never a traceback."""
    try:
        work(job)
    except Exception as err:  # noqa: BLE001 - shown on the page as these methods' error
        job.error = f"{type(err).__name__}: {text_of(err)}"  # a ValidationError by its fields, never its input
        for name in job.pending():
            job.add(MethodResult(method=name, question_id=job.question_id, error=job.error))
    finally:
        job.stage = job.waits = None
        job.finished = time.perf_counter()
        job._done.set()


def launch(job: Job, work: Work, name: str = "conflictlens-run") -> Job:
    """``work(job)`` on a new worker thread; whatever it raises becomes the job's error."""
    job.thread = threading.Thread(target=_guarded, args=(job, work), name=name, daemon=True)
    job.thread.start()
    return job


class Jobs:
    """One session's jobs by key (thread-safe). A finished job stays until ``collect`` takes it."""

    def __init__(self) -> None:
        self._jobs: dict[Hashable, Job] = {}
        self._lock = threading.Lock()

    def start(self, key: Hashable, work: Work, methods: list[str] = (), question_id: str = "") -> Job:
        """``work(job)`` on a new worker thread, unless ``key`` is running already: then that job."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.running:
                return job
            job = self._jobs[key] = Job(methods=list(methods), question_id=question_id)
        return launch(job, work)

    def get(self, key: Hashable) -> Job | None:
        with self._lock:
            return self._jobs.get(key)

    def running(self, key: Hashable) -> Job | None:
        job = self.get(key)
        return job if job is not None and job.running else None

    def in_flight(self) -> dict[Hashable, Job]:
        """The jobs still running, by key."""
        with self._lock:
            return {k: j for k, j in self._jobs.items() if j.running}

    def busy(self) -> bool:
        """Any job still running (tests wait on this)."""
        with self._lock:
            return any(j.running for j in self._jobs.values())

    def collect(self, key: Hashable | None = None) -> dict[Hashable, Job]:
        """Take the finished jobs (only ``key``'s when given) out of the store."""
        with self._lock:
            done = {k: j for k, j in self._jobs.items() if not j.running and (key is None or k == key)}
            for k in done:
                del self._jobs[k]
            return done
