"""Debate: MADAM-RAG's agents × rounds, the aggregator per round, convergence and the final answers."""

import streamlit as st

from backend.llm.offline import MODEL_NOTE
from backend.methods.madam_released import TraceFileError, load_trace_file
from components import debate_view as view
from components.documents import render_document
from components.navigation import ensure_navigation
from components.runs import cached_result, run_methods
from components.safe import md
from components.state import init_page_state, key, require_selection

PAGE = "debate"
RUN, OPEN = "Run MADAM-RAG on this question", "Open a trace file"
ensure_navigation()
init_page_state(PAGE, {"source": RUN, "path": "", "line": 1, "show_truth": False})
st.title("Debate (MADAM-RAG)")
selection = require_selection(model_note=False)
question = selection.question
st.text(question.question)
st.caption(f"{md(question.id)} · {len(question.documents)} documents, one agent each")


def _from_run():
    if selection.model.model.startswith("offline/"):
        st.caption(MODEL_NOTE)
    if st.button("Run", type="primary", key=key(PAGE, "run")):
        with st.spinner("Debating…"):
            run_methods(selection, ["madam"])
    result = cached_result(selection, "madam")
    if result is None:
        st.info("Press Run (results are cached: re-running costs no model calls), or open a trace file.")
    return result


def _from_file():
    cols = st.columns([4, 1])
    path = cols[0].text_input("Trace file (released MADAM-RAG JSONL, inspect --json, or a MethodResult JSON)",
                              key=key(PAGE, "path"), placeholder="/path/to/trace.jsonl")
    line = cols[1].number_input("line", min_value=1, step=1, key=key(PAGE, "line"))
    if not path.strip():
        return None
    try:
        return load_trace_file(path.strip(), question, int(line))
    except TraceFileError as err:
        st.error("This trace cannot be shown:")
        st.code(str(err), language=None, wrap_lines=True)
        return None


def _render_documents(show_truth):
    with st.expander(f"Documents ({len(question.documents)}): agent k reads document k"):
        if show_truth:
            st.caption("Gold answers / wrong answers")
            st.text(f"{'; '.join(question.gold_answers) or '—'}  /  {'; '.join(question.wrong_answers) or '—'}")
        for number, doc in enumerate(question.documents, start=1):
            st.markdown(f"**Agent {number}**")
            render_document(st, doc, show_truth, key_prefix=PAGE)


def _render_rounds(trace):
    for r in trace.rounds:
        with st.expander(f"Round {r.round}: each agent's explanation, the history it read, its raw reply"):
            for d in view.round_details(trace, r.round):
                st.markdown(f"**Agent {d['agent']}**" + (" ↻ changed" if d["changed"] else ""))
                st.text(f"Answer: {d['answer']}\nExplanation: {d['explanation']}")
                if d["parse_note"]:
                    st.caption("parse note")
                    st.text(d["parse_note"])
                if d["history"] is not None:
                    st.caption("history it read")
                    st.code(d["history"] or "(empty)", language=None, wrap_lines=True)


def _render_aggregations(trace):
    st.subheader("Aggregator, per round")
    for row in view.aggregation_rows(trace):
        with st.container(border=True):
            with st.container(horizontal=True):
                st.markdown(f"**Round {row['round']}**")
                if row["final"]:
                    st.badge("final", color="green")
                if row["answers"] is None:
                    st.badge("not aggregated", color="gray")
            if row["answers"] is None:
                st.text(row["note"])
                continue
            st.text(f"All Correct Answers: {row['answers']}")
            st.caption("read in this order")
            st.text(row["order"])
            if row["parse_note"]:
                st.text(f"parse note: {row['parse_note']}")
            with st.expander("explanation"):
                st.text(row["explanation"] or "—")


def _render_final(trace, show_truth):
    st.subheader("Final answers")
    st.text(trace.final_note)
    if not trace.final_answers:
        st.badge("unknown", color="gray")
    st.dataframe(view.final_frame(trace, question, show_truth), hide_index=True)
    with st.expander("final explanation"):
        st.text(trace.final_explanation or "—")
    st.markdown("**Rejected answers** (proposed by an agent, left out of the final answers)")
    st.dataframe(view.rejected_frame(trace, question, show_truth), hide_index=True)
    if show_truth and question.gold_answers:
        ev = view.evaluation(trace.final_answers, question)
        with st.container(horizontal=True):
            st.badge(f"strict EM {'✓' if ev['strict_em'] else '✗'}", color="green" if ev["strict_em"] else "red")
            st.badge(f"accuracy {'✓' if ev['accuracy'] else '✗'}", color="green" if ev["accuracy"] else "red")
            st.badge(f"P {ev['precision']} · R {ev['recall']} · F1 {ev['f1']}", color="blue")
        st.text(f"missing gold: {'; '.join(ev['missing gold']) or '—'}\n"
                f"included wrong: {'; '.join(ev['included wrong']) or '—'}")


result = _from_run() if st.radio("Debate to show", [RUN, OPEN], key=key(PAGE, "source"),
                                 horizontal=True) == RUN else _from_file()
if result is None:
    st.stop()
if result.error or result.trace is None or result.trace.kind != "madam":
    st.error("MADAM-RAG failed on this question:")
    st.text(result.error or "no debate trace")
    st.stop()
trace = result.trace
show_truth = st.toggle("Show ground truth", key=key(PAGE, "show_truth"),
                       help="Colour answers by gold / wrong and show document labels. Methods never see these.")
st.text(view.status_line(trace))
st.text(view.config_line(trace, result.calls))
if trace.origin_note:
    st.text(trace.origin_note)
_render_documents(show_truth)

st.subheader("Agents × rounds")
st.caption("↻ = the agent changed its answer (was …); ⚠ = the reply did not follow the format. "
           + ("Colours: green gold, red wrong, grey unknown, amber other." if show_truth
              else "Changed answers are highlighted."))
st.dataframe(view.styled_grid(trace, question, show_truth), hide_index=True)
st.dataframe(view.rounds_frame(trace, result.calls), hide_index=True)
_render_rounds(trace)
_render_aggregations(trace)
_render_final(trace, show_truth)
if trace.notes:
    with st.expander(f"Parse notes ({len(trace.notes)})"):
        st.text("\n".join(trace.notes))
