"""Running methods from the app: one call cache per process, one call log per session, results kept
per (dataset, question, model, methods, settings) so switching back and forth never re-runs anything;
methods' dataset-level artefacts (RA-RAG's stage-1 weights) kept per (dataset, model, settings), in the session
and on disk (``backend.prepared``). Runs happen on worker threads owned by the session (``jobs``): a page starts
one, polls it with ``follow`` while it is in flight, and finds its results with ``cached_results`` once it is done,
whatever the user clicked in between."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable

import streamlit as st

from backend.llm.client import CallLog, LLMConfig, default_cache
from backend.report.text import duration, plural, progress_text
from backend.runner import Runner
from backend.schema import Dataset, MethodResult, Question, strip_truth
from components.safe import md
from components.session.jobs import Job, Jobs
from components.session.state import Selection

LOG_KEY = "app.call_log"
RESULTS_KEY = "app.results"
PREPARED_KEY = "app.prepared"


@st.cache_resource(show_spinner=False)
def call_cache():
    return default_cache()


def call_log() -> CallLog:
    if LOG_KEY not in st.session_state:
        st.session_state[LOG_KEY] = CallLog()
    return st.session_state[LOG_KEY]


def secrets_to_env() -> None:
    """Expose ``*_API_KEY`` entries of .streamlit/secrets.toml to litellm via the process environment
    (never written anywhere; the environment wins when both are set)."""
    try:
        items = dict(st.secrets)
    except Exception:  # noqa: BLE001 - no secrets file is the normal case
        return
    for name, value in items.items():
        if name.upper().endswith("_API_KEY") and isinstance(value, str):
            os.environ.setdefault(name.upper(), value)


def llm_config(selection: Selection) -> LLMConfig:
    return LLMConfig(model=selection.model.model, api_base=selection.model.api_base)


def _params(calibration: int | None, method_params: dict | None) -> dict:
    """The methods' parameters; ``calibration``: RA-RAG's stage-1 calibration questions (the Sources page's input)."""
    params = {name: dict(p) for name, p in (method_params or {}).items()}
    if calibration:
        params.setdefault("ra_rag", {})["calibration_size"] = calibration
    return params


class _Shared:
    """What every runner of one dataset can share in this process: its truth-stripped copy and one retriever over
    it (built once, then every question's search goes straight to the index; on ``chroma_url`` when set)."""

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


def runner(selection: Selection, evidence_mode: str = "given", calibration: int | None = None,
           method_params: dict | None = None, replay: bool = False) -> Runner:
    """``replay``: answer from the reply cache only (a miss is an error) and log nothing: reading the cache is not
    a call this session made (the results carry their calls)."""
    secrets_to_env()
    cfg = llm_config(selection)
    if replay:
        cfg = cfg.model_copy(update={"cache_mode": "replay"})
    shared = _shared(str(selection.dataset.path), id(selection.dataset), selection.chroma_url or None,
                     selection.dataset)
    return Runner(selection.dataset, llm=cfg, cache=call_cache(), log=None if replay else call_log(),
                  stripped_dataset=shared.stripped, retriever_source=shared.retriever,
                  evidence_mode=evidence_mode, method_params=_params(calibration, method_params),
                  chroma_url=selection.chroma_url)


def _question_key(selection: Selection, question: Question | None) -> str | tuple[str, str]:
    """The selected question by its id; any other question (a what-if edit, an attack) by its id and a hash of its
    content: two attacks with the same tag (``~attack-k3``) but another placement are two runs."""
    if question is None or question is selection.question:
        return selection.question.id
    return question.id, hashlib.sha256(question.model_dump_json().encode()).hexdigest()[:16]


def _key(selection: Selection, methods: list[str], evidence_mode: str = "given", calibration: int | None = None,
         method_params: dict | None = None, question: Question | None = None) -> tuple:
    return (selection.dataset.path, _question_key(selection, question), selection.model.model,
            selection.model.api_base, tuple(methods), evidence_mode, calibration,
            json.dumps(method_params or {}, sort_keys=True), selection.chroma_url)


def cached_results(selection: Selection, methods: list[str], **settings) -> dict[str, MethodResult] | None:
    """``settings``: as ``start_run``'s (``question``: a question other than the selected one, e.g. a what-if edit)."""
    _collect()
    return st.session_state.get(RESULTS_KEY, {}).get(_key(selection, methods, **settings))


def cached_result(selection: Selection, method: str) -> MethodResult | None:
    """The latest cached result of one method for this selection, from any run that included it."""
    _collect()
    found = None
    for k, results in st.session_state.get(RESULTS_KEY, {}).items():
        if k[:4] == _key(selection, [])[:4] and method in results:
            found = results[method]
    return found


REPLAY_MISSES = "app.replay_misses"


def replayed(selection: Selection, methods: list[str], **settings) -> dict[str, MethodResult] | None:
    """The results the on-disk reply cache alone can give (cache mode ``replay``: no model call at all), kept in
    the session like a run's: a deep link in a fresh tab shows what was computed before instead of "press Run".
    None when any reply (or a dataset-level preparation) is not cached; a miss is remembered for the session."""
    k = _key(selection, methods, **settings)
    misses = st.session_state.setdefault(REPLAY_MISSES, set())
    if k in misses:
        return None
    results = runner(selection, replay=True, **settings).run(selection.question, methods)
    if any(r.error for r in results.values()):
        misses.add(k)
        return None
    st.session_state.setdefault(RESULTS_KEY, {})[k] = results
    return results


# --- running: on a worker thread owned by the session (``components.session.jobs``), never in the script thread --

JOBS_KEY = "app.jobs"
#: "sweep": a page's own dataset-wide job (the Risk page's); "influence": a question's leave-one-out (What-if's)
JOB_KINDS = ("run", "prepare", "sweep", "influence")


def jobs(kind: str = "run") -> Jobs:
    """The session's background jobs of one kind: "run" (methods on a question, keyed like the results),
    "prepare" (a dataset-level preparation alone), "sweep"."""
    assert kind in JOB_KINDS, kind
    return st.session_state.setdefault(f"{JOBS_KEY}.{kind}", Jobs())


def _collect() -> None:
    """Move the finished runs' results to where ``cached_results`` looks (whichever page the session is on)."""
    for k, job in jobs().collect().items():
        st.session_state.setdefault(RESULTS_KEY, {})[k] = job.results()


_PREPARING: dict[tuple, threading.Lock] = {}  # one lock per artefact, for every session of the process
_PREPARING_LOCK = threading.Lock()


def _prepare_first(job: Job, run: Runner, name: str) -> None:
    """``name``'s dataset-level preparation when it is not done yet, with its progress in ``job.stage``; the
    retrieval index is built first in retrieve mode (with its own progress). Runs that need the same artefact at
    once (two questions opened in turn on Inspect, two tabs) compute it once: the others wait, then load it."""
    if (k := run.prepare_key(name)) is None or run.prepared(name) is not None:
        return
    with _PREPARING_LOCK:
        lock = _PREPARING.setdefault((run.stripped.name, name, k), threading.Lock())
    with lock:
        if run.prepared(name) is not None:  # computed by another run while this one waited
            return
        try:
            if run.evidence_mode == "retrieve":
                run.retriever().build(on_progress=job.progress("Embedding documents", "document"))
            run.prepare(name, on_progress=job.progress(run.method(name).prepare_label))
        finally:  # a failed stage leaves no frozen progress bar while the other methods run
            job.stage = None


def _run_work(run: Runner, question: Question, methods: list[str]) -> Callable[[Job], None]:
    def work(job: Job) -> None:
        build_index_ahead(run, methods)
        ready = []
        for name in methods:  # dataset-level work first, each with its own progress; a failure is that method's
            try:
                _prepare_first(job, run, name)
                ready.append(name)
            except Exception as err:  # noqa: BLE001 - as the runner reports it, and the method is not run
                method = run.method(name)
                job.add(MethodResult(method=name, question_id=question.id, params=method.params(),
                                     error=f"{method.prepare_label} failed: {err}"))
        if ready:
            run.run(question, ready, on_result=job.add)
    return work


def running(selection: Selection, methods: list[str], **settings) -> Job | None:
    """The run of exactly these methods and settings on the selected question (or ``question=``), while it is in
    flight."""
    return jobs().running(_key(selection, methods, **settings))


#: How long a page waits for a run it just started before it polls instead: a run answered from the reply cache
#: (a question seen before, a warm switch) finishes well within this and is drawn in the same script run, without
#: the poll's half-second round trip and the rerun after it.
SETTLE_S = 1.0


def start_run(selection: Selection, methods: list[str], settle: float = SETTLE_S, **settings) -> Job:
    """Run the methods in the background (dataset-level preparations first); their results land in
    ``cached_results`` once all are in. The same run already in flight is returned, not started twice. Waits up to
    ``settle`` seconds for a quick run to finish (``job.running`` says whether it did).
    ``settings``: evidence_mode, calibration (RA-RAG stage-1 questions), method_params, question (a question
    object other than the selected one, e.g. a what-if edit of it: keyed by its content, run by the same runner)."""
    k = _key(selection, methods, **settings)
    question = settings.pop("question", None) or selection.question
    if (job := jobs().running(k)) is None:
        run = runner(selection, **settings)  # built here: it reads st.secrets and the cached resources
        job = jobs().start(k, _run_work(run, question, list(methods)), methods, question.id)
    job.wait(settle)
    return job


def start_sweep(k: tuple, selection: Selection, questions: list[Question], strategies: tuple[str, ...]) -> Job:
    """RC-RAG's risk sweep over ``questions`` in the background, as ``jobs("sweep")``'s job ``k``; the sweep is
    its ``value``. The same sweep in flight is returned, not started twice."""
    from backend.risk import risk_sweep

    if (job := jobs("sweep").running(k)) is not None:
        return job
    run = runner(selection)

    def work(job: Job) -> None:
        job.value = risk_sweep(run, questions, strategies,
                               on_progress=job.progress("Risk sweep (questions × configurations)", "run"))
    return jobs("sweep").start(k, work)


INFLUENCE_KEY = "app.influence"


def start_influence(selection: Selection, question: Question, methods: list[str],
                    base: dict[str, MethodResult]) -> Job:
    """Leave each document of ``question`` (the selected one or an edit of it) out in turn and re-run ``methods``,
    in the background (``jobs("influence")``), progress per document; ``base``: the methods' results on the whole
    question. The ``backend.whatif.influence.Influence`` is then found by ``influence_done``."""
    from backend.whatif.influence import leave_one_out

    k = _key(selection, methods, question=question)
    if (job := jobs("influence").running(k)) is not None:
        return job
    run = runner(selection)

    def work(job: Job) -> None:
        job.value = leave_one_out(run, question, list(methods), base=base,
                                  on_progress=job.progress("Leaving out each document", "document"))
    return jobs("influence").start(k, work, question_id=question.id)


def influencing(selection: Selection, question: Question, methods: list[str]) -> Job | None:
    return jobs("influence").running(_key(selection, methods, question=question))


def influence_done(selection: Selection, question: Question, methods: list[str]) -> Job | None:
    """The finished leave-one-out of ``question`` (its ``value``, or its ``error``), kept for the session."""
    store = st.session_state.setdefault(INFLUENCE_KEY, {})
    store.update(jobs("influence").collect())
    return store.get(_key(selection, methods, question=question))


@st.fragment(run_every=0.5)
def follow(job: Job, label: str = "Running", render: Callable[[dict[str, MethodResult]], None] | None = None) -> None:
    """Redrawn every half second while ``job`` runs: the stage in progress (RA-RAG's stage 1), which methods are
    done and which still run, and ``render(the results so far)``; the whole page reruns once it is done."""
    if not job.running:
        st.rerun()
    if (stage := job.stage) is not None:
        st.progress(stage.done / max(stage.total, 1),
                    text=md(progress_text(stage.label, stage.done, stage.total, stage.elapsed, stage.unit)))
    if job.methods:
        done, pending = job.results(), job.pending()
        st.progress(len(done) / len(job.methods),
                    text=md(f"{label}: {len(done)}/{plural(len(job.methods), 'method')} done · still running: "
                            f"{', '.join(pending)} · {duration(job.elapsed)}"))
        if render is not None:
            render(done)
    elif stage is None:
        st.progress(0.0, text=md(f"{label} · {duration(job.elapsed)}"))
    st.caption("The run goes on while you look at other questions or pages; its results will be here.")


# --- dataset-level preparation (RA-RAG's stage 1): per session, backed by the on-disk cache ------------

def _prepared_key(selection: Selection, method: str, evidence_mode: str, calibration: int | None) -> tuple:
    return (selection.dataset.path, selection.model.model, selection.model.api_base, method, evidence_mode,
            calibration, selection.chroma_url)


def cached_prepared(selection: Selection, method: str, evidence_mode: str = "given",
                    calibration: int | None = None):
    """``method``'s dataset-level artefact from this session or the on-disk cache; never computes."""
    store = st.session_state.setdefault(PREPARED_KEY, {})
    key = _prepared_key(selection, method, evidence_mode, calibration)
    if key not in store:
        found = runner(selection, evidence_mode, calibration).prepared(method)
        if found is None:
            return None
        store[key] = found
    return store[key]


def preparing(selection: Selection, method: str, evidence_mode: str = "given",
              calibration: int | None = None) -> Job | None:
    """``method``'s preparation alone (``start_prepare``), while it is in flight."""
    return jobs("prepare").running(_prepared_key(selection, method, evidence_mode, calibration))


def start_prepare(selection: Selection, method: str, evidence_mode: str = "given",
                  calibration: int | None = None) -> Job:
    """Run (or load) ``method``'s dataset-level preparation alone in the background, with its progress; the
    artefact is then found by ``cached_prepared`` (it is kept on disk), a failure by ``prepare_failure``."""
    k = _prepared_key(selection, method, evidence_mode, calibration)
    if (job := jobs("prepare").running(k)) is not None:
        return job
    run = runner(selection, evidence_mode, calibration)
    return jobs("prepare").start(k, lambda job: _prepare_first(job, run, method))


def prepare_failure(selection: Selection, method: str, evidence_mode: str = "given",
                    calibration: int | None = None) -> str | None:
    """Why the preparation ``start_prepare`` started failed, once: its finished job is taken out of the session."""
    k = _prepared_key(selection, method, evidence_mode, calibration)
    return next((job.error for job in jobs("prepare").collect(k).values()), None)


def build_index_ahead(run: Runner, methods: list[str]) -> None:
    """Start syncing the retrieval index in a background thread when a method will search it, so a cold index is
    built while RA-RAG's stage 1 runs instead of after it (the model releases the GIL; the reader mostly does not).
    The method's own first search then waits for this build (one build per index at a time) or finds it done; a
    failure here is left to that search, which reports it as the method's error."""
    if not any(run.needs_index(m) for m in methods):
        return

    def build() -> None:
        try:
            run.retriever().ensure_built()
        except Exception:  # noqa: BLE001 - reported by the method's own search
            pass

    threading.Thread(target=build, name="index-build", daemon=True).start()

