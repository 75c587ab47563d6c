"""The Label page's team views, bound to the session: the labelling round (set by its lead), the agreement table with
the cases behind each disagreement one click away, and the adjudication view where the lead records a case's final
label beside the analysts' labels. Blind as the queue is: a case's labels are shown side by side only to the lead and
to analysts who saved their own label of it."""

from __future__ import annotations

from functools import partial

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from backend import deployment
from backend.labels import LabelConflict, LabelError, LabelStore, LabelStoreError
from backend.labels import team as team_rules
from backend.labels.agreement import agreement as compute_agreement
from backend.labels.queue import Case
from backend.labels.team import MAX_OVERLAP, CaseLabels, Round, leads, may_see_others, may_set_round, overlap_of
from backend.report.text import plural
from backend.schema import Dataset
from components import labels as view
from components import team as shape
from components.safe import md
from components.session import labels as session
from components.session import signin

PAGE = session.PAGE
VIEW_KEY = f"{PAGE}.view"
ADJ = f"{PAGE}-adj"  # the adjudication form's widget prefix (the analyst's form is PAGE's)
ROUND_ERROR = f"{PAGE}.round_error"


def view_choice() -> str:
    """The view picked (``?view=`` in a link, once), written back to the link."""
    if VIEW_KEY not in st.session_state:
        st.session_state[VIEW_KEY] = st.query_params.get("view") if st.query_params.get("view") in shape.VIEWS \
            else "label"
    picked = st.segmented_control("View", list(shape.VIEWS), format_func=shape.VIEWS.get, key=VIEW_KEY,
                                  required=True, label_visibility="collapsed")
    picked = picked if picked in shape.VIEWS else "label"
    if picked == "label":
        st.query_params.pop("view", None)
    else:
        st.query_params["view"] = picked
    return picked


def adj_state(dataset: str) -> session.QueueState:
    """Where the lead is in the adjudication list (its own walk, apart from the labelling queue's)."""
    return session.state(f"{dataset}\x00adjudicate")


# --- the round -----------------------------------------------------------------------------------------------

def round_rule() -> tuple[str, ...] | None:
    """Who may set rounds on this server (``backend.labels.team.round_rule``): the deployment's leads; nobody on a
    server with sign-in that names none; without either, the first round anyone's and later ones its lead's."""
    return team_rules.round_rule(deployment.current().leads, signed_in=signin.configured())


def round_panel(store: LabelStore, ds_key: str, analyst_key: str) -> Round | None:
    """The dataset's round in a line, and (in an expander) the lead's controls: analysts per case and who leads,
    usable by who may set the round (``round_rule``), disabled for anyone else (the store refuses them too)."""
    try:
        rnd = session.read(store, lambda s: s.round(ds_key))
    except LabelStoreError as err:
        st.error(md(str(err)), icon=":material/error:")
        return None
    me, _ = session.analyst(analyst_key)
    failed = st.session_state.pop(ROUND_ERROR, None)
    n = rnd.number if rnd else 0
    # new widgets for each dataset and each new setting (a widget's state outlives its default)
    overlap_key, lead_key = f"{PAGE}.round.overlap.{ds_key}.{n}", f"{PAGE}.round.lead.{ds_key}.{n}"
    with st.expander(md(shape.round_text(rnd)), icon=":material/groups:", expanded=bool(failed)):
        rule = round_rule()
        may = may_set_round(rnd, me, rule)
        if rule is not None and not may:
            st.caption("Only a lead this server names sets or changes a round." if rule else
                       "This server names no leads, so nobody sets a round here: whoever runs it names them "
                       "([deployment] leads).")
        elif rnd is not None and not may:
            st.caption(f"Only the round's lead, {md(rnd.lead)}, changes it.")
        row = st.columns([1, 2, 1], vertical_alignment="bottom")
        row[0].number_input("Analysts per case", 1, MAX_OVERLAP, value=overlap_of(rnd), step=1, key=overlap_key,
                            disabled=not may, help="How many analysts label each case. Each analyst's queue holds "
                                                   "the cases that still need their label; other labels stay hidden "
                                                   "until they saved their own.")
        row[1].text_input("Lead", value=rnd.lead if rnd else me, key=lead_key, disabled=not may,
                          help="Who changes the round and records adjudicated labels (with sign-in: their signed-in "
                               "identity).")
        row[2].button("Set round", key=f"{PAGE}.round.set", disabled=not may or not me, on_click=set_round,
                      args=(store, ds_key, analyst_key, rnd.number if rnd else None, overlap_key, lead_key))
        if not me and rule is None:
            st.caption("Enter your name above to set a round.")
        if failed:
            st.error(md(failed), icon=":material/error:")
    return rnd


