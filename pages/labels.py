"""Label: a review queue of the questions on which the methods disagree (``backend.agreement``), most disputed
first (blind: never ordered by the truth), built from an evaluation run of the sidebar's dataset. For each case: the
question, the methods' answers in groups, the documents (truth hidden unless asked), and a form whose label is stored
as a new version of the analyst's own label in the label store (SQLite by default, PostgreSQL for a team).

As a team (``components.session.team``): a round says how many analysts label each case and who leads; each analyst's
queue holds the cases that still need their label, other analysts' labels hidden until they saved their own; the
Agreement view gives Krippendorff's α and Cohen's κ per field with the cases behind each disagreement, and the
Adjudicate view lets the lead record the final label of a case whose labels disagree."""

from functools import partial

import streamlit as st

from backend.data import bundled_datasets
from backend.labels import LabelStoreError, dataset_key
from backend.labels.model import CONFLICT_TYPES
from backend.labels.queue import Case, case_for, filter_cases
from backend.labels.team import leads, needs, overlap_of, visible
from backend.methods import METHODS, SPECS
from components import labels as view
from components.evaluate import dataset_param, inspect_link
from components.safe import md
from components.session import labels as session
from components.session import team
from components.session.navigation import ensure_navigation
from components.session.present import title
from components.session.state import init_page_state, key, require_selection

PAGE = session.PAGE
CASE_BOX = f"{PAGE}-case"  # the case's box: Save & next and the moves scroll to its top
AVAILABLE = list(METHODS)
CHEAP = [m for m in AVAILABLE if SPECS[m].quick]  # few calls, often disagree
SOURCES = {"run": "An evaluation run", "compute": "Compute now"}
ensure_navigation()
init_page_state(PAGE, {"store": "", "analyst": "", "source": "run", "run": "", "path": "", "methods": CHEAP,
                       "limit": 20, "type": view.ANY, "method": view.ANY, "labelled": "unlabelled",
                       "agreeing": False, "show_truth": False})
session.count_edits()  # first: the sidebar links' guard reads it (components.session.labels._GUARD)
st.title("Label")
selection = require_selection(model_note=False)
ds = selection.dataset
ds_key = dataset_key(ds)  # the labels of this version of the dataset: its name and content hash
qs = session.state(ds_key)
for text in qs.flashes:  # what the form's buttons did, said once
    st.toast(md(text), icon=":material/check_circle:")
qs.flashes.clear()
store = session.store_panel(key(PAGE, "store"), key(PAGE, "analyst"))
session.versions_panel(store, ds)
rnd = team.round_panel(store, ds_key, key(PAGE, "analyst"))
overlap = overlap_of(rnd)
picked_view = team.view_choice()


def _exports() -> None:
    st.subheader("Export")
    me = session.analyst(key(PAGE, "analyst"))[0]
    if rnd is not None and rnd.overlap > 1 and not leads(rnd, me):  # an export holds every analyst's labels
        st.caption(f"During a round of {rnd.overlap} analysts per case the page offers the exports to its lead "
                   f"({md(rnd.lead)}) only: they hold every analyst's labels, which labelling blind keeps from you.")
        return
    lead = leads(rnd, me)  # the lead's full view; anyone else what blind labelling shows them (team.visible)
    view.render_exports(st, lambda: visible(session.read(store, lambda s: s.versions(ds_key)), me, lead), ds.name,
                        PAGE)
    held = (f"Every version of every label of this version of {md(ds.name)} ({md(ds_key)})" if lead else
            f"Every version of your labels of this version of {md(ds.name)} ({md(ds_key)}), and of every label of "
            "the cases you labelled too (blind labelling keeps the others from you)" if me else
            "Enter your name above: the exports hold your own labels, and those of the cases you labelled too")
    st.caption(f"{held}. From the command "
               "line: `python -m backend labels export --dataset PATH --format csv|jsonl [--latest]`; to score the "
               "methods against the labels: "
               "`python -m backend evaluate --dataset D --gold STORE_OR_FILE --out DIR`.")


def _blank_cases() -> dict[str, Case]:
    """Every question as a case without methods' answers: for views that need no run (a case outside the run)."""
    return {q.id: case_for(q, pos, {}) for pos, q in enumerate(ds.questions, 1)}


if picked_view == "agreement":  # needs no run: the labels and the questions
    team.agreement_view(store, ds_key, _blank_cases(), [q.id for q in ds.questions], rnd, key(PAGE, "analyst"))
    _exports()
    st.stop()

# --- the queue's source: an evaluation run, or one computed now ---
session.adopt_finished(key(PAGE, "source"), key(PAGE, "run"))
choice = st.radio("queue from", list(SOURCES), format_func=SOURCES.get, horizontal=True, key=key(PAGE, "source"),
                  label_visibility="collapsed")
if choice == "run":
    src = session.run_panel(ds.name, key(PAGE, "run"), key(PAGE, "path"))
