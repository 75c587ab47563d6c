"""Progress bars for long work started from a page: ``bar`` for work in the script run (an index build), ``follow``
for any background job (``components.session.jobs.Job``): a run, a preparation, a sweep, an evaluation, an attack."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from backend.cost import RunEstimate
from backend.methods import title
from backend.report.text import duration, plural
from components.calls import progress_text as calls_text
from components.safe import md
from components.session.jobs import Job, Stage

#: Under a run's progress unless the page says otherwise.
GOES_ON = "The run goes on while you look at other questions or pages; its results will be here."


def bar(slot, label: str, unit: str = "call") -> Callable[[int, int], None]:
    """An ``on_progress(done, total)`` callback drawing into ``slot`` (an ``st.empty()``): done / total and an ETA,
    redrawn at most once per percent (a stage 1 of 1,600 calls would otherwise send 1,600 updates)."""
    stage, last = Stage(label, unit), {"pct": -1}

    def update(done: int, total: int) -> None:
        stage.report(done, total)
        pct = int(100 * done / max(total, 1))
        if pct != last["pct"] or done == total:
            last["pct"] = pct
            slot.progress(pct / 100, text=stage.text())
    return update


def waiting_text(stage: Stage, methods: list[str]) -> str:
    """``"BRIDGE is waiting for Indexing documents: 1,200/2,200 documents · 40 s elapsed · about 10 s left"``: the
    step a run's methods wait for, by their display names (none: the step alone)."""
    if not methods:
        return stage.text()
    names = [title(m) for m in methods]
    who = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{who} {'is' if len(names) == 1 else 'are'} waiting for {stage.text()}"


def running_text(label: str, job: Job) -> str:
    """``"Running: 6/7 methods done · still running: BRIDGE · 41 s"``."""
    done, pending = job.results(), job.pending()
    return (f"{label}: {len(done)}/{plural(len(job.methods), 'method')} done · still running: "
            f"{', '.join(title(m) for m in pending)} · {duration(job.elapsed)}")


@st.fragment(run_every=0.5)
def follow(job: Job, label: str = "Running", render: Callable[[dict], None] | None = None,
           note: str | None = GOES_ON, expected: RunEstimate | None = None) -> None:
    """Redrawn every half second while ``job`` runs: its stage in progress (done / total, time left), each long
    step its methods wait for (an index build, a stage 1: process-wide, so one started by an earlier session, e.g.
    before a reload, shows from its own start), which of its methods are done and which still run, the model calls
    made so far (``Job.calls``; against ``expected``, the run's estimate, when given), and ``render(the results so
    far)``; the whole page reruns once it is done. ``note``: a caption under it (None: none)."""
    if not job.running:
        st.rerun()
    if (stage := job.stage) is not None:
        st.progress(stage.fraction, text=md(stage.text()))
    found = job.waits  # read once: the worker sets it to None when the job ends
    waits = [(s, who) for s, who in (found() if found is not None else []) if s is not stage]
    for step, who in waits:
        st.progress(step.fraction, text=md(waiting_text(step, who if job.methods else [])))
    if job.methods:
        done = job.results()
        st.progress(len(done) / len(job.methods), text=md(running_text(label, job)))
        if (calls := job.calls) is not None:  # counted per call: a local model's run takes seconds a call
            st.caption(md(calls_text(calls(), expected)))
        if render is not None:
            render(done)
    elif stage is None and not waits:
        st.progress(0.0, text=md(f"{label} · {duration(job.elapsed)}"))
    if note:
        st.caption(note)
