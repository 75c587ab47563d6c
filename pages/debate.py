"""Debate: MADAM-RAG's agents × rounds, the aggregator per round, convergence and the final answers."""

import streamlit as st

from backend.report.text import plural
from backend.methods.madam_released import TraceFileError, load_trace_file
from components import madam as view
from components.failures import render_failure
from components.read_status import render_read_status
from components.reading import render_reading
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.present import truth_toggle
from components.session.run_block import PRESS_RUN, run_block
from components.session.state import init_page_state, key, require_selection
from components.story import render_method_story

PAGE = "debate"
RUN, OPEN = "Run MADAM-RAG on this question", "Open a trace file"
ensure_navigation()
init_page_state(PAGE, {"source": RUN, "path": "", "line": 1})
st.title("Debate (MADAM-RAG)")
selection = require_selection(model_note=False)
question = selection.question
st.text(question.question)
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')}, one agent each")


def _from_run():
    results = run_block(selection, ["madam"], "Debating", PAGE, model_note=True,
                        hint=PRESS_RUN.replace(").", "), or open a trace file."))
    return (results or {}).get("madam")


def _from_file():
    cols = st.columns([4, 1])
    path = cols[0].text_input("Trace file (released MADAM-RAG JSONL, inspect --json, or a MethodResult JSON)",
                              key=key(PAGE, "path"), placeholder="/path/to/trace.jsonl")
    line = cols[1].number_input("line", min_value=1, step=1, key=key(PAGE, "line"))
    if not path.strip():
        return None
    try:
        return load_trace_file(path.strip(), question, int(line), confined=True)  # the open folders only
    except TraceFileError as err:
        st.error("This trace cannot be shown:")
        st.code(str(err), language=None, wrap_lines=True)
        return None


result = _from_run() if st.radio("Debate to show", [RUN, OPEN], key=key(PAGE, "source"),
                                 horizontal=True) == RUN else _from_file()
if result is None:
    st.stop()
if result.error or result.trace is None or result.trace.kind != "madam":
    render_failure(st, "MADAM-RAG failed on this question:", result.error, missing="no debate trace")
    st.stop()
trace = result.trace
render_read_status(st, result.calls)  # replies the debate could not read: an agent's or the aggregator's default
render_reading(st, result)  # decisions the other reading of the same replies would have read otherwise
show_truth = truth_toggle(st, help="Colour answers by gold / wrong and show document labels. Methods never see these.")
render_method_story(st, selection, "madam", result, show_truth)  # the question's story, the debate's line
st.text(view.status_line(trace))
st.text(view.config_line(trace, result.calls))
if trace.origin_note:
    st.text(trace.origin_note)
view.render_documents(st, question, show_truth, PAGE)

st.subheader("Agents × rounds")
st.caption("↻ = the agent changed its answer (was …); ⚠ = the reply did not follow the format. "
           + ("Colours: green gold, red wrong, grey unknown, amber other." if show_truth
              else "Changed answers are highlighted."))
st.dataframe(view.styled_grid(trace, question, show_truth), hide_index=True)
st.dataframe(view.rounds_frame(trace, result.calls), hide_index=True)
view.render_rounds(st, trace)
view.render_aggregations(st, trace)
view.render_final(st, trace, question, show_truth)
if trace.notes:
    with st.expander(f"Parse notes ({len(trace.notes)})"):
        st.text("\n".join(trace.notes))
