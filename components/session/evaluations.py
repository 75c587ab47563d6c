"""Batch evaluations started from the Evaluate page: each runs ``backend.evaluate.evaluate`` on a worker thread owned
by the session (so page reruns, clicks and visits to other pages never interrupt it), writing into a folder under
the cache dir; the page follows the job (``components.session.progress.follow``). ``start_batch`` launches any
dataset-wide job (this one, an attack) the same way: the methods' dataset-level preparations first, with their
progress, then the batch."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import streamlit as st

from backend.evaluate import evaluate
from backend.outputs import Evaluation
from backend.paths import default_cache_dir
from backend.schema import Dataset, Question
from components.session.jobs import Job, launch
from components.session.runs import prepare, runner
from components.session.state import Selection

JOB_KEY = "evaluate.job"


def start_batch(selection: Selection, about, work: Callable[[Job, object], None], key: str, name: str) -> Job:
    """A dataset-wide job on a session-owned thread, kept in the session under ``key``: the dataset-level
    preparations of ``about.methods`` first (a failure is left to the batch, which reports it row by row), then
    ``work(job, runner)``; its ``value`` is what the work computed, its ``error`` why it failed."""
    run = runner(selection)  # here: it reads st.secrets and the cached resources on the script thread

    def batch(job: Job) -> None:
        prepare(job, run, about.methods)
        work(job, run)
    job = st.session_state[key] = Job(about=about)
    return launch(job, batch, name)


@dataclass(frozen=True)
class Batch:
    """What an evaluation works on (its job's ``about``)."""
    dataset: Dataset
    questions: list[Question]
    methods: list[str]
    out_dir: Path
    max_cost: float | None = None   # US dollars: the run stops cleanly there (``evaluate``'s ``max_cost``)
    #: also read every pair the other way (``evaluate``'s ``other_reading``: from the reply cache, no new model call)
    other_reading: bool = False


def out_folder(dataset: str, root: Path | None = None, kind: str = "evaluations") -> Path:
    """A new folder ``<cache>/<kind>/<dataset>-<timestamp>`` (a suffix when two runs start in one second)."""
    root = (root or default_cache_dir()) / kind
    stem = f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', dataset)}-{datetime.now():%Y%m%d-%H%M%S}"
    path, n = root / stem, 1
    while path.exists():
        n += 1
        path = root / f"{stem}-{n}"
    return path


def _work(job: Job, run) -> None:
    b: Batch = job.about  # an exception is the job's error, shown on the page
    summary = evaluate(run, b.questions, b.methods, b.out_dir, max_cost=b.max_cost, other_reading=b.other_reading,
                       on_progress=job.progress("Evaluating", "question", "question × method pairs", len(b.methods)))
    job.value = Evaluation.of_run(summary, b.out_dir, b.dataset)


def start(selection: Selection, methods: list[str], limit: int, max_cost: float | None = None,
          other_reading: bool = False) -> Job:
    """Start an evaluation of the first ``limit`` questions of the selected dataset with the session's runner
    (its call cache and call log, its reading of replies) and keep the job in the session; its ``value`` is then the
    ``Evaluation``. ``max_cost``: stop cleanly once the run's calls cost that many US dollars (a priced model);
    ``other_reading``: also read every pair the other way, from the reply cache (``evaluate``'s)."""
    ds = selection.dataset
    about = Batch(dataset=ds, questions=ds.questions[:limit], methods=list(methods), out_dir=out_folder(ds.name),
                  max_cost=max_cost, other_reading=other_reading)
    return start_batch(selection, about, _work, JOB_KEY, "conflictlens-evaluate")


def current() -> Job | None:
    return st.session_state.get(JOB_KEY)
