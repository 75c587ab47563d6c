"""Progress bars for long work started from a page: ``bar`` for work in the script run (an index build), ``follow``
for any background job (``components.session.jobs.Job``): a run, a preparation, a sweep, an evaluation, an attack."""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from backend.report.text import duration, plural, progress_text
from components.safe import md
from components.session.jobs import Job

#: Under a run's progress unless the page says otherwise.
GOES_ON = "The run goes on while you look at other questions or pages; its results will be here."


def bar(slot, label: str, unit: str = "call") -> Callable[[int, int], None]:
    """An ``on_progress(done, total)`` callback drawing into ``slot`` (an ``st.empty()``): done / total and an ETA,
    redrawn at most once per percent (a stage 1 of 1,600 calls would otherwise send 1,600 updates)."""
    start, last = time.perf_counter(), {"pct": -1}

    def update(done: int, total: int) -> None:
        pct = int(100 * done / max(total, 1))
        if pct != last["pct"] or done == total:
            last["pct"] = pct
            slot.progress(pct / 100, text=progress_text(label, done, total, time.perf_counter() - start, unit))
    return update


@st.fragment(run_every=0.5)
def follow(job: Job, label: str = "Running", render: Callable[[dict], None] | None = None,
           note: str | None = GOES_ON) -> None:
    """Redrawn every half second while ``job`` runs: its stage in progress (done / total, time left), which of its
    methods are done and which still run, and ``render(the results so far)``; the whole page reruns once it is
    done. ``note``: a caption under it (None: none)."""
    if not job.running:
        st.rerun()
    if (stage := job.stage) is not None:
        st.progress(stage.fraction, text=md(stage.text()))
    if job.methods:
        done, pending = job.results(), job.pending()
        st.progress(len(done) / len(job.methods),
                    text=md(f"{label}: {len(done)}/{plural(len(job.methods), 'method')} done · still running: "
                            f"{', '.join(pending)} · {duration(job.elapsed)}"))
        if render is not None:
            render(done)
    elif stage is None:
        st.progress(0.0, text=md(f"{label} · {duration(job.elapsed)}"))
    if note:
        st.caption(note)
