"""What-if: edit the selected question's evidence and re-run the methods on the edited copy; which document moves
which method (leave-one-out influence); a PoisonedRAG-style attack on the question. The dataset is never changed."""

import streamlit as st

from backend.data import to_jsonl
from backend.methods import METHODS
from backend.report.text import plural
from backend.whatif.attack import ATTACKER_SOURCE, PLACEMENTS, plan_attack, poison
from backend.whatif.compare import compare_all
from backend.whatif.edits import is_edited, original_id
from backend.whatif.influence import ablations, estimate_calls
from components import whatif as view
from components.layout import card_columns
from components.safe import md
from components.session import limits
from components.session.cost import confirmed
from components.session.edits import current_edits, edited_question, render_edit_controls, render_edit_list
from components.session.navigation import ensure_navigation
from components.session.present import title, truth_toggle
from components.session.progress import follow
from components.session.run_block import run_block
from components.session.runs import (cached_results, influence_done, influencing, running, start_influence,
                                     start_run)
from components.session.state import init_page_state, key, require_selection

PAGE = "whatif"
ensure_navigation()
available = list(METHODS)
from_url = [m for m in st.query_params.get("methods", "").split(",") if m in available]
# the methods Inspect shows, when it has been opened: their results on the question are then there already
on_inspect = [m for m in st.session_state.get(key("inspect", "methods"), []) if m in available]
init_page_state(PAGE, {"methods": from_url or on_inspect or available, "k": 3,
                       "placement": "spread"})
st.title("What-if")
selection = require_selection()
question = selection.question
offline = selection.model.model.startswith("offline/")
st.text(question.question)
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')} · model {md(selection.model.model)}")
controls = st.columns([5, 2], vertical_alignment="bottom")
methods = controls[0].multiselect("methods", available, key=key(PAGE, "methods"), format_func=title)
show_truth = truth_toggle(controls[1], help="Verdicts and document labels. Methods never see them.")
if not methods:
    st.info("Choose at least one method.")
    st.stop()

# the original question's results: Inspect's run, usually (shown even while a re-run of it is in flight); else the
# reply cache's, or the offline model runs it here too, without a click
edited = edited_question(selection)
before = cached_results(selection, methods) or run_block(
    selection, methods, "Running the methods on the question", PAGE, button=None, auto=offline, hint=None,
    progress=not is_edited(edited))  # an edit's own progress is drawn below
after = cached_results(selection, methods, question=edited) if is_edited(edited) else before


def diff(base, changed, q0, q1, name: str, plan=None) -> None:
    """Per method: what changed from ``q0`` to its edit ``q1`` (a card each, then one table); ``q1`` exported."""
    changes = compare_all(base, changed, q0, q1)
    st.text(view.summary_line(changes))
    outcomes = {c.method: view.attack_outcome(changed[c.method], plan, q1) for c in changes} if plan else None
    for column, change in zip(card_columns(st, len(changes), name), changes):
        view.render_change(column, change, show_truth, (outcomes or {}).get(change.method))
    st.dataframe(view.changes_frame(changes, show_truth, outcomes), hide_index=True)
    st.dataframe(view.facts_frame(changes), hide_index=True)
    st.download_button(f"Download the {name} question as a dataset file (.jsonl)", data=to_jsonl([q1]),
                       file_name=f"{q1.id.replace('~', '_')}.jsonl", mime="application/jsonl",
                       key=key(PAGE, f"download.{name}"))


def rerun_on(target, label: str) -> bool:
    """While the run on the question or on ``target`` is in flight, its progress (False); else whether both runs
    have results."""
    for q in (None, target):
        if (job := running(selection, methods, question=q)) is not None:
            follow(job, label)
            return False
    return cached_results(selection, methods) is not None and cached_results(selection, methods,
                                                                             question=target) is not None


st.header("1 · Edit and re-run")
st.dataframe(view.documents_frame(edited), hide_index=True)
if is_edited(edited):
    st.caption(f"{md(edited.id)}: edited copy of {md(original_id(edited))}: "
               f"{plural(len(current_edits(selection)), 'edit')}; the dataset is unchanged")
