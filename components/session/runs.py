"""Running methods from the app: one call cache per process, one call log per session, results kept
per (dataset, question, model, methods, settings) so switching back and forth never re-runs anything;
methods' dataset-level artefacts (RA-RAG's stage-1 weights) kept per (dataset, model, settings), in the session
and on disk (``backend.prepared``)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator

import streamlit as st

from backend.llm.client import CallLog, LLMConfig, default_cache
from backend.runner import Runner
from backend.schema import Dataset, MethodResult, strip_truth
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
    it (built once, then every question's search goes straight to the index)."""

    def __init__(self, dataset: Dataset) -> None:
        self.stripped = strip_truth(dataset)
        self._retriever = None
        self._lock = threading.Lock()

    def retriever(self):
        with self._lock:
            if self._retriever is None:
                from backend.retrieval import Retriever

                self._retriever = Retriever(self.stripped)
            return self._retriever


@st.cache_resource(show_spinner=False, max_entries=8)
def _shared(path: str, ident: int, _dataset: Dataset) -> _Shared:
    """Keyed by the loaded dataset object (``resources.dataset`` keeps one per file version), not hashed."""
    return _Shared(_dataset)


def runner(selection: Selection, evidence_mode: str = "given", calibration: int | None = None,
           method_params: dict | None = None, replay: bool = False) -> Runner:
    """``replay``: answer from the reply cache only (a miss is an error) and log nothing: reading the cache is not
    a call this session made (the results carry their calls)."""
    secrets_to_env()
    cfg = llm_config(selection)
    if replay:
        cfg = cfg.model_copy(update={"cache_mode": "replay"})
    shared = _shared(str(selection.dataset.path), id(selection.dataset), selection.dataset)
    return Runner(selection.dataset, llm=cfg, cache=call_cache(), log=None if replay else call_log(),
                  stripped_dataset=shared.stripped, retriever_source=shared.retriever,
                  evidence_mode=evidence_mode, method_params=_params(calibration, method_params))


def _key(selection: Selection, methods: list[str], evidence_mode: str = "given", calibration: int | None = None,
         method_params: dict | None = None) -> tuple:
    return (selection.dataset.path, selection.question.id, selection.model.model, selection.model.api_base,
            tuple(methods), evidence_mode, calibration, json.dumps(method_params or {}, sort_keys=True))


def cached_results(selection: Selection, methods: list[str], **settings) -> dict[str, MethodResult] | None:
    return st.session_state.get(RESULTS_KEY, {}).get(_key(selection, methods, **settings))


def cached_result(selection: Selection, method: str) -> MethodResult | None:
    """The latest cached result of one method for this selection, from any run that included it."""
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


def run_methods(selection: Selection, methods: list[str], **settings) -> dict[str, MethodResult]:
    """Run and keep the results in the session. ``settings``: evidence_mode, calibration (RA-RAG stage-1
    questions), method_params."""
    results = runner(selection, **settings).run(selection.question, methods)
    st.session_state.setdefault(RESULTS_KEY, {})[_key(selection, methods, **settings)] = results
    return results


def run_methods_iter(selection: Selection, methods: list[str], **settings) -> Iterator[MethodResult]:
    """Yield results as methods finish; the full set is kept in the session once all are in."""
    results: dict[str, MethodResult] = {}
    for result in runner(selection, **settings).run_iter(selection.question, methods):
        results[result.method] = result
        yield result
    key = _key(selection, methods, **settings)
    st.session_state.setdefault(RESULTS_KEY, {})[key] = {m: results[m] for m in methods}


# --- dataset-level preparation (RA-RAG's stage 1): per session, backed by the on-disk cache ------------

def _prepared_key(selection: Selection, method: str, evidence_mode: str, calibration: int | None) -> tuple:
    return (selection.dataset.path, selection.model.model, selection.model.api_base, method, evidence_mode,
            calibration)


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


def prepare(selection: Selection, method: str, evidence_mode: str = "given", calibration: int | None = None,
            on_progress: Callable[[int, int], None] | None = None,
            on_index_progress: Callable[[int, int], None] | None = None):
    """Run (or load) ``method``'s preparation, reporting progress; the retrieval index is built first in
    retrieve mode."""
    run = runner(selection, evidence_mode, calibration)
    if evidence_mode == "retrieve" and run.prepared(method) is None:
        run.retriever().build(on_progress=on_index_progress)
    found = run.prepare(method, on_progress=on_progress)
    st.session_state.setdefault(PREPARED_KEY, {})[_prepared_key(selection, method, evidence_mode, calibration)] = found
    return found


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


def prepare_with_progress(selection: Selection, methods: list[str], slot, **settings) -> None:
    """Before a run: each method's dataset-level preparation that is not done yet (RA-RAG's stage 1), with a
    progress bar (calls done / total, ETA) in ``slot``; a failure is left to the run, which reports it as that
    method's error. ``settings``: as for ``run_methods``."""
    from components.session import progress

    run = runner(selection, **settings)
    build_index_ahead(run, methods)
    for name in methods:
        if run.prepare_key(name) is None or run.prepared(name) is not None:
            continue
        try:
            run.prepare(name, on_progress=progress.bar(slot, run.method(name).prepare_label))
        except Exception:  # noqa: BLE001 - the run reports it as this method's error
            pass
        finally:
            slot.empty()