def set_round(store: LabelStore, ds_key: str, analyst_key: str, expected: int | None, overlap_key: str,
              lead_key: str) -> None:
    me, source = session.analyst(analyst_key)
    try:
        rnd = store.set_round(ds_key, int(st.session_state[overlap_key]), str(st.session_state[lead_key] or ""), me,
                              source, expected=expected, rule=round_rule())
    except LabelError as err:
        st.session_state[ROUND_ERROR] = "; ".join(err.problems)
        return
    except (LabelStoreError, SQLAlchemyError) as err:
        st.session_state[ROUND_ERROR] = f"Not set: {session.failure(err, store.where)}"
        return
    session.state(ds_key).flashes.append(f"Round set: {plural(rnd.overlap, 'analyst')} per case, led by {rnd.lead}.")


# --- agreement -----------------------------------------------------------------------------------------------

def agreement_view(store: LabelStore, ds_key: str, cases: dict[str, Case], order: list[str], rnd: Round | None,
                   analyst_key: str) -> None:
    """Krippendorff's α and Cohen's κ per field, and the cases behind the disagreements (a row opens the case in
    the adjudication view): all of them for the lead, for anyone else those they labelled (blind)."""
    try:
        current = session.read(store, lambda s: s.current(ds_key))
    except LabelStoreError as err:
        st.error(md(str(err)), icon=":material/error:")
        return
    me, _ = session.analyst(analyst_key)
    lead = leads(rnd, me)
    hidden = 0
    if not lead:  # blind: figures over the cases you labelled too; the others' say how their labels compare
        seen = {q: c for q, c in current.items() if may_see_others(c, me)}
        hidden, current = len(current) - len(seen), seen
    result = compute_agreement(current)
    st.subheader("Agreement between analysts")
    if hidden:
        st.caption(f"Over the cases you labelled too: {plural(hidden, 'other labelled case')} "
                   f"{'counts' if hidden == 1 else 'count'} for the round's lead only (blind labelling).")
    if result.cases == 0:
        st.info(f"Agreement needs cases labelled by at least two analysts; {plural(len(current), 'case')} "
                f"{'has' if len(current) == 1 else 'have'} labels, none by two yet.", icon=":material/groups:")
        return
    st.caption(f"{plural(result.cases, 'case')} labelled by two or more of {plural(len(result.analysts), 'analyst')} "
               "(" + md(", ".join(result.analysts)) + "). Krippendorff's α over all analysts and Cohen's κ per pair "
               "(cases behind each figure in brackets), nominal: accepted answers and wrong documents compare as "
               "sets. — : undefined (every label the same, or too few cases).")
    st.dataframe(shape.agreement_frame(result), hide_index=True, key=f"{PAGE}.agreement.table")
    if undefined := [f"{shape.FIELDS.get(f.field, f.field)}: {f.why}" for f in result.fields.values()
                     if f.alpha is None and f.why]:
        st.caption(md(" · ".join(undefined)))
    frame = shape.disagreement_frame(result, cases, order)
    if frame.empty:
        st.success("The analysts agree on every field of every case they labelled together.",
                   icon=":material/check_circle:")
        return
    st.markdown(f"**Cases behind the disagreements ({len(frame)})** · pick a row to open it for adjudication")
    table = f"{PAGE}.agreement.cases"
    st.dataframe(frame, hide_index=True, key=table, on_select=partial(_open_case, ds_key, table, list(frame["id"])),
                 selection_mode="single-row")


def _open_case(ds_key: str, table: str, ids: list[str]) -> None:
    rows = st.session_state[table].selection.rows
    if rows:
        session.go(adj_state(ds_key), ids[rows[0]])
        st.session_state[VIEW_KEY] = "adjudicate"


# --- adjudication ------------------------------------------------------------------------------------------

