"""Running methods from the app: one call cache per process, one call log per session, results kept
per (dataset, question, model, methods) so switching back and forth never re-runs anything."""

from __future__ import annotations

import os
from collections.abc import Iterator

import streamlit as st

from backend.llm.client import CallLog, LLMConfig, default_cache
from backend.runner import Runner
from backend.schema import MethodResult
from components.state import Selection

LOG_KEY = "app.call_log"
RESULTS_KEY = "app.results"


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


def _key(selection: Selection, methods: list[str]) -> tuple:
    return (selection.dataset.path, selection.question.id, selection.model.model, selection.model.api_base,
            tuple(methods))


def cached_results(selection: Selection, methods: list[str]) -> dict[str, MethodResult] | None:
    return st.session_state.get(RESULTS_KEY, {}).get(_key(selection, methods))


def cached_result(selection: Selection, method: str) -> MethodResult | None:
    """The latest cached result of one method for this selection, from any run that included it."""
    found = None
    for k, results in st.session_state.get(RESULTS_KEY, {}).items():
        if k[:-1] == _key(selection, [])[:-1] and method in results:
            found = results[method]
    return found


def runner(selection: Selection) -> Runner:
    secrets_to_env()
    return Runner(selection.dataset, llm=llm_config(selection), cache=call_cache(), log=call_log())


def run_methods(selection: Selection, methods: list[str]) -> dict[str, MethodResult]:
    results = runner(selection).run(selection.question, methods)
    st.session_state.setdefault(RESULTS_KEY, {})[_key(selection, methods)] = results
    return results


def run_methods_iter(selection: Selection, methods: list[str]) -> Iterator[MethodResult]:
    """Yield results as methods finish; the full set is kept in the session once all are in."""
    results: dict[str, MethodResult] = {}
    for result in runner(selection).run_iter(selection.question, methods):
        results[result.method] = result
        yield result
    st.session_state.setdefault(RESULTS_KEY, {})[_key(selection, methods)] = {m: results[m] for m in methods}
