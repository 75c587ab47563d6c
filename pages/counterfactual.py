"""Risk (counterfactual prompting, RC-RAG): for the selected question, the RAG answer, the CF-quality and CF-usage
branches judged against it, fusion, the override and keep / abstain; over the dataset, the answerable × kept folds,
the risk metrics per fusion strategy and the risk–coverage trade-off."""

import streamlit as st

from backend.methods.counterfactual import FUSIONS
from backend.methods.counterfactual.risk import risk_sweep
from backend.report.text import plural
from components import counterfactual as view
from components.failures import render_failure, render_failures
from components.models import model_note
from components.read_status import render_read_status
from components.reading import render_reading
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.present import truth_toggle
from components.session.progress import follow
from components.session.run_block import run_block
from components.session.runs import jobs, run_key, start_sweep
from components.session.state import init_page_state, key, require_selection

PAGE = "counterfactual"
SWEEPS = key(PAGE, "sweeps")  # (run settings, strategies, questions) -> RiskSweep, for the session


ensure_navigation()
init_page_state(PAGE, {"strategies": list(FUSIONS), "limit": None})
st.title("Risk (counterfactual prompting)")
selection = require_selection(model_note=False)
ds, question = selection.dataset, selection.question
if (note := model_note(selection.model.model)) is not None:
    st.caption(note)

st.header("This question")
st.text(question.question)
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')} · model {md(selection.model.model)}")
cols = st.columns([1, 3], vertical_alignment="center")
show_truth = truth_toggle(cols[1], help="The label (A: the RAG answer is right, U: wrong), the fold and "
                                        "document types. The method never sees them.")
# a run in flight goes on in the background whatever the user clicks: its progress, then the question view
result = (run_block(selection, ["counterfactual"], "Asking the counterfactuals", PAGE, button=cols[0])
          or {}).get("counterfactual")
if result is not None and (result.error or result.trace is None or result.trace.kind != "counterfactual"):
    render_failure(st, "Counterfactual prompting failed on this question:", result.error, missing="no trace")
elif result is not None:  # else its progress or the hint to press Run is shown above
    render_read_status(st, result.calls)  # replies it could not read: the method took its paper's default
    render_reading(st, result)  # decisions the other reading of the same replies would have read otherwise
    view.render_question(st, result, question, show_truth, PAGE)

st.divider()
st.header("Over the dataset")
st.caption("RC-RAG under each fusion strategy beside keeping its every RAG answer, every question labelled "
           "answerable (its RAG answer matches a gold answer by the released code's rule) or not, and kept or "
           "discarded.")
if not any(q.gold_answers for q in ds.questions):
    st.info(f"{md(ds.name)} has no gold answers, so no RAG answer can be labelled right or wrong: risk cannot be "
            "measured here. The question view above still shows each keep / abstain decision.")
    st.stop()

n = len(ds.questions)
if (st.session_state.get(key(PAGE, "limit")) or 0) > n:
    st.session_state[key(PAGE, "limit")] = n
cols = st.columns([5, 2, 2], vertical_alignment="bottom")
strategies = cols[0].multiselect("fusion strategies", list(FUSIONS), key=key(PAGE, "strategies"),
                                 format_func=lambda s: view.STRATEGY_SHORT[s])
limit = cols[1].number_input("questions (the first N)", min_value=1, max_value=n, step=1, key=key(PAGE, "limit"),
                             placeholder=f"all {n}", help="Empty: every question of the dataset.")
questions = ds.questions[: int(limit)] if limit else ds.questions
wanted = (run_key(selection).settings(), tuple(strategies), len(questions))  # settings: dataset, model, index...
sweeps = st.session_state.setdefault(SWEEPS, {})
if cols[2].button("Run over the dataset", type="primary", key=key(PAGE, "sweep"), disabled=not strategies):
    start_sweep(wanted, selection, lambda run, on_progress: risk_sweep(run, questions, tuple(strategies),
                                                                     on_progress=on_progress),
                "Risk sweep (questions × configurations)")
for k, done in jobs("sweep").collect().items():  # finished sweeps, whichever page the session was on meanwhile
    if done.error:
        render_failure(st, "The risk sweep failed:", done.error)
    else:
        sweeps[k] = done.value
if (job := jobs("sweep").running(wanted)) is not None:  # goes on in the background whatever the user clicks
    follow(job, "Risk sweep")
    st.stop()

sweep = sweeps.get(wanted)
if sweep is None:  # an earlier sweep with the same run settings, of other strategies or questions, rather than nothing
    sweep = next((s for (settings, *_), s in reversed(list(sweeps.items())) if settings == wanted[0]), None)
    if sweep is not None:
        st.caption("Showing an earlier sweep with other settings; press Run over the dataset to update it.")
if sweep is None:
    st.info(f"Press Run over the dataset: {plural(len(questions), 'question')} × "
            f"{plural(len(strategies), 'configuration')}, each a cached run (a second sweep costs no model "
            "calls), and keeping every RAG answer as the reference.")
    st.stop()
failed = [r for by_q in sweep.results.values() for r in by_q.values() if r.error]
if failed:
    st.warning(f"{plural(len(failed), 'run')} failed and {'is' if len(failed) == 1 else 'are'} left out of the folds.")
    render_failures(st, failed[:50])
view.render_dataset(st, sweep, [q for q in ds.questions if q.id in next(iter(sweep.results.values()))], PAGE)
