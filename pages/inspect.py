"""Inspect: one question answered by every method at once, side by side, with the reasons visible."""

from functools import partial
from itertools import count

import streamlit as st

from backend.methods import METHODS
from backend.report.text import plural
from backend.report import compare as view
from backend.report import report_html
from components.failures import render_failures
from components.layout import card_columns, chart_columns
from components.models import model_note
from components.inspect import render_column
from components.read_status import render_results_read_status
from components.reading import render_results_reading
from components.session.views import details_page
from components.story import render_story
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.present import presenting, title, titled, truth_toggle
from components.session.run_block import run_block
from components.session.state import init_page_state, key, require_selection

PAGE = "inspect"
ensure_navigation()
available = list(METHODS)
from_url = [m for m in st.query_params.get("methods", "").split(",") if m in available]
init_page_state(PAGE, {"methods": from_url or available})
st.title("Inspect")
selection = require_selection(model_note=False)
question, offline = selection.question, selection.model.model.startswith("offline/")
st.text(question.question)
note = model_note(selection.model.model)  # the offline reader is no language model; the local model is a real one
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')} · model {md(selection.model.model)}"
           + (f" — {note}" if note else ""))

controls = st.columns([5, 2, 1], vertical_alignment="bottom")
methods = controls[0].multiselect("methods", available, key=key(PAGE, "methods"), format_func=title)
show_truth = truth_toggle(controls[1])
st.query_params["methods"] = ",".join(methods)

_draws = count()  # a run in flight redraws its columns: each drawing's row needs a key of its own


def _columns(done: dict) -> None:
    for column, name in zip(card_columns(st, len(methods), f"running-{next(_draws)}"), methods):
        render_column(column, name, done.get(name), question, show_truth, details_page(name), presenting())


# the offline model costs nothing, so its results appear without a click; hosted models wait for Run (a shared link
# in a fresh tab shows what the reply cache alone can answer)
results = run_block(selection, methods, "Running", PAGE, button=controls[2], auto=offline, render=_columns,
                    hint="Press Run. Answers are cached, so re-running a question costs no model calls.")
if not results:
    st.stop()

render_failures(st, results)  # once per cause, above the columns
render_results_read_status(st, results)  # replies a method could not read: it took its paper's default
render_results_reading(st, results)  # decisions the other reading of the same replies would have read otherwise
render_story(st, question, results, show_truth)  # the question's story, above the columns (backend.story)
for column, (name, result) in zip(card_columns(st, len(results), "results"), results.items()):
    render_column(column, name, result, question, show_truth, details_page(name), presenting())
st.dataframe(view.results_frame(titled(results), question, show_truth), hide_index=True)
if show_truth:
    st.caption("Gold answers")
    st.text("; ".join(question.gold_answers) or "—")
charts = chart_columns(st, 2, "charts")
charts[0].plotly_chart(view.agreement_figure(titled(results)), key=key(PAGE, "agreement"))
charts[1].plotly_chart(view.support_figure(titled(results), question, show_truth), key=key(PAGE, "support"))
st.download_button("Download this inspection as HTML",  # the report is built on click, not on every rerun
                   data=partial(report_html, selection.dataset, question, results, include_truth=show_truth),
                   file_name=f"conflictlens-{question.id}.html", mime="text/html", key=key(PAGE, "download"))
