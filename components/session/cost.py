"""Cost before a run in the app: the sidebar's confirmation threshold, and each run's estimate (``backend.cost``),
computed with the session's runner for those settings and kept for the session under a key naming everything it
depends on, so a page's reruns never count the tokens again."""

from __future__ import annotations

import hashlib

import streamlit as st

from backend.cost import DEFAULT_THRESHOLD_USD, RunEstimate, estimate_run
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
    if is_free(selection.model.model) or not methods:
        return None
    question = settings.pop("question", None)
    questions = questions if questions is not None else [question or selection.question]
    digest = hashlib.sha256("\x00".join(q.model_dump_json() for q in questions).encode()).hexdigest()[:16]
    k = (selection.model, str(selection.dataset.path), tuple(methods), digest, repr(sorted(settings.items())))
    found: dict = st.session_state.setdefault(ESTIMATES_KEY, {})
    if k not in found:
        if len(found) > 64:
            found.clear()
        found[k] = estimate_run(runner(selection, **settings), questions, list(methods))
    return found[k]


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
