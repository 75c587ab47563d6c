"""Decision path: BRIDGE's soft bias, sub-queries, generated vs retrieved knowledge, S1–S4, the decision tree node by
node (with reflection cycles), the phase map and the response (bridge.md §7)."""

import streamlit as st

from backend.llm.offline import MODEL_NOTE
from components import bridge as view
from components.failures import render_failure
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.runs import cached_result, follow, replayed, running, start_run
from components.session.state import init_page_state, key, require_selection

PAGE = "bridge"
ensure_navigation()
init_page_state(PAGE, {"show_truth": False})
st.title("Decision path (BRIDGE)")
selection = require_selection(model_note=False)
question = selection.question
view.render_question(st, question)
options = f"{len(question.options)} options" if question.options else "no options: free-form answer"
st.caption(f"{md(question.id)} · {options}")

if selection.model.model.startswith("offline/"):
    st.caption(MODEL_NOTE)
if st.button("Run", type="primary", key=key(PAGE, "run")):
    start_run(selection, ["bridge"])
if (job := running(selection, ["bridge"])) is not None:  # goes on in the background whatever the user clicks
    follow(job, "Allocating, collecting knowledge and walking the tree")
    st.stop()
result = cached_result(selection, "bridge") or (replayed(selection, ["bridge"]) or {}).get("bridge")
if result is None:
    st.info("Press Run (results are cached: re-running costs no model calls).")
    st.stop()
if result.error or result.trace is None or result.trace.kind != "bridge":
    model = next((c.model for c in result.calls if c.error), None)
    render_failure(st, "BRIDGE failed on this question:", result.error, model=model, missing="no decision trace")
    if result.calls:
        view.render_calls(st, result.calls)
    st.stop()
trace = result.trace
show_truth = st.toggle("Show ground truth", key=key(PAGE, "show_truth"),
                       help="The scenario label and the gold option. Methods never see these.")

view.render_header(st, trace, question, result.calls, show_truth)
view.render_bias(st, trace, PAGE)
view.render_knowledge(st, trace, question)
view.render_cycles(st, trace, PAGE)
view.render_phase(st, trace, PAGE)
view.render_response(st, trace, question, show_truth)
view.render_calls(st, result.calls)
