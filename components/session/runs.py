"""Running methods from the app: one call cache per process, one call log per session, one long-lived runner per
session and settings (its dataset-level artefacts, e.g. a stage 1's weights, kept in memory and on disk by the
runner), results kept in one session ``Results`` under a ``RunKey`` naming every setting, so switching back and forth
never re-runs anything and never shows a result computed under other settings. Runs happen on worker threads owned
by the session (``jobs``): a page starts one, polls it with ``progress.follow`` while it is in flight, and finds its
results with ``cached_results`` once it is done, whatever the user clicked in between. No method is named here: a
method's parameters come from its page as ``method_params``."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from backend.llm.client import CallLog, LLMConfig, default_cache
from backend.paths import default_cache_dir
from backend.runner import Runner
from backend.schema import Dataset, LLMCall, MethodResult, Question, strip_truth
from components.session import apikey, owner
from components.session.jobs import Job, Jobs
from components.session.results import Results, RunKey
from components.session.state import Selection

LOG_KEY = "app.call_log"
RESULTS_KEY = "app.results"
RUNNERS_KEY = "app.runners"
MAX_RUNNERS = 16


def call_cache():
    """The process's reply cache in the cache folder as it is now (``CONFLICTLENS_CACHE_DIR``): one per folder, so a
    changed folder is never answered from the one the process opened first."""
    return _cache_in(str(default_cache_dir()))


@st.cache_resource(show_spinner=False)
def _cache_in(folder: str):
    return default_cache(folder)


def call_log() -> CallLog:
    if LOG_KEY not in st.session_state:
        st.session_state[LOG_KEY] = CallLog()
    return st.session_state[LOG_KEY]


def secrets_to_env() -> None:
    """Expose ``*_API_KEY`` entries of .streamlit/secrets.toml to litellm via the process environment
    (never written anywhere; the environment wins when both are set). They are the server's keys: a call carries
    them only to their provider's own endpoint or an allowed api_base (``backend.llm.keys``)."""
    try:
        items = dict(st.secrets)
    except Exception:  # noqa: BLE001 - no secrets file is the normal case
        return
    for name, value in items.items():
        if name.upper().endswith("_API_KEY") and isinstance(value, str):
            os.environ.setdefault(name.upper(), value)


def llm_config(selection: Selection) -> LLMConfig:
    return LLMConfig(model=selection.model.model, api_base=selection.model.api_base,
                     structured_output=selection.model.structured_output)


class _Shared:
    """What every runner of one dataset can share in this process: its truth-stripped copy and, for the ``retrieve``
    evidence mode, one dense index over it (built once, then every question's search goes straight to the index; on
    ``chroma_url`` when set). In ``given`` mode BRIDGE's corpus retriever is shared by ``backend.corpus.shared``."""

    def __init__(self, dataset: Dataset, chroma_url: str | None = None) -> None:
        self.source = dataset  # held, so its id (part of the cache key) cannot be reused by a later version
        self.stripped = strip_truth(dataset)
        self.chroma_url = chroma_url
        self._retriever = None
        self._lock = threading.Lock()

    def retriever(self):
        with self._lock:
            if self._retriever is None:
                from backend.retrieval import Retriever

                self._retriever = Retriever(self.stripped, chroma_host=self.chroma_url or None)
            return self._retriever


@st.cache_resource(show_spinner=False, max_entries=8)
def _shared(path: str, ident: int, chroma_url: str | None, _dataset: Dataset) -> _Shared:
    """Keyed by the loaded dataset object (``resources.dataset`` keeps one per file version), not hashed, and the
    index's server."""
    return _Shared(_dataset, chroma_url)