render_edit_list(selection)
render_edit_controls(selection, edited, after or before, show_truth)
rerun_ok = not is_edited(edited) or confirmed(selection, methods, PAGE, "rerun", question=edited)
# an edit may add documents: above the ceiling of one run, the re-run asks first (a team server refuses it)
rerun_ok = rerun_ok and (not is_edited(edited) or limits.allowed(selection, methods, PAGE, "rerun", question=edited))
if st.button("Re-run on the edited question", type="primary", key=key(PAGE, "rerun"),
             disabled=not is_edited(edited) or not rerun_ok):
    start_run(selection, methods, settle=0)
    start_run(selection, methods, question=edited)
if is_edited(edited) and rerun_on(edited, "Re-running"):
    diff(cached_results(selection, methods), cached_results(selection, methods, question=edited), question, edited,
         "edited")

st.header("2 · Document influence")
st.caption("Leave each document of " + ("the edited" if is_edited(edited) else "the") + " question out in turn and "
           "re-run each method: which documents flip which method's answer (or its keep / abstain decision).")
# again: a re-run pressed in this script run may have finished since (a quick one is drawn at once)
after = cached_results(selection, methods, question=edited) if is_edited(edited) else before
if after is None:
    st.info("Run the methods on this question first" + (" (Re-run above)." if is_edited(edited) else "."))
elif (job := influencing(selection, edited, methods)) is not None:
    follow(job, "Document influence")
else:
    calls = estimate_calls(after, len(edited.documents))
    st.text(f"{plural(len(edited.documents), 'document')} × {plural(len(methods), 'method')}: up to "
            f"{plural(calls, 'model call')} "
            "(an upper bound: calls already in the cache cost nothing).")
    # a hosted model: the estimate over every ablated question, and always a confirmation
    agreed = confirmed(selection, methods, PAGE, f"influence.{edited.id}", always=True, questions=ablations(edited))
    # each leave-one-out is a run of the question less one document: the ceiling of one run holds for each
    agreed = limits.allowed(selection, methods, PAGE, f"influence.{edited.id}", question=edited) and agreed
    if st.button("Run document influence", key=key(PAGE, "influence"), disabled=not agreed):
        job = start_influence(selection, edited, methods, after)
        st.rerun()
    if (done := influence_done(selection, edited, methods)) is not None:
        if done.error:
            st.error(f"Document influence failed: {md(done.error)}")
        else:
            st.dataframe(view.base_frame(done.value), hide_index=True)
            st.plotly_chart(view.influence_figure(done.value, edited), key=key(PAGE, "influence_chart"))
            st.dataframe(view.influence_frame(done.value, edited), hide_index=True)

st.header("3 · Attack this question")
plan = plan_attack(edited, selection.dataset)
if plan is None:
    st.info("No target answer can be found for this question (no wrong answer, no number to change, no other "
            "question's answer of the same kind).")
    st.stop()
st.caption("PoisonedRAG-style: k passages stating a target wrong answer go first among the documents. The attacker "
           "knows the correct answer and which passages state it (the dataset's truth); the methods do not.")
view.render_plan(st, plan)
cols = st.columns([1, 1, 2], vertical_alignment="bottom")
k = cols[0].number_input("k passages", min_value=1, max_value=10, step=1, key=key(PAGE, "k"))
placement = cols[1].selectbox("placement", PLACEMENTS, key=key(PAGE, "placement"))
source = None
if placement == "one_source":
    sources = list(dict.fromkeys([ATTACKER_SOURCE, *(d.source_name for d in edited.documents)]))
    source = cols[2].selectbox("into the source (an existing one is poisoned)", sources,
                               key=key(PAGE, f"attack_source.{edited.id}"))
attacked = poison(edited, plan, int(k), placement, source)
attack_ok = confirmed(selection, methods, PAGE, "attack", question=attacked)
attack_ok = limits.allowed(selection, methods, PAGE, "attack", question=attacked) and attack_ok
if st.button("Run attack", type="primary", key=key(PAGE, "attack"), disabled=not attack_ok):
    start_run(selection, methods, question=edited, settle=0)  # the question as it is now: usually cached
    start_run(selection, methods, question=attacked)
if is_edited(edited) and (base_job := running(selection, methods, question=edited)) is not None:
    follow(base_job, "Running the methods on the question")
elif (attack_job := running(selection, methods, question=attacked)) is not None:
    follow(attack_job, "Attacking")
elif after is not None and (hit := cached_results(selection, methods, question=attacked)) is not None:
    diff(after, hit, edited, attacked, "attacked", plan)
