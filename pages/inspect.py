"""Inspect: one question answered by every method at once, side by side, with the reasons visible."""

from functools import partial

import streamlit as st

from backend.llm.offline import MODEL_NOTE
from backend.methods import METHODS
from backend.report.text import plural
from backend.report import compare as view
from backend.report import report_html
from components.failures import render_failures
from components.inspect import render_column
from components.read_status import render_results_read_status
from components.session.views import details_page
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.run_block import run_block
from components.session.state import init_page_state, key, require_selection

PAGE = "inspect"
ensure_navigation()
available = list(METHODS)
from_url = [m for m in st.query_params.get("methods", "").split(",") if m in available]
init_page_state(PAGE, {"methods": from_url or available, "show_truth": False})
st.title("Inspect")
selection = require_selection(model_note=False)
question, offline = selection.question, selection.model.model.startswith("offline/")
st.text(question.question)
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')} · model {md(selection.model.model)}"
           + (f" — {MODEL_NOTE}" if offline else ""))

controls = st.columns([5, 2, 1], vertical_alignment="bottom")
methods = controls[0].multiselect("methods", available, key=key(PAGE, "methods"))
show_truth = controls[1].toggle("Show ground truth", key=key(PAGE, "show_truth"))
st.query_params["methods"] = ",".join(methods)


def _columns(done: dict) -> None:
    for column, name in zip(st.columns(len(methods)), methods):
        render_column(column, name, done.get(name), question, show_truth, details_page(name))


# the offline model costs nothing, so its results appear without a click; hosted models wait for Run (a shared link
# in a fresh tab shows what the reply cache alone can answer)
results = run_block(selection, methods, "Running", PAGE, button=controls[2], auto=offline, render=_columns,
                    hint="Press Run. Answers are cached, so re-running a question costs no model calls.")
if not results:
    st.stop()

render_failures(st, results)  # once per cause, above the columns
render_results_read_status(st, results)  # replies a method could not read: it took its paper's default
for column, (name, result) in zip(st.columns(len(results)), results.items()):
    render_column(column, name, result, question, show_truth, details_page(name))
st.dataframe(view.results_frame(results, question, show_truth), hide_index=True)
if show_truth:
    st.caption("Gold answers")
    st.text("; ".join(question.gold_answers) or "—")
charts = st.columns(2)
charts[0].plotly_chart(view.agreement_figure(results), key=key(PAGE, "agreement"))
charts[1].plotly_chart(view.support_figure(results, question, show_truth), key=key(PAGE, "support"))
st.download_button("Download this inspection as HTML",  # the report is built on click, not on every rerun
                   data=partial(report_html, selection.dataset, question, results, include_truth=show_truth),
                   file_name=f"conflictlens-{question.id}.html", mime="text/html", key=key(PAGE, "download"))