def runner(selection: Selection, evidence_mode: str = "given", method_params: dict | None = None,
           replay: bool = False) -> Runner:
    """The session's runner for these settings, built on first use and kept for the session, so the artefacts it
    prepared and the keys it computed serve every later run. Per session, not per process: a runner's model client
    writes the session's call log (``call_log``); what sessions share is the truth-stripped dataset, its retriever,
    the reply cache and the artefacts on disk (one computation of each at a time in the process: ``Runner``).
    ``replay``: answer from the reply cache only (a miss is an error) and log nothing: reading the cache is not
    a call this session made (the results carry their calls)."""
    secrets_to_env()
    k = (run_key(selection, evidence_mode=evidence_mode, method_params=method_params).settings(), replay)
    runners: dict[tuple[RunKey, bool], Runner] = st.session_state.setdefault(RUNNERS_KEY, {})
    if owner.stopped_here():  # taken for gone, and back (a reconnect after the grace): runners that may run again
        runners.clear()
        owner.renew()
    api_key = apikey.typed()  # a key typed for this api_base (backend.llm.keys decides where it may go)
    if (run := runners.get(k)) is None or run.api_key != api_key:
        runners.pop(k, None)  # another key typed: a runner of its own (the key is never part of a RunKey)
        while len(runners) >= MAX_RUNNERS:  # settings tried once and left (each holds only its settings' artefacts)
            del runners[next(iter(runners))]
        cfg = llm_config(selection)
        if replay:
            cfg = cfg.model_copy(update={"cache_mode": "replay"})
        shared = _shared(str(selection.dataset.path), id(selection.dataset), selection.chroma_url or None,
                         selection.dataset)
        run = runners[k] = Runner(selection.dataset, llm=cfg, cache=call_cache(), api_key=api_key,
                                  log=None if replay else call_log(), stripped_dataset=shared.stripped,
                                  retriever_source=shared.retriever, evidence_mode=evidence_mode,
                                  method_params=k[0].params, chroma_url=selection.chroma_url or None,
                                  reading=selection.model.reading,  # part of the key: each reading its own runner
                                  stop=owner.session_stop())  # each call checks it: the session gone, it stops
    return run


def _question_key(selection: Selection, question: Question | None) -> str | tuple[str, str]:
    """The selected question by its id; any other question (a what-if edit, an attack) by its id and a hash of its
    content: two attacks with the same tag (``~attack-k3``) but another placement are two runs."""
    if question is None or question is selection.question:
        return selection.question.id
    return question.id, hashlib.sha256(question.model_dump_json().encode()).hexdigest()[:16]


_VERSIONS: OrderedDict[int, tuple[Dataset, str]] = OrderedDict()  # id -> (the object, held so its id stays its own)
_VERSIONS_LOCK = threading.Lock()


def dataset_version(dataset: Dataset) -> str:
    """A hash of what ``dataset`` holds, computed once per loaded object: a file loaded again unchanged (the loader
    keeps a few datasets, and may have let this one go) keeps its results; a file that changed does not."""
    with _VERSIONS_LOCK:
        if (found := _VERSIONS.get(id(dataset))) is not None and found[0] is dataset:
            _VERSIONS.move_to_end(id(dataset))
            return found[1]
    version = hashlib.sha256(dataset.model_dump_json().encode()).hexdigest()[:16]
    with _VERSIONS_LOCK:
        _VERSIONS[id(dataset)] = (dataset, version)
        while len(_VERSIONS) > 16:
            _VERSIONS.popitem(last=False)
    return version


def run_key(selection: Selection, methods: list[str] | tuple[str, ...] = (), evidence_mode: str = "given",
            method_params: dict | None = None, question: Question | None = None) -> RunKey:
    """The run of ``methods`` on the selected question (or ``question``) with these settings."""
    return RunKey(dataset=str(selection.dataset.path), version=dataset_version(selection.dataset),
                  question=_question_key(selection, question), model=selection.model.model,
                  api_base=selection.model.api_base, structured_output=selection.model.structured_output,
                  reading=selection.model.reading, methods=tuple(methods), evidence_mode=evidence_mode,
                  method_params=RunKey.params_text(method_params), chroma_url=selection.chroma_url or None)


def results() -> Results:
    """The session's results, the runs finished since the last look taken in (whichever page the session is on)."""
    store = st.session_state.setdefault(RESULTS_KEY, Results())
    for k, job in jobs().collect().items():
        store.put(k, job.results())
    return store


def cached_results(selection: Selection, methods: list[str], **settings) -> dict[str, MethodResult] | None:
    """Each method's latest result on the question with these settings, from any run that included it (None unless
    all have one). ``settings``: as ``start_run``'s (``question``: another question, e.g. a what-if edit)."""
    return results().lookup(run_key(selection, methods, **settings))


REPLAY_MISSES = "app.replay_misses"


