"""The What-if page's edits of the selected question: kept in the session per (dataset, question) as a list, applied
to a copy of the question on every run (``backend.whatif.edits.apply_edits``: the loaded dataset is never touched),
and the controls that add, undo and reset them. An edit that cannot apply is refused with a message, never stored."""

from __future__ import annotations

import streamlit as st
from pydantic import ValidationError

from backend import errors
from backend.schema import MethodResult, Question
from backend.whatif.edits import AddDocument, Edit, EditDocument, EditError, FlipSource, RemoveDocuments, apply_edits
from components.safe import md
from components.session.state import Selection, key
from components.whatif import describe_edit, flip_from_guess

PAGE = "whatif"
EDITS_KEY = "whatif.edits"
KINDS = ("Remove documents", "Rewrite a document", "Add a document", "Flip a source")
OWN_SOURCE = "(its own source)"


def _store() -> dict:
    return st.session_state.setdefault(EDITS_KEY, {})


def current_edits(selection: Selection) -> list[Edit]:
    return list(_store().get((selection.dataset.path, selection.question.id), []))


def _save(selection: Selection, edits: list[Edit]) -> None:
    _store()[(selection.dataset.path, selection.question.id)] = list(edits)


def edited_question(selection: Selection) -> Question:
    """The selected question with the session's edits applied (the question itself when there are none)."""
    return apply_edits(selection.question, current_edits(selection))


def problem(err: Exception) -> str:
    """An edit's error as one sentence (pydantic's "Value error, " prefix and field paths dropped)."""
    if isinstance(err, ValidationError):  # its words, never the value typed (``backend.errors``)
        return errors.problem(err.errors()[0]) if err.errors() else "not valid"
    return str(err)


def add_edit(selection: Selection, edit: Edit) -> None:
    """Keep ``edit`` when it applies to the edited question as it is now; raise ``EditError`` when it does not."""
    edits = current_edits(selection)
    apply_edits(edited_question(selection), [edit])  # raises EditError before anything is stored
    _save(selection, [*edits, edit])


def undo(selection: Selection, index: int) -> list[str]:
    """Drop edit ``index``; later edits that no longer apply without it are dropped too (their descriptions)."""
    edits = current_edits(selection)
    kept, dropped, q = [], [], selection.question
    for i, e in enumerate(edits):
        if i == index:
            continue
        try:
            q = apply_edits(q, [e])
            kept.append(e)
        except EditError:
            dropped.append(describe_edit(e))
    _save(selection, kept)
    return dropped


def _build(kind: str, current: Question, results: dict[str, MethodResult] | None, show_truth: bool) -> Edit | None:
    """The controls of one kind of edit; the edit once its button is pressed (None before). Keys carry the
    question's id, which every edit changes: the controls start empty for the next edit."""
    ids = [d.id for d in current.documents]
    sources = list(dict.fromkeys(d.source_name for d in current.documents))
    if kind == KINDS[0]:
        chosen = st.multiselect("documents to remove", ids, key=key(PAGE, f"remove_ids.{current.id}"))
        if st.button("Remove", key=key(PAGE, f"do_remove.{current.id}"), disabled=not chosen):
            return RemoveDocuments(ids=chosen)
    elif kind == KINDS[1]:
        doc_id = st.selectbox("document", ids, key=key(PAGE, f"rewrite_id.{current.id}"))
        if doc_id is None:
            return None
        text = st.text_area("new text", value=next(d.text for d in current.documents if d.id == doc_id),
                            key=key(PAGE, f"rewrite_text.{current.id}.{doc_id}"))
        if st.button("Rewrite", key=key(PAGE, "do_rewrite")):
            return EditDocument(id=doc_id, text=text)
    elif kind == KINDS[2]:
        text = st.text_area("text of the new document", key=key(PAGE, f"add_text.{current.id}"))
        cols = st.columns(2)
        source = cols[0].selectbox("source", [OWN_SOURCE, *sources], key=key(PAGE, f"add_source.{current.id}"))
        new = cols[1].text_input("or a new source", key=key(PAGE, f"add_new_source.{current.id}"),
                                 help="A name not among the question's sources (it wins over the list when given).")
        if st.button("Add", key=key(PAGE, "do_add")):
            return AddDocument(text=text, source=new.strip() or (None if source == OWN_SOURCE else source))
    elif kind == KINDS[3]:
        source = st.selectbox("source", sources, key=key(PAGE, f"flip_source.{current.id}"))
        if source is None:
            return None
        cols = st.columns(2)
        guess = flip_from_guess(current, source, results, use_labels=show_truth)
        from_answer = cols[0].text_input("from answer (as its documents state it)", value=guess,
                                         key=key(PAGE, f"flip_from.{current.id}.{source}"))
        to_answer = cols[1].text_input("to answer", key=key(PAGE, f"flip_to.{current.id}"))
        if st.button("Flip", key=key(PAGE, "do_flip"), disabled=not (from_answer.strip() and to_answer.strip())):
            return FlipSource(source=source, from_answer=from_answer.strip(), to_answer=to_answer.strip())
    return None


def render_edit_controls(selection: Selection, current: Question, results: dict[str, MethodResult] | None,
                         show_truth: bool) -> None:
    """Pick a kind of edit, fill it in, press its button: the edit is added, or its problem is shown."""
    kind = st.segmented_control("edit", KINDS, key=key(PAGE, "kind"), default=KINDS[0])
    try:
        edit = _build(kind or KINDS[0], current, results, show_truth)
        if edit is not None:
            add_edit(selection, edit)
            st.rerun()  # the documents and the list of edits above are drawn again with it
    except (EditError, ValidationError) as err:
        st.error(f"This edit cannot be made: {md(problem(err))}")


def render_edit_list(selection: Selection) -> None:
    """The edits so far, in order, each with its undo button; and a reset."""
    edits = current_edits(selection)
    if dropped := st.session_state.pop(key(PAGE, "dropped"), None):
        st.warning("These later edits no longer applied without the one taken back, and were dropped too:")
        st.text("\n".join(dropped))
    if not edits:
        st.caption("No edits yet: the question is as the dataset has it.")
        return
    for i, edit in enumerate(edits):
        row = st.columns([5, 1], vertical_alignment="center")  # "undo" fits at 1024 px
        row[0].text(f"{i + 1}. {describe_edit(edit)}")
        if row[1].button("undo", key=key(PAGE, f"undo.{i}"), help="Take this edit back"):
            if dropped := undo(selection, i):
                st.session_state[key(PAGE, "dropped")] = dropped
            st.rerun()
    if st.button("Reset edits", key=key(PAGE, "reset")):
        _save(selection, [])
        st.rerun()
