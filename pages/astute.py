"""Consolidation: Astute RAG's internal passages, the numbered passages D0, the consolidation groups of every round,
the candidates' confidence and the final pick (astute-rag.md §6)."""

import streamlit as st

from backend.llm.offline import MODEL_NOTE
from backend.report.text import plural
from components import astute as view
from components.failures import render_failure
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.runs import cached_result, follow, replayed, running, start_run
from components.session.state import init_page_state, key, require_selection

PAGE = "astute"
ensure_navigation()
init_page_state(PAGE, {"show_truth": False})
st.title("Consolidation (Astute RAG)")
selection = require_selection(model_note=False)
question = selection.question
st.text(question.question)
internal = "a simulated memory" if question.internal_knowledge else "no simulated memory"
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'external passage')} · {internal}")

if selection.model.model.startswith("offline/"):
    st.caption(MODEL_NOTE)
if st.button("Run", type="primary", key=key(PAGE, "run")):
    start_run(selection, ["astute"])
if (job := running(selection, ["astute"])) is not None:  # goes on in the background whatever the user clicks
    follow(job, "Generating internal passages and consolidating")
    st.stop()
result = cached_result(selection, "astute") or (replayed(selection, ["astute"]) or {}).get("astute")
if result is None:
    st.info("Press Run (results are cached: re-running costs no model calls).")
    st.stop()
if result.error or result.trace is None or result.trace.kind != "astute":
    model = next((c.model for c in result.calls if c.error), None)
    render_failure(st, "Astute RAG failed on this question:", result.error, model=model,
                   missing="no consolidation trace")
    if result.calls:
        view.render_calls(st, result.calls)
    st.stop()
trace = result.trace
show_truth = st.toggle("Show ground truth", key=key(PAGE, "show_truth"),
                       help="Colour answers by gold / wrong and show document labels. Methods never see these.")

view.render_header(st, trace, question, result.calls, show_truth)
view.render_internal(st, trace)
view.render_passages(st, trace, question, show_truth)
view.render_rounds(st, trace)
view.render_candidates(st, trace, question, show_truth, PAGE)
view.render_final(st, trace, question, show_truth, result.support)
view.render_calls(st, result.calls, trace.iterations)