def replayed(selection: Selection, methods: list[str], **settings) -> dict[str, MethodResult] | None:
    """The results the on-disk reply cache alone can give (cache mode ``replay``: no model call at all), kept in
    the session like a run's: a deep link in a fresh tab shows what was computed before instead of "press Run".
    None when any reply (or a dataset-level preparation) is not cached; a miss is remembered for the session."""
    k = run_key(selection, methods, **settings)
    misses = st.session_state.setdefault(REPLAY_MISSES, set())
    if k in misses:
        return None
    question = settings.pop("question", None) or selection.question
    found = runner(selection, replay=True, **settings).run(question, methods)
    if any(r.error for r in found.values()):
        misses.add(k)
        return None
    results().put(k, found)
    return found


# --- running: on a worker thread owned by the session (``components.session.jobs``), never in the script thread --

JOBS_KEY = "app.jobs"
#: "sweep": a page's own dataset-wide job (the Risk page's); "influence": a question's leave-one-out (What-if's)
JOB_KINDS = ("run", "prepare", "sweep", "influence")


def jobs(kind: str = "run") -> Jobs:
    """The session's background jobs of one kind: "run" (methods on a question, keyed like the results),
    "prepare" (a dataset-level preparation alone), "sweep"."""
    assert kind in JOB_KINDS, kind
    return st.session_state.setdefault(f"{JOBS_KEY}.{kind}", Jobs())


def prepare(job: Job, run: Runner, methods: list[str]) -> dict[str, str]:
    """The methods' dataset-level preparations (``Runner.prepare_all``: runs of every session that need the same
    artefact compute it once), their steps in ``job.waits`` (published process-wide by whoever computes them, so
    a session that joins the computation shows it too); why each that failed did."""
    job.waits = lambda: run.waiting(methods)
    try:
        return run.prepare_all(methods)
    finally:  # a finished or failed step leaves no frozen progress bar behind
        job.waits = None


def _run_work(run: Runner, question: Question, methods: list[str]) -> Callable[[Job], None]:
    """The methods with nothing long to prepare answer at once; each other one prepares (its index, its stage 1)
    and answers on its own thread (``Runner.run_staged``), so a long step holds up only the methods that need it.
    The page shows what the pending methods wait for (``job.waits``), whoever computes it."""
    def work(job: Job) -> None:
        job.waits = lambda: run.waiting(job.pending())
        run.run_staged(question, methods, on_result=job.add)  # a failed step is that method's error
    return work


def covers(big: RunKey, small: RunKey) -> bool:
    """Whether run ``big`` computes every result of ``small``: the same question and settings, a superset of its
    methods, and the same parameters for each of them (Inspect's run of seven methods covers one method's page)."""
    if not small.methods or not set(small.methods) <= set(big.methods):
        return False
    if any(big.params.get(m) != small.params.get(m) for m in small.methods):
        return False
    return dataclasses.replace(big, methods=small.methods, method_params=small.method_params) == small


def _in_flight(k: RunKey) -> Job | None:
    """The run of ``k`` in flight, else one in flight that covers it (started on another page)."""
    if (job := jobs().running(k)) is not None:
        return job
    return next((j for other, j in jobs().in_flight().items() if isinstance(other, RunKey) and covers(other, k)),
                None)


def running(selection: Selection, methods: list[str], **settings) -> Job | None:
    """The run of these methods and settings on the selected question (or ``question=``) while it is in flight:
    its own, or a run of more methods that includes them (a method page joins the run Inspect started)."""
    return _in_flight(run_key(selection, methods, **settings))


#: How long a page waits for a run it just started before it polls instead: a run answered from the reply cache
#: (a question seen before, a warm switch) finishes well within this and is drawn in the same script run, without
#: the poll's half-second round trip and the rerun after it.
SETTLE_S = 1.0


def calls_since(log: CallLog, model: str, question_id: str, methods: list[str], since: float
                ) -> Callable[[], list[LLMCall]]:
    """The calls a run's methods made on its question since ``since`` (``time.time()``), from the session's log:
    ``Job.calls``, which the run's progress counts (the log records each call as it ends, cache hits too)."""
    wanted = set(methods)
    return lambda: [c for c in log.all() if c.started_at >= since and c.question_id == question_id
                    and c.method in wanted and c.model == model]


