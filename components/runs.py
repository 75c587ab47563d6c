"""Running methods from the app: one call cache per process, one call log per session, results kept
per (dataset, question, model, methods, settings) so switching back and forth never re-runs anything;
RA-RAG stage-1 weights kept per (dataset, model, evidence mode, calibration size), in the session and on disk."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator

import streamlit as st

from backend.llm.client import CallLog, LLMConfig, default_cache
from backend.runner import Runner
from backend.schema import MethodResult, ReliabilityEstimate
from components.state import Selection

LOG_KEY = "app.call_log"
RESULTS_KEY = "app.results"
RELIABILITY_KEY = "app.reliability"


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


def runner(selection: Selection, evidence_mode: str = "given", calibration: int | None = None,
           method_params: dict | None = None) -> Runner:
    secrets_to_env()
    return Runner(selection.dataset, llm=llm_config(selection), cache=call_cache(), log=call_log(),
                  evidence_mode=evidence_mode, calibration_limit=calibration, method_params=method_params or {})


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


# --- RA-RAG stage 1: per session, backed by the on-disk cache (backend.reliability) ---------------

def _reliability_key(selection: Selection, evidence_mode: str, calibration: int | None) -> tuple:
    return (selection.dataset.path, selection.model.model, selection.model.api_base, evidence_mode, calibration)


def cached_reliability(selection: Selection, evidence_mode: str = "given",
                       calibration: int | None = None) -> ReliabilityEstimate | None:
    """Stage-1 weights from this session or the on-disk cache; never computes."""
    store = st.session_state.setdefault(RELIABILITY_KEY, {})
    key = _reliability_key(selection, evidence_mode, calibration)
    if key not in store:
        est = runner(selection, evidence_mode, calibration).cached_reliability()
        if est is None:
            return None
        store[key] = est
    return store[key]


def reliability(selection: Selection, evidence_mode: str = "given", calibration: int | None = None,
                on_progress: Callable[[int, int], None] | None = None,
                on_index_progress: Callable[[int, int], None] | None = None) -> ReliabilityEstimate | None:
    """Run (or load) stage 1, reporting progress; the retrieval index is built first in retrieve mode."""
    run = runner(selection, evidence_mode, calibration)
    if evidence_mode == "retrieve" and run.cached_reliability() is None:
        run.retriever().build(on_progress=on_index_progress)
    est = run.reliability(on_progress=on_progress)
    st.session_state.setdefault(RELIABILITY_KEY, {})[_reliability_key(selection, evidence_mode, calibration)] = est
    return est
