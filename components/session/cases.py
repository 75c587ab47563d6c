"""Where the Cases page and the question picker's marks get their results (issue 27): the latest evaluation of the
sidebar's dataset (this session's Evaluate page, else the newest run under the cache folder), the results computed
in this session (Inspect, the method pages, "Find cases"), and the newest attack of the dataset. Nothing here starts
a run but ``start_find`` (the Cases page's button)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import streamlit as st

from backend import outputs
from backend.cases import by_question
from backend.methods import METHODS
from backend.paths import default_cache_dir
from backend.schema import Dataset, MethodResult
from components.session import present, runs
from components.session.evaluations import start_batch
from components.session.jobs import Job
from components.session.state import ModelChoice, Selection, key

PAGE = "cases"
JOB_KEY = "cases.job"
FOUND_KEY = "cases.found"       # dataset version -> Found (the on-the-fly results)
OPENED_KEY = "cases.opened"     # (path, mtime, dataset version) -> per-question results of an evaluation
#: "Find cases" runs on the fly only this many questions at most (every method on each, offline model).
MAX_ON_THE_FLY = 100
#: The on-the-fly model: free, no network, deterministic.
OFFLINE = ModelChoice()
@dataclass(frozen=True)
class Source:
    """A set of results per question and what it is (one line for the page)."""
    results: dict[str, dict[str, MethodResult]]
    label: str
    model: str | None = None


def _evaluation_results(ev: outputs.Evaluation) -> dict[str, dict[str, MethodResult]]:
    return by_question(ev.results, ev.methods)


def latest_evaluation(ds: Dataset) -> Source | None:
    """This session's evaluation of ``ds`` shown on the Evaluate page (run, else opened), else the newest run of it
    under the cache folder (read once per file version); None when there is none."""
    shown = st.session_state.get("evaluate.shown") or {}
    for how in ("run", "open"):
        ev = shown.get(how)
        if ev is not None and ev.dataset is not None and ev.dataset.name == ds.name and ev.questions:
            where = ev.path.parent.name if ev.path is not None else "this session"
            return Source(_evaluation_results(ev), f"the evaluation {where}", ev.summary.model)
    try:
        found = outputs.find_runs(default_cache_dir(), ds.name)
    except OSError:
        return None
    if not found:
        return None
    run = found[0]
    opened = st.session_state.setdefault(OPENED_KEY, {})
    k = (str(run.path), run.modified, runs.dataset_version(ds))
    if k not in opened:
        try:
            ev = outputs.open_evaluation(run.path, lambda name: ds if name == ds.name else None)
        except outputs.ResultsError:
            return None
        opened.clear()  # one at a time: the newest
        opened[k] = _evaluation_results(ev)
    return Source(opened[k], f"the evaluation {run.path.parent.name}", run.model)


def latest_attack_rows(ds: Dataset) -> list:
    """The rows of the newest attack of ``ds`` under the cache folder; none when there is none (or it cannot be
    read)."""
    from components.session.attacks import attacks_root

    for folder, _ in outputs.find_attacks(attacks_root(), ds.name)[:1]:
        try:
            return outputs.open_attack(folder).rows
        except outputs.AttackError:
            return []
    return []


def offline_selection(selection: Selection) -> Selection:
    """The selection with the offline model (default settings), its replies read as the sidebar says."""
    return dataclasses.replace(selection, model=dataclasses.replace(OFFLINE, reading=selection.model.reading))


def session_results(selection: Selection) -> dict[str, dict[str, MethodResult]]:
    """The results computed in this session on the sidebar's dataset with the sidebar's model (default settings),
    and the on-the-fly ones (offline model)."""
    out: dict[str, dict[str, MethodResult]] = {}
    for sel in (offline_selection(selection), selection):  # the sidebar's model last: it wins
        for qid, rs in runs.results().by_question(runs.run_key(sel)).items():
            out.setdefault(qid, {}).update(rs)
    return out


def known_results(selection: Selection) -> dict[str, dict[str, MethodResult]]:
    """What the picker marks: the latest evaluation's results, with this session's on top. Never runs anything."""
    ev = latest_evaluation(selection.dataset)
    out = {q: dict(rs) for q, rs in (ev.results if ev is not None else {}).items()}
    for qid, rs in session_results(selection).items():
        out.setdefault(qid, {}).update(rs)
    return out


# --- "Find cases": every method on each question with the offline model, in the background -------------------

@dataclass(frozen=True)
class _About:
    dataset: Dataset
    methods: list[str]


def start_find(selection: Selection) -> Job:
    """Run every method on each question of the sidebar's dataset (at most ``MAX_ON_THE_FLY``) with the offline
    model, on a session-owned thread with progress; each question's results go into the session's results (so
    Inspect opens them at once); the job's ``value`` is the per-question results."""
    sel = offline_selection(selection)
    ds, methods = sel.dataset, list(METHODS)
    store, base = runs.results(), runs.run_key(sel, methods)  # on the script thread: they read the session

    def work(job: Job, run) -> None:
        questions = ds.questions[:MAX_ON_THE_FLY]
        progress = job.progress("Finding cases", "question")
        out: dict[str, dict[str, MethodResult]] = {}
        for i, q in enumerate(questions):
            progress(i, len(questions))
            out[q.id] = run.run(q, methods)
            store.put(dataclasses.replace(base, question=q.id), out[q.id])
        progress(len(questions), len(questions))
        job.value = out
    return start_batch(sel, _About(ds, methods), work, JOB_KEY, "conflictlens-cases")


def current_job() -> Job | None:
    return st.session_state.get(JOB_KEY)


def found(ds: Dataset) -> Source | None:
    """The on-the-fly results of ``ds`` from this session's "Find cases" (kept once the job is done)."""
    store = st.session_state.setdefault(FOUND_KEY, {})
    job = current_job()
    version = runs.dataset_version(ds)
    if job is not None and not job.running and job.value is not None and job.about.dataset is ds:
        store[version] = job.value
    if (results := store.get(version)) is None:
        return None
    return Source(results, f"every method run on the fly with {OFFLINE.model}", OFFLINE.model)