def start_run(selection: Selection, methods: list[str], settle: float = SETTLE_S, **settings) -> Job:
    """Run the methods in the background (dataset-level preparations first); their results land in
    ``cached_results`` once all are in. The same run already in flight is returned, not started twice. Waits up to
    ``settle`` seconds for a quick run to finish (``job.running`` says whether it did).
    ``settings``: evidence_mode, method_params ({method: {parameter: value}}), question (a question object other
    than the selected one, e.g. a what-if edit of it: keyed by its content, run by the same runner)."""
    k = run_key(selection, methods, **settings)
    question = settings.pop("question", None) or selection.question
    if (job := _in_flight(k)) is None:  # a run that covers this one is joined, not doubled
        run = runner(selection, **settings)  # built here: it reads st.secrets and the cached resources
        since = time.time()
        job = jobs().start(k, _run_work(run, question, list(methods)), methods, question.id)
        if job.calls is None and run.log is not None:
            job.calls = calls_since(run.log, run.llm.model, question.id, list(methods), since)
    job.wait(settle)
    return job


def start_sweep(k: Hashable, selection: Selection, sweep: Callable[[Runner, Callable[[int, int], None]], Any],
                label: str, unit: str = "run") -> Job:
    """A page's own computation over the dataset (the Risk page's sweep) in the background, as ``jobs("sweep")``'s
    job ``k``: ``sweep(the session's runner, on_progress)``, its progress shown as ``label`` counting ``unit``s;
    what it returns is the job's ``value``. The same sweep in flight is returned, not started twice."""
    if (job := jobs("sweep").running(k)) is not None:
        return job
    run = runner(selection)

    def work(job: Job) -> None:
        job.value = sweep(run, job.progress(label, unit))
    return jobs("sweep").start(k, work)


INFLUENCE_KEY = "app.influence"


def start_influence(selection: Selection, question: Question, methods: list[str],
                    base: dict[str, MethodResult]) -> Job:
    """Leave each document of ``question`` (the selected one or an edit of it) out in turn and re-run ``methods``,
    in the background (``jobs("influence")``), progress per document; ``base``: the methods' results on the whole
    question. The ``backend.whatif.influence.Influence`` is then found by ``influence_done``."""
    from backend.whatif.influence import leave_one_out

    k = run_key(selection, methods, question=question)
    if (job := jobs("influence").running(k)) is not None:
        return job
    run = runner(selection)

    def work(job: Job) -> None:
        job.value = leave_one_out(run, question, list(methods), base=base,
                                  on_progress=job.progress("Leaving out each document", "document"))
    return jobs("influence").start(k, work, question_id=question.id)


def influencing(selection: Selection, question: Question, methods: list[str]) -> Job | None:
    return jobs("influence").running(run_key(selection, methods, question=question))


def influence_done(selection: Selection, question: Question, methods: list[str]) -> Job | None:
    """The finished leave-one-out of ``question`` (its ``value``, or its ``error``), kept for the session."""
    store = st.session_state.setdefault(INFLUENCE_KEY, {})
    store.update(jobs("influence").collect())
    return store.get(run_key(selection, methods, question=question))


# --- dataset-level preparation alone (RA-RAG's stage 1 from its page), backed by the runner and the disk -------

def cached_prepared(selection: Selection, method: str, **settings):
    """``method``'s dataset-level artefact from the session's runner or the on-disk cache; never computes.
    ``settings``: evidence_mode, method_params."""
    return runner(selection, **settings).prepared(method)


def preparing(selection: Selection, method: str, **settings) -> Job | None:
    """``method``'s preparation alone (``start_prepare``), while it is in flight."""
    return jobs("prepare").running(run_key(selection, [method], **settings))


def start_prepare(selection: Selection, method: str, **settings) -> Job:
    """Run (or load) ``method``'s dataset-level preparation alone in the background, with its progress; the
    artefact is then found by ``cached_prepared`` (it is kept on disk), a failure by ``prepare_failure``."""
    k = run_key(selection, [method], **settings)
    if (job := jobs("prepare").running(k)) is not None:
        return job
    run = runner(selection, **settings)

    def work(job: Job) -> None:
        job.error = prepare(job, run, [method]).get(method)
    return jobs("prepare").start(k, work)


def prepare_failure(selection: Selection, method: str, **settings) -> str | None:
    """Why the preparation ``start_prepare`` started failed, once: its finished job is taken out of the session."""
    k = run_key(selection, [method], **settings)
    return next((job.error for job in jobs("prepare").collect(k).values()), None)


