"""The ceiling of one run in the app (``backend.limits``): before a run starts, on a click or on page open, its
estimated model calls (``backend.cost.estimate_run``, any model, the offline one included: its calls cost CPU) and
its question's documents are compared with the deployment's ceiling. Above it the page starts nothing by itself:

* on one's own machine (no deployment settings) it says what the run would do and asks: a checkbox "Yes, run up
  to N model calls on a question of D documents"; ticked, the run may start (on open, or with Run);
* on a team server (``Deployment.ceiling_binding``) it says the run is above this server's ceiling and who can
  raise it; nobody on the page confirms past it.

The estimates are kept for the session under a key naming everything they depend on (as ``components.session.cost``
keeps its own), so a page's reruns count nothing again."""

from __future__ import annotations

import hashlib

import streamlit as st

from backend import deployment
from backend.cost import estimate_run
from backend.limits import Excess, documents_read, run_calls
from backend.schema import Question
from components.safe import md
from components.session.runs import runner
from components.session.state import Selection, key

CALLS_KEY = "app.run_calls"  # (model, dataset, version, methods, question, settings) -> estimated calls


def _question(selection: Selection, settings: dict) -> Question:
    return settings.get("question") or selection.question


def estimated_calls(selection: Selection, methods: list[str], **settings) -> int:
    """The most model calls a run of ``methods`` on the question can make (its preparation left out)."""
    question = _question(selection, settings)
    digest = hashlib.sha256(question.model_dump_json().encode()).hexdigest()[:16]
    plain = {k: v for k, v in settings.items() if k != "question"}
    k = (selection.model, str(selection.dataset.path), id(selection.dataset), tuple(methods), digest,
         repr(sorted(plain.items())))
    found: dict = st.session_state.setdefault(CALLS_KEY, {})
    if k not in found:
        if len(found) > 64:
            found.clear()
        found[k] = run_calls(estimate_run(runner(selection, **plain), [question], list(methods)))
    return found[k]


def excess(selection: Selection, methods: list[str], **settings) -> Excess | None:
    """What a run of ``methods`` on the selected question (or ``question=``) passes of the ceiling, or None."""
    if not methods:
        return None
    question = _question(selection, settings)
    documents = documents_read(question, settings.get("evidence_mode", "given"))
    return deployment.current().ceiling.excess(estimated_calls(selection, methods, **settings), documents)


def allowed(selection: Selection, methods: list[str], page: str, name: str = "run", **settings) -> bool:
    """Whether the run may start as far as the ceiling goes; above it, the ask (or, on a team server, the refusal)
    is drawn here. ``settings``: as ``runs.start_run``'s."""
    return ask(excess(selection, methods, **settings), page, name)


def ask(found: Excess | None, page: str, name: str = "run") -> bool:
    """Draw the ceiling's ask for ``found`` (None: within it, nothing drawn); True when the run may start. The
    checkbox's key names the run's figures, so another run above the ceiling asks again."""
    if found is None:
        return True
    if deployment.current().ceiling_binding:
        st.error(md(f"This run would make {found.what()}, {found.above()} on this server: it does not start. "
                    "Whoever runs the server can raise max_run_calls / max_question_documents in [deployment]."),
                 icon=":material/block:")
        return False
    st.warning(md(f"This run would make {found.what()}, {found.above()}: it does not start by itself."),
               icon=":material/speed:")
    label = f"Yes, run {found.what()}"
    return bool(st.checkbox(md(label), key=key(page, f"ceiling.{name}.{found.calls}.{found.documents}")))
