"""The run block every page that answers the selected question draws: a Run button; then the run in flight (its
progress), else this session's results, else what the reply cache alone answers, else (the offline model, which
costs nothing) a run started without a click, else a hint to press Run."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from backend.schema import MethodResult
from components.models import model_note as model_note_for
from components.session import limits
from components.session.cost import confirmed, known
from components.session.progress import follow
from components.session.runs import cached_results, replayed, running, start_run
from components.session.state import Selection, key

PRESS_RUN = "Press Run (results are cached: re-running costs no model calls)."


def _only(render: Callable[[dict[str, MethodResult]], None], methods: list[str]
          ) -> Callable[[dict[str, MethodResult]], None]:
    return lambda done: render({m: r for m, r in done.items() if m in methods})


def run_block(selection: Selection, methods: list[str], label: str, page: str, *, button=st, auto: bool = False,
              hint: str | None = PRESS_RUN, render: Callable[[dict[str, MethodResult]], None] | None = None,
              progress: bool = True, model_note: bool = False, **settings) -> dict[str, MethodResult] | None:
    """``methods``' results on the selected question (``settings``: as ``runs.start_run``'s), or None while there
    are none to show.

    ``button``: where the Run button goes (a column; None: no button; its key is ``<page>.run``). While the run is
    in flight (started here, or before the user looked elsewhere), its progress under ``label`` (``render`` draws
    the results so far; ``progress=False``: nothing drawn) and None. Else this session's results, else what the reply
    cache alone answers (a shared link in a fresh tab shows what was computed before), unless ``auto``: then a run
    starts without a click (for the offline model, which costs nothing) and a quick one is drawn at once. None and
    ``hint`` when there is still nothing. ``model_note``: the model's note above the button (the offline model a
    heuristic reader, the local model a real one: ``components.models.model_note``). With a hosted model the run's
    estimate (calls, tokens, price) is drawn before the button, which waits for a confirmation when the estimate is
    above the sidebar's threshold or the price is unknown (``components.session.cost``); with a local model the
    estimate gives the time at the speeds measured on this machine, and asks nothing."""
    if model_note and (note := model_note_for(selection.model.model)) is not None:
        st.caption(note)
    # a hosted model: the estimate before anything is sent, and the confirmation above the sidebar's threshold
    agreed = button is None or confirmed(selection, methods, page, **settings)
    # any model: a run above the ceiling of calls and documents starts neither on open nor on Run without a yes
    within = limits.allowed(selection, methods, page, **settings)
    clicked = button is not None and button.button("Run", type="primary", key=key(page, "run"),
                                                   disabled=not methods or not agreed or not within)
    if not methods:
        if hint:
            st.info(hint)
        return None
    job = start_run(selection, methods, **settings) if clicked else None  # a run in flight is joined, not doubled
    job = job if job is not None and job.running else running(selection, methods, **settings)
    found = None if job else cached_results(selection, methods, **settings)
    if found is None and job is None:
        if not auto or not within:  # above the ceiling: what the cache alone answers, and the ask above
            found = replayed(selection, methods, **settings)
        elif (job := start_run(selection, methods, **settings)).running is False:  # answered within the settle
            job, found = None, cached_results(selection, methods, **settings)
    if job is not None:
        if progress:
            if render is not None and set(job.methods) - set(methods):  # joined a larger run: only ours drawn
                render = _only(render, methods)
            # the estimate made above the button, when it is this very run's (a joined larger run counts more calls)
            expected = known(selection, methods, **settings) if set(job.methods) == set(methods) else None
            follow(job, label, render, expected=expected)
        return None
    if found is None and hint:
        st.info(hint)
    return found
