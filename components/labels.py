"""Label page shaping and panels: the walk through the review queue, the label form's values (prefilled from a
stored label, turned back into a ``LabelDraft``), the queue and history tables, and small ``render_*`` panels that
take Streamlit as an argument. The queue's source (an evaluation run on disk) is read by ``backend.outputs``
(``find_runs``, ``read_results``).

What a label is, how it is checked and stored, and how the queue is built and ordered are ``backend.labels``'
business; nothing here decides them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from backend.errors import mask_url
from backend.labels import location
from backend.labels.files import render
from backend.labels.location import StoreChoices
from backend.labels.model import CONFLICT_TYPES, MAX_NOTE, Label, LabelDraft
from backend.labels.queue import ABSTAINED, Case
from backend.labels.team import CaseLabels, case_progress
from backend.labels.store import LabelStoreError, store_url
from backend.methods import title as method_title
from backend.deployment import shown_path
from backend.report.text import plural
from backend.schema import Question

#: The older top-level key of ``.streamlit/secrets.toml`` naming the store (a file path or a ``postgresql://`` URL):
#: an alias of ``label_store`` in its ``[deployment]`` table.
SECRET = location.LEGACY_SECRET
#: The queue's "Cases" choice: those still needing the analyst's label, those they labelled, all.
LABELLED = {"unlabelled": "to do", "labelled": "yours", "all": "all"}
ANY = ""  # the "no filter" / "no best method" choice of a select box
#: Keyboard shortcuts of the form's buttons (Streamlit fires modified keys even while the focus is in a text box).
#: The form is no ``st.form`` (its fields reach the server as they change, so a draft survives a page switch):
#: Ctrl+Enter is Save's own shortcut, and a text box's Ctrl+Enter only commits its text first.
SHORTCUTS = {"save": "Ctrl+Enter", "previous": "Alt+P", "skip": "Alt+S", "next": "Alt+N"}
FORM_FIELDS = ("picked", "typed", "unanswerable", "conflict_type", "wrong_documents", "wrong_sources",
               "best_method", "note")


# --- where the labels live -----------------------------------------------------------------------------------

def store_choices(secrets: Mapping | None, environ: Mapping[str, str]) -> StoreChoices:
    """What the Label page offers (``backend.labels.location.choices``) from the secrets (their ``[deployment]``
    table and ``labels_url``) and the environment."""
    from backend.deployment import SECRETS_TABLE, from_sources

    table = dict((secrets or {}).get(SECRETS_TABLE) or {})
    return location.choices(from_sources(table, environ), table, (secrets or {}).get(SECRET))


def default_location(secrets: Mapping | None, environ: Mapping[str, str]) -> str:
    """The store to open when the analyst names none: ``label_store`` in the secrets' ``[deployment]`` table, else
    ``labels_url`` (its older name), else ``$CONFLICTLENS_LABELS``, else the per-user ``labels.db``."""
    return store_choices(secrets, environ).default


def store_label(choices: StoreChoices, where: str) -> str:
    """How the store picker shows a store: where it is (a URL's secrets masked), and which is the default."""
    return shown_location(where) + (" (this server's default)" if where == choices.default else "")


def shown_location(where: str) -> str:
    """``where`` as it may be shown: a URL without its password, as ``user:pw@`` or as a parameter
    (``backend.errors.mask_url``); unparseable text is not shown at all."""
    try:
        url = store_url(where)
    except LabelStoreError:
        return "(a location that is not a path or a database URL)"
    if url.get_backend_name() == "sqlite":
        return shown_path(url.database)  # on a team server, not where the server keeps it
    return mask_url(url.render_as_string(hide_password=True))


# --- walking the queue ---------------------------------------------------------------------------------------

def next_case(order: list[str], eligible: list[str], current: str | None) -> tuple[str | None, bool]:
    """The first of ``eligible`` after ``current`` in queue ``order`` (``current`` need not be eligible itself: it
    may just have been labelled), wrapping round to the top; and whether it wrapped. None when no other case is
    eligible."""
    allowed = set(eligible) - {current}
    if not allowed:
        return None, False
    start = order.index(current) + 1 if current in order else 0
    for i in range(len(order)):
        qid = order[(start + i) % len(order)]
        if qid in allowed:
            return qid, start + i >= len(order) and current in order
    return None, False


def previous_case(order: list[str], eligible: list[str], current: str | None) -> str | None:
    """The last of ``eligible`` before ``current`` in ``order`` (no wrapping): None at the top."""
    if current not in order:
        return None
    before = [q for q in order[:order.index(current)] if q in set(eligible)]
    return before[-1] if before else None


# --- the form ------------------------------------------------------------------------------------------------

@dataclass
class FormValues:
    """The label form's fields: answers picked among the methods' candidates, typed answers (one per line), ...;
    ``best_method`` is ``ANY`` for none."""
    picked: list[str] = field(default_factory=list)
    typed: str = ""
    unanswerable: bool = False
    conflict_type: str | None = None
    wrong_documents: list[str] = field(default_factory=list)
    wrong_sources: list[str] = field(default_factory=list)
    best_method: str = ANY
    note: str = ""


def prefill(case: Case, label: Label | None) -> FormValues:
    """The form for ``case`` showing ``label`` (empty without one): an accepted answer that a method gave is picked
    among the candidates (whatever its spelling), any other goes to the typed answers. Documents, sources and a
    method the question or run no longer has are dropped (the form could not show them)."""
    if label is None:
        return FormValues()
    candidates = {c.casefold(): c for c in case.candidates()}
    picked = [candidates[a.casefold()] for a in label.answers if a.casefold() in candidates]
    typed = [a for a in label.answers if a.casefold() not in candidates]
    docs = {d.id for d in case.question.documents}
    sources = {d.source_name for d in case.question.documents}
    methods = set(case.answers) | set(case.errors)
    return FormValues(picked=list(dict.fromkeys(picked)), typed="\n".join(typed), unanswerable=label.unanswerable,
                      conflict_type=label.conflict_type,
                      wrong_documents=[d for d in label.wrong_documents if d in docs],
                      wrong_sources=[s for s in label.wrong_sources if s in sources],
                      best_method=label.best_method if label.best_method in methods else ANY, note=label.note)


def draft_from(values: FormValues, dataset: str, question_id: str, analyst: str) -> LabelDraft:
    """The draft the form says (``backend.labels.check`` cleans and checks it when it is saved)."""
    return LabelDraft(dataset=dataset, question_id=question_id,
                      answers=list(values.picked) + values.typed.splitlines(), unanswerable=values.unanswerable,
                      conflict_type=values.conflict_type or None, wrong_documents=list(values.wrong_documents),
                      wrong_sources=list(values.wrong_sources), best_method=values.best_method or None,
                      note=values.note, analyst=analyst)


def form_keys(page: str, question_id: str, uid: str | None) -> dict[str, str]:
    """The form's widget keys for one case as loaded from one label version: a new version (after a save or a
    conflict) is a new set of widgets, prefilled from it; typed input of the old one is not carried over."""
    return {name: f"{page}.form.{question_id}.{uid or 'new'}.{name}" for name in FORM_FIELDS}


def document_choices(q: Question) -> dict[str, str]:
    """Document id -> what the multiselect shows (id and source)."""
    return {d.id: f"{d.id} · {d.source_name}" for d in q.documents}


def source_choices(q: Question) -> list[str]:
    return list(dict.fromkeys(d.source_name for d in q.documents))


# --- words and tables ----------------------------------------------------------------------------------------

def when(label: Label) -> str:
    return f"{label.created_at:%Y-%m-%d %H:%M:%S} UTC"


def status_text(label: Label | None) -> str:
    """Plain text (data inside: escape it before Markdown)."""
    if label is None:
        return "Not labelled yet"
    return f"Labelled by {label.analyst} at {when(label)}"  # version numbers count every analyst's


def label_text(label: LabelDraft) -> str:
    """A label in a few plain lines (for the history and for a draft that could not be saved)."""
    answers = "unanswerable" if label.unanswerable else "; ".join(label.answers) or "—"
    lines = [f"answers: {answers}", f"conflict type: {CONFLICT_TYPES.get(label.conflict_type or '', '—')}"]
    if label.wrong_documents:
        lines.append("wrong documents: " + ", ".join(label.wrong_documents))
    if label.wrong_sources:
        lines.append("wrong sources: " + ", ".join(label.wrong_sources))
    lines.append(f"best method: {label.best_method or '—'}")
    if label.note:
        lines.append(f"note: {label.note}")
    return "\n".join(lines)


def queue_frame(cases: list[Case], labels: Mapping[str, Label], skipped: set[str], current: str | None,
                team: Mapping[str, CaseLabels] | None = None, overlap: int = 1) -> pd.DataFrame:
    """One row per case in queue order: rank, position in the dataset, id, entropy, answer groups, how many labels
    it has of the round's overlap ("1 of 2 labels"), whether the analyst's own label is saved (``labels``: theirs;
    others' are never shown here: blind), and whether it is the current case or was skipped this session."""
    rows = []
    for rank, c in enumerate(cases, 1):
        lab = labels.get(c.id)
        rows.append({"": "▶" if c.id == current else "", "#": rank, "position": c.position, "id": c.id,
                     "entropy (bits)": round(c.entropy, 3), "groups": len(c.groups),
                     "labels": case_progress((team or {}).get(c.id), overlap),
                     "yours": f"{lab.created_at:%Y-%m-%d %H:%M}" if lab else "",
                     "skipped": c.id in skipped, "question": c.question.question})
    return pd.DataFrame(rows, columns=["", "#", "position", "id", "entropy (bits)", "groups", "labels", "yours",
                                       "skipped", "question"])


def history_frame(history: list[Label]) -> pd.DataFrame:
    """The versions of one analyst's label of a question, newest first, numbered in their own chain (the stored
    version counts every analyst's); ``analyst from``: signed-in or self-declared (typed)."""
    rows = [{"version": n, "when (UTC)": f"{lab.created_at:%Y-%m-%d %H:%M:%S}", "analyst": lab.analyst,
             "analyst from": lab.analyst_source,
             "answers": "unanswerable" if lab.unanswerable else "; ".join(lab.answers),
             "conflict type": CONFLICT_TYPES.get(lab.conflict_type or "", ""),
             "wrong documents": ", ".join(lab.wrong_documents), "wrong sources": ", ".join(lab.wrong_sources),
             "best method": lab.best_method or "", "note": lab.note} for n, lab in reversed(list(enumerate(history, 1)))]
    return pd.DataFrame(rows, columns=["version", "when (UTC)", "analyst", "analyst from", "answers", "conflict type",
                                       "wrong documents", "wrong sources", "best method", "note"])


def export_bytes(labels: list[Label], fmt: str) -> bytes:
    return render(labels, fmt).encode("utf-8")


def groups_of(case: Case) -> list[tuple[str, list[str]]]:
    """The case's answer groups (answer text, methods), largest first, then the methods that failed."""
    groups = list(case.groups)
    if case.errors:
        groups.append(("(failed)", list(case.errors)))
    return groups


# --- panels --------------------------------------------------------------------------------------------------

def render_case(st, case: Case, show_truth: bool, inspect_url: str | None, page: str) -> None:
    """The current case: question, the methods' answers grouped, documents with their sources (truth only when
    asked). Untrusted text goes through ``st.text``; data inside Markdown through ``md``."""
    from components.documents import render_document
    from components.safe import md

    q = case.question
    st.text(q.question)
    st.caption(f"{md(q.id)} · question {case.position} of the dataset · disagreement {case.entropy:.2f} bits · "
               f"{plural(len(case.groups), 'answer group')}")
    if inspect_url:
        st.link_button("Open in Inspect", inspect_url, icon=":material/open_in_new:")
    st.markdown("**Answers, grouped by what they say**")
    box = st.container(border=True)
    for answer, methods in groups_of(case):
        row = box.columns([3, 2])
        if answer in (ABSTAINED, "(failed)"):  # our own words, not data
            row[0].caption(answer.strip("()"))
        else:
            row[0].text(answer)
        row[1].caption(", ".join(md(method_title(m)) + (" ✗" if show_truth and m in case.wrong else "")
                                 for m in methods))
    if show_truth:
        st.caption("Gold answers (the dataset's truth) · ✗: the method gives none of them")
        st.text("; ".join(q.gold_answers) or "—")
        st.caption(f"The dataset's truth suggests: {CONFLICT_TYPES.get(case.dataset_type, case.dataset_type)}")
    st.markdown(f"**Documents ({len(q.documents)})**")
    docs = st.container(height=640) if len(q.documents) > 3 else st.container()
    for doc in q.documents:
        render_document(docs.container(border=True), doc, show_truth, key_prefix=f"{page}.doc.{q.id}")


#: Said beside the other analysts' labels once they are shown (``backend.labels.team``: blind labelling).
SEEN_NOTE = ("Blind labelling: a label you save on this case from now on is marked as saved after seeing the "
             "others' and does not count toward agreement or gold; your label saved before counts.")


def render_history(st, history: list[Label]) -> None:
    if not history:
        return
    with st.expander(f"History ({plural(len(history), 'version')})"):
        st.dataframe(history_frame(history), hide_index=True)


def render_queue(st, frame: pd.DataFrame, key: str, on_select: Callable[[], None]) -> None:
    """The queue as a table; selecting a row opens that case."""
    config = {"": st.column_config.TextColumn("", width=30), "#": st.column_config.NumberColumn("#", width=40),
              "skipped": st.column_config.CheckboxColumn("skipped", help="skipped in this session")}
    st.dataframe(frame, hide_index=True, column_config=config, key=key, on_select=on_select,
                 selection_mode="single-row", height=min(400, 38 + 35 * max(len(frame), 1)))


def render_exports(st, versions: Callable[[], list[Label]], dataset: str, page: str) -> None:
    """Download every version of the dataset's labels (read from the store when the button is pressed)."""
    row = st.container(horizontal=True)
    for fmt, mime in (("csv", "text/csv"), ("jsonl", "application/jsonl")):
        row.download_button(f"Labels ({fmt.upper()})", lambda fmt=fmt: export_bytes(versions(), fmt),
                            file_name=f"{dataset}-labels.{fmt}", mime=mime, key=f"{page}.export.{fmt}",
                            icon=":material/download:", on_click="ignore")


def render_form(st, case: Case, values: FormValues, keys: dict[str, str], methods: list[str], page: str,
                on_save: Callable[[], None], on_move: Callable[[str], None],
                on_edit: Callable[[str], None] | None = None) -> None:
    """The label form, prefilled with ``values``; its buttons call ``on_save`` / ``on_move(direction)`` before the
    page reruns (Streamlit callbacks), with the form's values in session state under ``keys``; a field that
    changes calls ``on_edit(field)`` first (its ``on_change``)."""
    q = case.question
    docs = document_choices(q)
    types = list(CONFLICT_TYPES)

    def edit(name: str) -> dict:
        return {"key": keys[name], "on_change": on_edit, "args": (name,)} if on_edit else {"key": keys[name]}

    with st.container(border=True, key=f"{page}-form"):
        st.multiselect("Accepted answers", case.candidates(), default=values.picked, **edit("picked"),
                       placeholder="pick among the methods' answers",
                       help="Every answer a method gave, once. Answers no method gave go in the box below.")
        st.text_area("Other accepted answers, one per line", value=values.typed, **edit("typed"), height=68)
        st.checkbox("Unanswerable: the documents support no answer", value=values.unanswerable,
                    **edit("unanswerable"))
        st.selectbox("Conflict type", types, format_func=CONFLICT_TYPES.get, placeholder="not judged",
                     index=types.index(values.conflict_type) if values.conflict_type in types else None,
                     **edit("conflict_type"))
        st.multiselect("Wrong documents", list(docs), default=values.wrong_documents, format_func=docs.get,
                       **edit("wrong_documents"), placeholder="none")
        st.multiselect("Wrong sources", source_choices(q), default=values.wrong_sources, **edit("wrong_sources"),
                       placeholder="none")
        options = [ANY] + methods
        st.selectbox("Best method", options,
                     format_func=lambda m: method_title(m) if m else "none",
                     index=options.index(values.best_method) if values.best_method in options else 0,
                     **edit("best_method"))
        st.text_area("Note", value=values.note, max_chars=MAX_NOTE, **edit("note"), height=90)
        with st.container(horizontal=True):  # sized to their labels and shortcut hints, wrapping when narrow
            st.button("Save & next", type="primary", on_click=on_save, key=f"{page}.save",
                      shortcut=SHORTCUTS["save"])
            for move in ("previous", "skip", "next"):
                st.button(move.capitalize(), on_click=on_move, args=(move,), key=f"{page}.{move}",
                          shortcut=SHORTCUTS[move])
    st.caption(f"Keys: {SHORTCUTS['save']} save & next · {SHORTCUTS['previous']} previous · "
               f"{SHORTCUTS['skip']} skip · {SHORTCUTS['next']} next (Cmd / Option on a Mac). Skip passes the case "
               "over for this session; Next only moves on.")