else:
    src = session.compute_panel(selection, AVAILABLE, key(PAGE, "methods"), key(PAGE, "limit"))
    st.info("Choose at least two methods and how many questions, then press Compute.", icon=":material/info:")
if picked_view == "adjudicate":  # the run's answers are the form's candidates; without one, typed answers only
    in_run = session.queue(ds, src, True) if src is not None else []
    team.adjudication_view(store, ds, _blank_cases() | {c.id: c for c in in_run},
                           [c.id for c in in_run] + [q.id for q in ds.questions], src.methods if src else [], rnd,
                           key(PAGE, "analyst"))
    _exports()
    st.stop()
if src is None:
    _exports()
    st.stop()

# --- the queue: filters, progress, the table ---
reset = partial(session.reset_cursor, qs)
row = st.columns([2, 2, 3, 2], vertical_alignment="bottom")
kind = row[0].selectbox("Filter by conflict type", [view.ANY, *CONFLICT_TYPES], key=key(PAGE, "type"), on_change=reset,
                        format_func=lambda t: CONFLICT_TYPES.get(t, "any"),
                        help="The label's type when labelled, else what the dataset's truth suggests.")
method = row[1].selectbox("Filter by method", [view.ANY, *src.methods], key=key(PAGE, "method"), on_change=reset,
                          format_func=lambda m: title(m) if m else "any",
                          help="Cases where this method is outside the largest answer group.")
labelled = row[2].radio("Cases", list(view.LABELLED), key=key(PAGE, "labelled"), horizontal=True, on_change=reset,
                        format_func=view.LABELLED.get,
                        help="To do: the cases that still need your label (with a round, those with fewer labels "
                             "than it asks for). Yours: the cases you labelled.")
agreeing = row[3].toggle("Include agreeing cases", key=key(PAGE, "agreeing"), on_change=reset,
                         help="Also the questions on which every method gives the same answer set (abstaining "
                              "counts as an answer).")
cases = session.queue(ds, src, agreeing)
me = session.analyst(key(PAGE, "analyst"))[0]
try:
    current = session.read(store, lambda s: s.current(ds_key))
except LabelStoreError as err:
    st.error(md(str(err)), icon=":material/error:")
    st.stop()
labels = {qid: c.analysts[me] for qid, c in current.items() if me in c.analysts}  # the analyst's own (blind)
todo = {c.id for c in cases if needs(current.get(c.id), me, overlap)}
matching = filter_cases(cases, labels, kind or None, method or None)
shown = filter_cases(matching, labels, labelled=labelled, todo=todo)
session.live_progress(store, ds_key, matching, key(PAGE, "analyst"), overlap)
if not shown:
    st.info("No case in this run: the methods agree on every question." if not cases else
            "No case matching these filters needs your label." if matching and labelled == "unlabelled" else
            "No case matches these filters.", icon=":material/inbox:")
    _exports()
    st.stop()
by_id = {c.id: c for c in cases}
if qs.cursor is None and not st.session_state.get(key(PAGE, "linked")):  # a shared link's case, once
    st.session_state[key(PAGE, "linked")] = True
    qs.cursor = st.query_params.get("case")
if qs.cursor not in by_id or (qs.picked_for is not None and qs.picked_for != me
                               and qs.cursor not in {c.id for c in shown}):
    qs.cursor, qs.picked_for = shown[0].id, me  # the page's pick (again once a name is typed): the top of the queue
elif qs.picked_for is not None:
    qs.picked_for = me  # a case still to do for the one now named: theirs, kept when they label it elsewhere
case = by_id[qs.cursor]
st.query_params["case"] = case.id
table = key(PAGE, f"table.{case.id}")  # a new table per case: a picked row does not stay picked
with st.expander(f"Queue: {len(shown)} cases, most disputed first (pick a row to open it)"):
    view.render_queue(st, view.queue_frame(shown, labels, qs.skipped, case.id, current, overlap), table,
                      partial(session.jump, qs, table, [c.id for c in shown]))
if case.id not in {c.id for c in shown}:
    st.caption("This case is outside the filters (labelled meanwhile, or opened with Previous).")

# --- the case and its label ---
session.scroll_to_case(qs, CASE_BOX, f"{PAGE}-form")  # the form's box: components.labels.render_form
left, right = st.container(key=CASE_BOX).columns([3, 2], gap="large")
with left:
    truth = st.toggle("Show the dataset's truth", key=key(PAGE, "show_truth"),
                      help="Off by default, so the label is your own judgement.")
    view.render_case(st, case, truth, inspect_link(dataset_param(ds, bundled_datasets()), case.id, src.methods), PAGE)
with right:
    session.label_panel(store, ds, case, labels.get(case.id), src.methods, [c.id for c in cases],
                        [c.id for c in shown], key(PAGE, "analyst"), overlap)
_exports()