def adjudication_view(store: LabelStore, ds: Dataset, cases: dict[str, Case], order: list[str], methods: list[str],
                      rnd: Round | None, analyst_key: str) -> None:
    """The cases whose labels disagree, the current one's labels side by side, and the lead's form."""
    from backend.labels.identity import dataset_key

    ds_key = dataset_key(ds)
    try:
        current: dict[str, CaseLabels] = session.read(store, lambda s: s.current(ds_key))
    except LabelStoreError as err:
        st.error(md(str(err)), icon=":material/error:")
        return
    me, _ = session.analyst(analyst_key)
    lead = leads(rnd, me)
    ids = shape.disputed_ids(compute_agreement(current), current, order)
    if not lead:  # blind: only the cases whose labels you may see (you labelled them too)
        ids = [q for q in ids if may_see_others(current.get(q), me)]
    qs = adj_state(ds_key)
    for text in qs.flashes:
        st.toast(md(text), icon=":material/check_circle:")
    qs.flashes.clear()
    st.subheader("Adjudication")
    if not ids:
        st.info("No case to adjudicate: every case labelled by two or more analysts has labels that agree." if lead
                else "No case whose labels disagree among those you labelled (the round's lead sees them all).",
                icon=":material/inbox:")
        return
    if qs.cursor not in ids:
        linked = st.query_params.get("case")
        qs.cursor = linked if linked in ids else next((q for q in ids if current[q].adjudicated is None), ids[0])
    qid = qs.cursor
    st.query_params["case"] = qid
    settled = sum(current[q].adjudicated is not None for q in ids)
    st.caption(f"{plural(len(ids), 'case')} whose labels disagree ({settled} settled): those whose answers differ "
               "first (they have no gold until settled), then those differing on other fields.")
    table = f"{PAGE}.adj.table.{qid}"
    st.dataframe(shape.adjudication_frame(ids, current, cases, qid, overlap_of(rnd)), hide_index=True, key=table,
                 on_select=partial(session.jump, qs, table, ids), selection_mode="single-row",
                 height=min(300, 38 + 35 * len(ids)))
    case_labels = current[qid]
    case = cases.get(qid)
    if not (lead or may_see_others(case_labels, me)):
        st.info("Blind labelling: a case's labels are shown to the round's lead and to analysts who saved their own "
                "label of it.", icon=":material/visibility_off:")
        return
    with st.container(key=f"{ADJ}-case"):
        if case is not None:
            st.text(case.question.question)
            st.caption(f"{md(qid)} · differ on: {md(', '.join(shape.differing_fields(case_labels)) or 'nothing')}")
        labels = shape.side_by_side(case_labels)
        for col, (heading, lab) in zip(st.columns(max(len(labels), 2)), labels):  # side by side, also at 1024 px
            box = col.container(border=True)
            box.caption(md(heading))
            box.text(view.label_text(lab))
    if not lead:
        st.caption("Only the round's lead records the final label" + (f" ({md(rnd.lead)})." if rnd else
                   ": set a round naming one first."))
        return
    if case is None:
        st.caption("This case is not in the queue's run: open it with a run that has it to record its label.")
        return
    _lead_form(store, ds, case, case_labels, methods, ids, qs, analyst_key)


def _lead_form(store: LabelStore, ds: Dataset, case: Case, labels: CaseLabels, methods: list[str], ids: list[str],
               qs: session.QueueState, analyst_key: str) -> None:
    adjudicated = labels.adjudicated
    if qs.form is None or qs.form[0] != case.id:
        qs.form = (case.id, adjudicated.uid if adjudicated else None)
    loaded = qs.form[1]
    if qs.conflict and qs.conflict[0] == case.id:
        st.warning(qs.conflict[1], icon=":material/warning:")
    for problem in qs.problems[1] if qs.problems and qs.problems[0] == case.id else []:
        st.error(md(problem), icon=":material/error:")
    st.markdown("**Final label**" + (" (replaces the adjudicated one)" if adjudicated else ""))
    # start from an analyst's label: new widgets prefilled from it (a widget's value is never set behind its back)
    # keyed by the analyst, not their label's uid: a label saved meanwhile does not wipe what the lead typed
    start_key = f"{ADJ}.start.{case.id}"
    with st.container(horizontal=True):
        for name in sorted(labels.analysts):
            st.button(f"Start from {md(name)}'s label", key=f"{ADJ}.start.{case.id}.{name}",
                      icon=":material/content_copy:", on_click=st.session_state.__setitem__, args=(start_key, name))
    chosen = st.session_state.get(start_key)
    start = labels.analysts.get(chosen) if chosen else None
    keys = view.form_keys(ADJ, case.id, f"{loaded}.{len(chosen or '')}.{chosen or ''}")
    ctx = session.Context(store, ds, methods, ids, ids, analyst_key)
    settles = [lab.uid for lab in labels.analysts.values()]
    view.render_form(st, case, view.prefill(case, start or adjudicated), keys, methods, ADJ,
                     on_save=partial(save_adjudicated, ctx, qs, case.id, loaded, keys, settles),
                     on_move=partial(session.move, ctx, qs))


def save_adjudicated(ctx: session.Context, qs: session.QueueState, case_id: str, loaded: str | None,
                     keys: dict[str, str], settles: list[str]) -> None:
    """Store the lead's form as the case's adjudicated label, naming the analysts' labels it settles."""
    name, source = session.analyst(ctx.analyst_key)
    draft = view.draft_from(session.form_values(keys), ctx.dataset.name, case_id, name)
    try:
        label = ctx.store.adjudicate(draft, settles, dataset=ctx.dataset, methods=ctx.methods, expected=loaded,
                                     analyst_source=source)
    except LabelConflict as err:
        cur = err.current
        qs.form, qs.problems = (case_id, cur.uid), None
        qs.conflict = (case_id, f"{md(cur.analyst)} recorded an adjudicated label at {md(view.when(cur))} while the "
                                "form was open; it is in the form now. Not saved.", draft)
        return
    except LabelError as err:
        qs.problems, qs.conflict = (case_id, err.problems), None
        return
    except (LabelStoreError, SQLAlchemyError) as err:
        qs.problems = (case_id, [f"Not saved: {session.failure(err, ctx.store.where)}"])
        return
    qs.form = (case_id, label.uid)
    qs.flashes.append(f"Settled {case_id}.")
    session.move(ctx, qs, "save")
