"""Evaluate: methods over a whole dataset. Run them now on the sidebar's dataset (a batch evaluation on a worker
thread, with progress), or open the results.jsonl of an earlier run (e.g. the CLI's `evaluate`); then the summary
per method, charts, the questions with each method's verdict, and exports."""

import streamlit as st

from backend.data import bundled_datasets
from backend.methods import ALL_METHODS, METHODS
from components import evaluate as view
from components.failures import render_failure
from components.safe import md
from components.session import evaluations, resources
from components.session.navigation import ensure_navigation
from components.session.state import init_page_state, key, require_selection

PAGE = "evaluate"
SOURCES = {"run": "Run now", "open": "Open results"}
AVAILABLE = [m for m in ALL_METHODS if m in METHODS]
ensure_navigation()
init_page_state(PAGE, {"source": "run", "methods": AVAILABLE, "limit": 20, "path": "", "filter": "all"})
st.title("Evaluate")
selection = require_selection()
ds = selection.dataset
shown = st.session_state.setdefault(key(PAGE, "shown"), {})  # source -> the Evaluation it shows, for the session

source = st.radio("results", list(SOURCES), format_func=SOURCES.get, horizontal=True, key=key(PAGE, "source"),
                  label_visibility="collapsed")


@st.fragment(run_every=0.5)
def _poll(job: evaluations.EvaluationJob) -> None:
    """Redrawn every half second while the job runs; the whole page reruns once it is done."""
    if not job.running:
        st.rerun()
    st.progress(job.done / max(job.total, 1),
                text=view.progress_label(job.phase, job.done, job.total, job.elapsed, job.unit, len(job.methods)))
    st.caption(f"Writing to {md(str(job.out_dir))}. The run goes on while you look at other pages.")


def _run_now() -> None:
    st.caption(f"Dataset {md(ds.name)} (pick another in the sidebar) · model {md(selection.model.model)}")
    n = len(ds.questions)
    if st.session_state[key(PAGE, "limit")] > n:
        st.session_state[key(PAGE, "limit")] = n
    cols = st.columns([7, 2, 1], vertical_alignment="bottom")
    methods = cols[0].multiselect("methods", AVAILABLE, key=key(PAGE, "methods"))
    limit = cols[1].number_input(f"questions (the first N of {n})", 1, n, step=1, key=key(PAGE, "limit"))
    job = evaluations.current()
    busy = job is not None and job.running
    if cols[2].button("Run", type="primary", key=key(PAGE, "run"), disabled=busy or not methods):
        job = evaluations.start(selection, methods, int(limit))
    if job is None:
        return
    if job.running:
        _poll(job)
        st.stop()  # the previous results would be stale beside a run in progress
    if job.error:
        render_failure(st, "The evaluation failed:", job.error)
    elif job.evaluation is not None:
        shown["run"] = job.evaluation


def _find_dataset(name: str):
    """The dataset the rows name: the sidebar's when it is that one, else a bundled one; None when not loaded."""
    if name == ds.name:
        return ds
    bundled = bundled_datasets()
    return resources.dataset(bundled[name], name=name) if name in bundled else None


def _open_results() -> None:
    cols = st.columns([6, 1], vertical_alignment="bottom")
    path = cols[0].text_input("results.jsonl, or the folder holding it", key=key(PAGE, "path"),
                              placeholder="/path/to/out/results.jsonl",
                              help="Written by `python -m backend evaluate --out DIR` or by Run now (under the "
                                   "cache folder's evaluations/). The file is only read, never changed.")
    if cols[1].button("Open", type="primary", key=key(PAGE, "open")):
        try:
            shown["open"] = view.open_results(path, _find_dataset)
            st.session_state[key(PAGE, "open_error")] = None
        except view.ResultsError as err:
            shown.pop("open", None)
            st.session_state[key(PAGE, "open_error")] = str(err)
    if error := st.session_state.get(key(PAGE, "open_error")):
        st.error(md(error), icon=":material/error:")


if source == "run":
    _run_now()
else:
    _open_results()
ev = shown.get(source)
if ev is None:
    st.info("Choose methods and the number of questions, then press Run: every method answers every question "
            "(results are cached, so running again costs no model calls)." if source == "run" else
            "Enter the path of a results.jsonl (or its folder) and press Open.")
    st.stop()

view.render_notes(st, ev)
st.header("Summary")
view.render_summary(st, ev, PAGE)
st.header("Questions")
link = view.dataset_param(ev.dataset, bundled_datasets()) if ev.dataset is not None else None
frame = view.render_questions(st, ev, PAGE, link)
if frame is None:
    st.info("Pick the dataset these results belong to in the sidebar to see each question's verdicts.")
st.subheader("Export")
view.render_exports(st, ev, frame, PAGE)
