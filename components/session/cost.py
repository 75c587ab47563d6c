"""Cost before a run in the app: the sidebar's confirmation threshold, and each run's estimate (``backend.cost``),
computed with the session's runner for those settings and kept for the session under a key naming everything it
depends on, so a page's reruns never count the tokens again. The offline models have none (they cost nothing and
take no time worth saying); a local model (llama.cpp on this CPU) has one for its time, at the measured speeds."""

from __future__ import annotations

import hashlib

import streamlit as st

from backend.cost import DEFAULT_THRESHOLD_USD, RunEstimate, estimate_run
from backend.llm.local.weights import is_local
from backend.llm.pricing import is_free
from backend.schema import Question
from components.cost import render_estimate
from components.session.runs import runner
from components.session.state import Selection, key

THRESHOLD_KEY = "app.cost_threshold"
ESTIMATES_KEY = "app.estimates"
UNKNOWN_PRICE_KEY = "app.unknown_price_accepted"  # (model, api_base) the user agreed to send to at an unknown price


def threshold() -> float:
    """The sidebar's "ask before spending more than" (US dollars)."""
    return float(st.session_state.get(THRESHOLD_KEY, DEFAULT_THRESHOLD_USD))


def estimate(selection: Selection, methods: list[str], questions: list[Question] | None = None,
             **settings) -> RunEstimate | None:
    """What running ``methods`` on ``questions`` (default: the selected question, or ``question=``) will send and
    cost, with the session's runner for ``settings`` (evidence_mode, method_params); None for the offline models."""
    model = selection.model.model
    if (is_free(model) and not is_local(model)) or not methods:
        return None
    found: dict = st.session_state.setdefault(ESTIMATES_KEY, {})
    k = _estimate_key(selection, methods, questions, settings)
    if k not in found:
        if len(found) > 64:
            found.clear()
        question = settings.pop("question", None)
        questions = questions if questions is not None else [question or selection.question]
        found[k] = estimate_run(runner(selection, **settings), questions, list(methods))
    return found[k]


def _estimate_key(selection: Selection, methods: list[str], questions: list[Question] | None, settings: dict) -> tuple:
    settings = dict(settings)
    question = settings.pop("question", None)
    questions = questions if questions is not None else [question or selection.question]
    digest = hashlib.sha256("\x00".join(q.model_dump_json() for q in questions).encode()).hexdigest()[:16]
    # a local model's time rests on the speeds measured so far: estimated again once they change
    speed = _speed_version() if is_local(selection.model.model) else None
    return (selection.model, str(selection.dataset.path), tuple(methods), digest, repr(sorted(settings.items())), speed)


def _speed_version() -> float | None:
    """When the local model's speeds were last measured (the throughput file's time; None before any)."""
    from backend.paths import default_cache_dir

    try:
        return (default_cache_dir() / "local" / "throughput.json").stat().st_mtime
    except OSError:
        return None


def known(selection: Selection, methods: list[str], **settings) -> RunEstimate | None:
    """The latest estimate made for this run (``estimate``; at whichever speeds were measured then), or None: never
    counts anything (a run's progress compares its calls with it)."""
    k = _estimate_key(selection, methods, None, settings)[:-1]
    found = [e for other, e in st.session_state.get(ESTIMATES_KEY, {}).items() if other[:-1] == k]
    return found[-1] if found else None


def confirmed(selection: Selection, methods: list[str], page: str, name: str = "run", always: bool = False,
              questions: list[Question] | None = None, **settings) -> bool:
    """Draw the run's estimate and, when it needs one, the confirmation (``components.cost.render_estimate``); True
    when the run may start. The confirmation's key names the estimate, so a changed run asks again."""
    found = estimate(selection, methods, questions, **settings)
    if found is None:
        return True
    if not found.priced and not always:
        return _unknown_price_confirmed(selection, found, key(page, f"confirm.{name}.unknown"))
    label = hashlib.sha256(found.model_dump_json().encode()).hexdigest()[:12]
    return render_estimate(st, found, threshold(), key(page, f"confirm.{name}.{label}"), always=always)


def _unknown_price_confirmed(selection: Selection, found: RunEstimate, widget_key: str) -> bool:
    """At an unknown price (a self-hosted server under an ``openai/`` alias, a model the map does not list) the user
    confirms once per model and endpoint for the session, not per run: a local vLLM would otherwise ask on every
    question. The estimate (calls, tokens) is still drawn above every Run."""
    accepted: set = st.session_state.setdefault(UNKNOWN_PRICE_KEY, set())
    model = (selection.model.model, selection.model.api_base)
    if model in accepted:
        render_estimate(st, found, threshold(), widget_key, always=False, asked=False)
        return True
    if render_estimate(st, found, threshold(), widget_key, always=False):
        accepted.add(model)
        return True
    return False
