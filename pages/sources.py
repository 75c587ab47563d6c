"""Sources (RA-RAG): per-source answers, f_align and the κ-RRSS walk for the selected question; the
stage-1 source reliability over the dataset (estimated vs true, convergence)."""

import streamlit as st

from backend.llm.client import LLMError
from backend.report.text import plural
from backend.retrieval import RetrievalError
from components import ra_rag as view
from components.failures import render_failure
from components.safe import md
from components.session import progress, runs
from components.session.navigation import ensure_navigation
from components.session.state import init_page_state, key, require_selection

PAGE = "sources"
ensure_navigation()
init_page_state(PAGE, {"show_truth": False, "evidence": "given", "calibration": 200})
st.title("Sources")
selection = require_selection()

ds, question = selection.dataset, selection.question
st.text(question.question)
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')} · model {md(selection.model.model)}")
show_truth = st.toggle("Show ground truth", key=key(PAGE, "show_truth"),
                       help="Overlay document types, answer types and true source reliability. RA-RAG never sees them.")

multi = ds.multi_source
if not multi:
    st.info("This dataset's documents name no source, so each document is its own source. Sources never recur "
            "across questions, so there is no reliability to estimate: RA-RAG reduces to majority voting with the "
            "misalignment filter (f_align) over the question's documents.")
    evidence, calibration = "given", None
else:
    cols = st.columns(2)
    evidence = cols[0].radio("evidence per source", ["given", "retrieve"], key=key(PAGE, "evidence"), horizontal=True,
                             help="given: the question's own documents of each source; retrieve: the top 3 of the "
                                  "source's documents in the retrieval index (the paper's setting).")
    if st.session_state[key(PAGE, "calibration")] > len(ds.questions):
        st.session_state[key(PAGE, "calibration")] = len(ds.questions)
    calibration = cols[1].number_input("calibration questions (stage 1)", 1, len(ds.questions),
                                       key=key(PAGE, "calibration"),
                                       help="The first N questions, answered by every source without labels "
                                            "(the paper uses 200).")


def _stage1():
    """Run (or load) stage 1 with progress bars; None when documents name no source or stage 1 failed
    (the error is shown)."""
    if not multi:
        return None
    index_bar, bar = st.empty(), st.empty()
    try:
        return runs.prepare(selection, "ra_rag", evidence, calibration,
                            on_progress=progress.bar(bar, "Stage 1: per-source answers"),
                            on_index_progress=progress.bar(index_bar, "Embedding documents", unit="document"))
    except (LLMError, RetrievalError) as err:  # stage 1 runs outside the Runner's per-method error handling
        render_failure(st, "Stage 1 (source reliability) failed:", err)
        return None
    finally:
        index_bar.empty()
        bar.empty()


settings = dict(evidence_mode=evidence, calibration=calibration, method_params={"ra_rag": {"compare_all": True}})
est = runs.cached_prepared(selection, "ra_rag", evidence, calibration) if multi else None
results = runs.cached_results(selection, ["ra_rag"], **settings) or runs.replayed(selection, ["ra_rag"], **settings)
buttons = st.columns(2)
if buttons[0].button("Run RA-RAG", type="primary", key=key(PAGE, "run")):
    est = est or _stage1()
    if est is not None or not multi:  # a failed stage 1 was reported: running on would only repeat it
        with st.spinner("Running RA-RAG on this question…"):
            results = runs.run_methods(selection, ["ra_rag"], **settings)
if multi and est is None and buttons[1].button("Estimate source reliability (stage 1)", key=key(PAGE, "stage1")):
    est = _stage1()

if results is None:
    st.info("Press Run RA-RAG: the first run on a dataset estimates source reliability (stage 1) with a progress "
            "bar; results are cached, so re-running costs no model calls.")
else:
    view.render_question(st, results["ra_rag"], ds, question, show_truth, PAGE)
if est is not None:
    view.render_dataset(st, est, ds, show_truth, PAGE)
elif multi:
    st.caption("Stage 1 has not run yet for this dataset, model, evidence mode and calibration size.")
