"""Sources (RA-RAG): per-source answers, f_align and the κ-RRSS walk for the selected question; the
stage-1 source reliability over the dataset (estimated vs true, convergence)."""

import streamlit as st

from backend.methods.ra_rag.stage1 import TIES
from backend.report.text import plural
from components import ra_rag as view
from components.failures import render_failure
from components.read_status import render_read_status
from components.reading import render_reading
from components.safe import md
from components.session import limits, runs
from components.session.navigation import ensure_navigation
from components.session.present import truth_toggle
from components.session.progress import follow
from components.session.state import init_page_state, key, require_selection

PAGE = "sources"
TIES_LABELS = {"skip": "skip (default)", "source_order": "source_order (released code)"}
#: The ties setting's help (``backend.methods.ra_rag.stage1``'s docstring, "Ties in later iterations").
TIES_HELP = ("When two answers to a calibration question tie exactly under the current weights (sources with equal "
             "estimated reliability), in the iterations after the first. **skip** (default, ours): that question "
             "gets no pseudo-label in that iteration; it counts neither for nor against any source, so the estimate "
             "does not depend on the order in which sources are listed. **source_order**: the released code's "
             "behaviour (ml-postech/RA-RAG): the tie goes to the answer seen first in source order, so the "
             "first-listed source can be credited; with stable initialisation on, the estimate is the released "
             "estimator's. Stage 1 is estimated again for each setting (cached apart).")
ensure_navigation()
init_page_state(PAGE, {"evidence": "given", "calibration": 200, "ties": "skip"})
st.title("Sources")
selection = require_selection()

ds, question = selection.dataset, selection.question
st.text(question.question)
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')} · model {md(selection.model.model)}")
show_truth = truth_toggle(st, help="Overlay document types, answer types and true source reliability. "
                                   "RA-RAG never sees them.")

multi = ds.multi_source
if not multi:
    st.info("This dataset's documents name no source, so each document is its own source. Sources never recur "
            "across questions, so there is no reliability to estimate: RA-RAG reduces to majority voting with the "
            "misalignment filter (f_align) over the question's documents.")
    evidence, calibration, ties = "given", None, "skip"
else:
    cols = st.columns(3)
    evidence = cols[0].radio("evidence per source", ["given", "retrieve"], key=key(PAGE, "evidence"), horizontal=True,
                             help="given: the question's own documents of each source; retrieve: the top 3 of the "
                                  "source's documents in the retrieval index (the paper's setting).")
    if st.session_state[key(PAGE, "calibration")] > len(ds.questions):
        st.session_state[key(PAGE, "calibration")] = len(ds.questions)
    calibration = cols[1].number_input("calibration questions (stage 1)", 1, len(ds.questions),
                                       key=key(PAGE, "calibration"),
                                       help="The first N questions, answered by every source without labels "
                                            "(the paper uses 200).")
    ties = cols[2].radio("stage-1 ties", TIES, key=key(PAGE, "ties"), horizontal=True, format_func=TIES_LABELS.get,
                         help=TIES_HELP)


params = ({"compare_all": True} | ({"calibration_size": calibration} if calibration else {})
          | ({"ties": ties} if ties != "skip" else {}))  # the default left out: the runs keyed as before
settings = dict(evidence_mode=evidence, method_params={"ra_rag": params})  # RA-RAG's own, given to the runner
# runs go on in the background whatever the user clicks (the first one on a dataset does stage 1 first)
job = runs.running(selection, ["ra_rag"], **settings) or (runs.preparing(selection, "ra_rag", **settings) if multi
                                                           else None)
failed = runs.prepare_failure(selection, "ra_rag", **settings) if multi and job is None else None
est = runs.cached_prepared(selection, "ra_rag", **settings) if multi else None
results = None if job else (runs.cached_results(selection, ["ra_rag"], **settings)
                            or runs.replayed(selection, ["ra_rag"], **settings))
buttons = st.columns(2)
within = job is not None or limits.allowed(selection, ["ra_rag"], PAGE, **settings)  # the ceiling of one run
if buttons[0].button("Run RA-RAG", type="primary", key=key(PAGE, "run"), disabled=job is not None or not within):
    job = runs.start_run(selection, ["ra_rag"], **settings)
if multi and est is None and buttons[1].button("Estimate source reliability (stage 1)", key=key(PAGE, "stage1"),
                                               disabled=job is not None):
    job = runs.start_prepare(selection, "ra_rag", **settings)
if job is not None:
    follow(job, "Running RA-RAG on this question")
    st.stop()
if failed:
    render_failure(st, "Stage 1 (source reliability) failed:", failed)
if multi and est is None and results is not None and results["ra_rag"].error:  # the run stopped at stage 1
    render_failure(st, "Stage 1 (source reliability) failed:", results["ra_rag"].error)
    results = None
if results is None:
    st.info("Press Run RA-RAG: the first run on a dataset estimates source reliability (stage 1) with a progress "
            "bar; results are cached, so re-running costs no model calls.")
else:
    render_read_status(st, results["ra_rag"].calls)  # replies RA-RAG could not read: it took its default
    render_reading(st, results["ra_rag"])  # decisions the other reading would have read otherwise
    view.render_question(st, results["ra_rag"], ds, question, show_truth, PAGE)
if est is not None:
    view.render_dataset(st, est, ds, show_truth, PAGE)
elif multi:
    st.caption("Stage 1 has not run yet for this dataset, model, reading of replies, evidence mode, calibration size "
               "and tie rule.")
