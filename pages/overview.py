"""Overview: run the methods on the selected question and compare their answers side by side."""

import streamlit as st

from backend.methods import ALL_METHODS, METHODS
from components import overview_view as view
from components.navigation import ensure_navigation
from components.runs import cached_results, run_methods
from components.state import init_page_state, key, require_selection

PAGE = "overview"
ensure_navigation()
available = [m for m in ALL_METHODS if m in METHODS]
init_page_state(PAGE, {"methods": available, "show_truth": False})
st.title("Overview")
selection = require_selection()

question = selection.question
st.text(question.question)
st.caption(f"{question.id} · {len(question.documents)} documents · model {selection.model.model}")
methods = st.multiselect("methods", available, key=key(PAGE, "methods"),
                         help="Methods not listed are not implemented yet: "
                              + (", ".join(m for m in ALL_METHODS if m not in METHODS) or "none"))
show_truth = st.toggle("Show ground truth", key=key(PAGE, "show_truth"))
results = cached_results(selection, methods)
if st.button("Run", type="primary", key=key(PAGE, "run"), disabled=not methods):
    with st.spinner(f"Running {len(methods)} method(s)…"):
        results = run_methods(selection, methods)
if results is None:
    st.info("Press Run: answers are cached, so re-running a question costs no model calls.")
    st.stop()

st.dataframe(view.results_frame(results, question, show_truth), hide_index=True)
if show_truth:
    st.caption("Gold answers:")
    st.text("; ".join(question.gold_answers) or "—")
cols = st.columns(len(results))
for col, (name, result) in zip(cols, results.items()):
    with col.container(border=True):
        st.markdown(f"**{name}**")
        if result.error:
            st.badge("error", color="red")
            st.text(result.error)
        elif result.abstained:
            st.badge("abstained", color="gray")
        for answer in result.answers:
            st.text(answer)
        if show_truth and view.verdict(result, question) not in ("abstained", "error"):
            st.caption(view.verdict(result, question))
