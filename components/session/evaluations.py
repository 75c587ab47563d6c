"""Batch evaluations started from the Evaluate page: each runs ``backend.evaluate.evaluate`` on a worker thread owned
by the session (so page reruns, clicks and visits to other pages never interrupt it), writing into a folder under
the cache dir; the page polls the job's progress."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import streamlit as st

from backend.evaluate import RESULTS, evaluate, load_results
from backend.paths import default_cache_dir
from backend.schema import Dataset, Question
from components.evaluate import Evaluation
from components.session.runs import runner
from components.session.jobs import Timed
from components.session.state import Selection

JOB_KEY = "evaluate.job"


@dataclass
class BatchJob(Timed):
    """A dataset-wide job on a session-owned thread (an evaluation, an attack): its phase and progress, polled by the
    page, and its error. Fields are keyword-only so each kind adds its own before them."""

    phase: str = field(default="Starting", kw_only=True)
    unit: str = field(default="question", kw_only=True)
    done: int = field(default=0, kw_only=True)
    total: int = field(default=0, kw_only=True)
    error: str | None = field(default=None, kw_only=True)
    thread: threading.Thread | None = field(default=None, kw_only=True)

    def progress(self, phase: str, unit: str):
        def update(done: int, total: int) -> None:
            self.phase, self.unit, self.done, self.total = phase, unit, done, total
        return update

    def launch(self, selection: Selection, work, key: str, name: str):
        """Run ``work(self, runner)`` on a session-owned thread, this job kept in the session under ``key``."""
        run = runner(selection)  # built here: it reads st.secrets and the cached resources on the script thread
        self.thread = threading.Thread(target=work, args=(self, run), name=name, daemon=True)
        st.session_state[key] = self
        self.thread.start()
        return self

    def prepare_first(self, run, methods: list[str]) -> None:
        """Dataset-level preparation (RA-RAG's stage 1) before the batch, with its own progress; a failure is left to
        the batch, which reports it as that method's error in every row."""
        for name in methods:
            if run.prepare_key(name) is not None and run.prepared(name) is None:
                try:
                    run.prepare(name, on_progress=self.progress(run.method(name).prepare_label, "call"))
                except Exception:  # noqa: BLE001 - reported by the batch, row by row
                    pass


@dataclass
class EvaluationJob(BatchJob):
    dataset: Dataset
    questions: list[Question]
    methods: list[str]
    out_dir: Path
    evaluation: Evaluation | None = None


def out_folder(dataset: str, root: Path | None = None, kind: str = "evaluations") -> Path:
    """A new folder ``<cache>/<kind>/<dataset>-<timestamp>`` (a suffix when two runs start in one second)."""
    root = (root or default_cache_dir()) / kind
    stem = f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', dataset)}-{datetime.now():%Y%m%d-%H%M%S}"
    path, n = root / stem, 1
    while path.exists():
        n += 1
        path = root / f"{stem}-{n}"
    return path


def _work(job: EvaluationJob, run) -> None:
    try:
        job.prepare_first(run, job.methods)
        summary = evaluate(run, job.questions, job.methods, job.out_dir,
                           on_progress=job.progress("Evaluating", "question"))
        results, _ = load_results(job.out_dir / RESULTS)
        job.evaluation = Evaluation(summary, results, job.dataset, job.out_dir / RESULTS, list(summary["notes"]))
    except Exception as err:  # noqa: BLE001 - shown on the page
        job.error = f"{type(err).__name__}: {err}"
    finally:
        job.finished = time.perf_counter()


def start(selection: Selection, methods: list[str], limit: int) -> EvaluationJob:
    """Start an evaluation of the first ``limit`` questions of the selected dataset with the session's runner
    (its call cache and call log) and keep the job in the session."""
    ds = selection.dataset
    job = EvaluationJob(dataset=ds, questions=ds.questions[:limit], methods=list(methods), out_dir=out_folder(ds.name))
    return job.launch(selection, _work, JOB_KEY, "conflictlens-evaluate")


def current() -> EvaluationJob | None:
    return st.session_state.get(JOB_KEY)
