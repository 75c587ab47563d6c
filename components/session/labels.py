"""The Label page's Streamlit-bound half: the label store (one open store per location, shared by every session of
this server), the results a queue is built from (cached per file version), where the analyst is in the queue
(``QueueState``: the current case, the cases visited before it, skips, the label version the form was loaded from,
messages for the next run), and the form's callbacks (save, previous / skip / next), which run before the page
reruns so the page draws the case they moved to.

[ours] Drafts and the page switch: each field's ``on_change`` keeps the form as the case's draft (a plain session
key), since a page switch right after an edit can cut the run short and then drops the form's widget state; and a
click on a sidebar link waits (up to ``GUARD_WAIT_S``) until the last text box change is taken in (``_GUARD``),
since Streamlit drops a change it had not started a run for when the switch arrives. After a move, a script keeps
the new case's top in view until the run is drawn (``_SCROLL``): a one-off scroll ran before the case's final
layout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from backend import outputs
from backend.errors import mask_secrets
from backend.labels import Label, LabelConflict, LabelDraft, LabelError, LabelStore, LabelStoreError, location
from backend.labels.identity import dataset_key
from backend.labels.location import LocationRefused, StoreChoices
from backend.labels.model import SELF_DECLARED, SIGNED_IN, AnalystSource
from backend.labels.queue import Case, build_queue
from backend.outputs import Results, ResultsError, RunInfo, read_results, results_path
from backend.paths import default_cache_dir
from backend.schema import Dataset
from components import labels as view
from components.safe import md
from components.session import present, signin

PAGE = "labels"
STATE_KEY = f"{PAGE}.queue_state"
#: Seconds between two looks at the store for labels saved by other analysts (progress, the case's status).
REFRESH_S = 5
TRAIL = 200
OTHER_STORE = "\x00other"  # the store picker's "another SQLite file" (never a store's location)


# --- the store -----------------------------------------------------------------------------------------------

def store_choices() -> StoreChoices:
    """The stores this page offers (``backend.labels.location``): the deployment settings of this run
    (``components.session.deployment.apply``), whether their ``[deployment]`` table sets ``label_store``, and the
    older top-level ``labels_url`` secret."""
    from backend import deployment
    from components.session.deployment import secrets_table

    try:
        legacy = st.secrets.get(view.SECRET)
    except Exception:  # noqa: BLE001 - no secrets file is the normal case
        legacy = None
    return location.choices(deployment.current(), secrets_table(deployment.SECRETS_TABLE), legacy)


@st.cache_resource(show_spinner="Opening the label store…", max_entries=8)
def _store(where: str) -> LabelStore:
    return LabelStore(where)


def failure(err: Exception, where: str) -> LabelStoreError:
    if isinstance(err, LabelStoreError):
        return err
    first = (str(getattr(err, "orig", None) or err).strip().splitlines() or [type(err).__name__])[0]
    first = mask_secrets(first)  # a driver's message may repeat the address
    return LabelStoreError(f"{view.shown_location(where)}: the label store cannot be used ({first})")


def open_store(where: str) -> LabelStore:
    """The store at ``where`` (opened once per server process); ``LabelStoreError`` with a message a person can
    read when it cannot be opened."""
    try:
        return _store(where)
    except (LabelStoreError, SQLAlchemyError, OSError, ValueError, ImportError) as err:
        raise failure(err, where) from None


def read(store: LabelStore, what: Callable[[LabelStore], object]):
    """``what(store)``, a read failure (a server gone, a file deleted) as ``LabelStoreError``; the open stores are
    dropped so the next run opens (and migrates) again."""
    try:
        return what(store)
    except (SQLAlchemyError, OSError) as err:
        _store.clear()
        raise failure(err, store.where) from None


# --- the queue's source --------------------------------------------------------------------------------------

def find_runs(dataset: str) -> list[RunInfo]:
    return outputs.find_runs(default_cache_dir(), dataset)


@st.cache_resource(show_spinner="Reading the results…", max_entries=4)
def _source(path: str, mtime: float, size: int, dataset: str, _confined: bool = False) -> Results:
    # _confined is not part of the key: a confined path is resolved already, the same file as unconfined
    return read_results(path, dataset, confined=_confined)


def source(path: str | Path, dataset: str, *, confined: bool = False) -> Results:
    """The results file's rows (read again when it changes); ``ResultsError``. ``confined``: a path typed on the
    page, refused outside the deployment's open folders before anything there is looked at."""
    p = results_path(path, confined=confined)
    stat = p.stat()
    return _source(str(p), stat.st_mtime, stat.st_size, dataset, confined)


def queue(ds: Dataset, src: Results, include_agreeing: bool) -> list[Case]:
    """The review queue (built on every run: tens of milliseconds for a hundred questions × seven methods)."""
    return build_queue(ds, src.results, src.methods, include_agreeing)


# --- where the analyst is ------------------------------------------------------------------------------------

@dataclass
class QueueState:
    """One dataset's queue walk in this session."""
    cursor: str | None = None
    trail: list[str] = field(default_factory=list)           # cases visited before, for Previous
    skipped: set[str] = field(default_factory=set)
    form: tuple[str, str | None] | None = None               # (case, uid of the version the form was loaded from)
    form_for: str | None = None                              # the analyst whose label the form was loaded for
    picked_for: str | None = None                            # the analyst the page picked the case for (None: they did)
    flashes: list[str] = field(default_factory=list)         # toasts for the next run
    problems: tuple[str, list[str]] | None = None            # (case, why the last save was refused)
    conflict: tuple[str, str, LabelDraft] | None = None      # (case, what happened, the draft that was not saved)
    #: case -> (the label version the form was loaded from, what the form held): a form left unsaved (another page,
    #: Next, Previous) opens again as it was left; dropped when saved or when someone else's label replaces it
    drafts: dict[str, tuple[str | None, view.FormValues]] = field(default_factory=dict)
    scroll: int = 0                                          # moves so far: the page scrolls to the case after one


def state(dataset: str) -> QueueState:
    return st.session_state.setdefault(STATE_KEY, {}).setdefault(dataset, QueueState())


@dataclass(frozen=True)
class Context:
    """What the form's callbacks need from the run that drew the form."""
    store: LabelStore
    dataset: Dataset
    methods: list[str]
    order: list[str]      # every case of the queue, filters aside, in queue order
    eligible: list[str]   # the filtered queue
    analyst_key: str


def go(qs: QueueState, target: str, remember: bool = True) -> None:
    if remember and qs.cursor and qs.cursor != target:
        qs.trail = (qs.trail + [qs.cursor])[-TRAIL:]
    qs.cursor, qs.picked_for = target, None
    qs.problems = qs.conflict = None
    qs.scroll += 1


def move(ctx: Context, qs: QueueState, direction: str) -> None:
    """previous: the case seen before (else the one above in the queue); next: the next in the filtered queue;
    skip (and save): the next not skipped in this session, this one marked skipped."""
    current = qs.cursor
    if direction == "previous":
        while qs.trail and (qs.trail[-1] == current or qs.trail[-1] not in ctx.order):
            qs.trail.pop()
        target = qs.trail.pop() if qs.trail else view.previous_case(ctx.order, ctx.eligible, current)
        if target is None:
            qs.flashes.append("This is the top of the queue.")
        else:
            go(qs, target, remember=False)
        return
    if direction == "skip" and current:
        qs.skipped.add(current)
    pool = ctx.eligible if direction == "next" else [q for q in ctx.eligible if q not in qs.skipped]
    target, wrapped = view.next_case(ctx.order, pool, current)
    if target is None:
        passed = direction != "next" and set(ctx.eligible) & qs.skipped - {current}
        qs.flashes.append("No other case in the queue" + (" but skipped ones." if passed else "."))
        return
    if wrapped:
        qs.flashes.append("Back to the top of the queue.")
    go(qs, target)


def keep_draft(qs: QueueState, case_id: str, loaded: str | None, shown: view.FormValues,
               keys: dict[str, str]) -> None:
    """Remember the form of ``case_id`` when it differs from the label it was loaded from (``shown``)."""
    if not all(k in st.session_state for k in keys.values()):
        return
    values = form_values(keys)
    if values == shown:
        qs.drafts.pop(case_id, None)
    else:
        qs.drafts[case_id] = (loaded, values)


def moved(ctx: Context, qs: QueueState, case_id: str, loaded: str | None, shown: view.FormValues,
          keys: dict[str, str], direction: str) -> None:
    """Previous / Skip / Next: the form as it was left is kept as the case's draft, then the move."""
    keep_draft(qs, case_id, loaded, shown, keys)
    move(ctx, qs, direction)


def edited(qs: QueueState, case_id: str, loaded: str | None, shown: view.FormValues, keys: dict[str, str],
           name: str) -> None:
    """A field of the form changed (its ``on_change``: it runs before the script, so before a page switch that
    follows drops the form's widget state, and a run cut short by the switch still kept the draft)."""
    keep_draft(qs, case_id, loaded, shown, keys)
    if name in TEXT_FIELDS:
        st.session_state[EDITS] = st.session_state.get(EDITS, 0) + 1


def form_values(keys: dict[str, str]) -> view.FormValues:
    empty = view.FormValues()
    return view.FormValues(**{name: st.session_state.get(k, getattr(empty, name)) for name, k in keys.items()})


def analyst(analyst_key: str) -> tuple[str, AnalystSource]:
    """Who saves, and where that came from: the signed-in identity (``signed-in``) when the server has sign-in,
    else the name typed on the page (``self-declared``)."""
    who = signin.current()
    if who is not None:
        return who.analyst, SIGNED_IN
    return str(st.session_state.get(analyst_key) or "").strip(), SELF_DECLARED  # as the store keeps it


def save(ctx: Context, qs: QueueState, case_id: str, loaded: str | None, keys: dict[str, str]) -> None:
    """Store the form as the next version of the analyst's own label of the case, on top of ``loaded`` (the version
    the form showed): if they saved another since (another tab), nothing is stored and the form reloads that; then on
    to the next case. The analyst
    is read now (the callback runs in the session that pressed Save), never from a field when signed in."""
    name, source = analyst(ctx.analyst_key)
    draft = view.draft_from(form_values(keys), ctx.dataset.name, case_id, name)
    try:
        label = ctx.store.save(draft, dataset=ctx.dataset, methods=ctx.methods, expected=loaded,
                               analyst_source=source)
    except LabelConflict as err:
        cur = err.current
        qs.form, qs.problems = (case_id, cur.uid), None
        qs.drafts.pop(case_id, None)  # their label is in the form now; the unsaved one is shown beside it
        qs.conflict = (case_id, f"You ({md(cur.analyst)}) saved version {cur.version} of your label at "
                                f"{md(view.when(cur))} elsewhere (another tab or window) while this form was open. "
                                "This form was not saved; that version is in the form now. Look at it, then save "
                                "again to replace it.", draft)
        return
    except LabelError as err:
        qs.problems, qs.conflict = (case_id, err.problems), None
        return
    except (LabelStoreError, SQLAlchemyError) as err:
        qs.problems = (case_id, [f"Not saved: {failure(err, ctx.store.where)}"])
        return
    qs.form = (case_id, label.uid)
    qs.drafts.pop(case_id, None)
    qs.skipped.discard(case_id)
    qs.flashes.append(f"Saved {case_id}.")
    move(ctx, qs, "save")


#: Brings the case's box (``st.container(key=...)``: class ``st-key-<key>``) to the top of the main pane, and keeps
#: it there while the run that moved draws (the old case's elements are replaced, the table above redrawn): every
#: frame, scrolled again if its top left where the last scroll put it, until the run is over and the top has held
#: for 30 frames; never against the user (a wheel, touch or key stops it), at most 3 minutes. The move's number is
#: in the script, so each move draws a new body and the script runs again; a newer move's loop ends an older one.
_SCROLL = """<script>/* move {n} */ (() => {{
  const me = window.clLabelScroll = {{}};
  const off = () => {{ if (window.clLabelScroll === me) window.clLabelScroll = null; }};
  for (const ev of ["wheel", "touchstart", "keydown"]) addEventListener(ev, off, {{once: true, capture: true}});
  const busy = () => document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState !== "notRunning";
  const start = performance.now();
  let aim = null, held = 0;
  const step = () => {{
    if (window.clLabelScroll !== me) return;
    const box = document.querySelector(".st-key-{box}");
    if (box) {{
      const top = box.getBoundingClientRect().top;
      if (aim === null || Math.abs(top - aim) > 1) {{
        box.scrollIntoView({{block: "start"}});
        aim = box.getBoundingClientRect().top;
        held = 0;
      }} else held += 1;
    }}
    if ((held >= 30 && !busy()) || performance.now() - start > 180000) return off();
    requestAnimationFrame(step);
  }};
  requestAnimationFrame(step);
}})();</script>"""
#: A text box's typing reaches the server when it loses focus, which a click on a sidebar link does too: Streamlit
#: then sends the text and, a moment later, the page switch, which carries no widget of this page; when the switch
#: comes before a script run took the text in, Streamlit keeps only the switch and the text is gone (seen on a busy
#: machine). So after a text box of the form commits a change, a click on a sidebar link waits until the page's
#: count of text changes taken in (``EDITS``, a style variable: no space on the page) has caught up, at most
#: ``GUARD_WAIT_S`` (a count that never catches up only delays a click). Installed once per browser tab.
_GUARD = """<script>(() => {{
  if (window.clLabelGuard) return;
  window.clLabelGuard = true;
  const FIELD = ".st-key-{form} textarea", LINK = '[data-testid="stSidebarNav"] a', WAIT_MS = {wait_ms};
  const taken = () => parseInt(getComputedStyle(document.documentElement).getPropertyValue("--cl-label-edits")) || 0;
  let wanted = 0, since = 0, held = null, timer = null, passing = null;
  const pending = () => taken() < wanted && Date.now() - since <= WAIT_MS;
  const committed = box => {{  // as Streamlit commits a text area: on blur or Ctrl+Enter, when it changed
    if (box.clStart !== undefined && box.value !== box.clStart) {{
      wanted = Math.max(wanted, taken()) + 1;
      since = Date.now();
    }}
    box.clStart = box.value;
  }};
  document.addEventListener("focusin", e => {{
    if (e.target.matches?.(FIELD)) e.target.clStart = e.target.value;
  }}, true);
  document.addEventListener("focusout", e => {{ if (e.target.matches?.(FIELD)) committed(e.target); }}, true);
  document.addEventListener("keydown", e => {{
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && e.target.matches?.(FIELD)) committed(e.target);
  }}, true);
  document.addEventListener("click", e => {{
    const link = e.target.closest?.(LINK);
    if (!link || link === passing || !pending()) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    held = link;  // the last link clicked wins
    timer ??= setInterval(() => {{
      if (pending()) return;
      clearInterval(timer);
      timer = null;
      passing = held;
      try {{ passing.click(); }} finally {{ passing = held = null; }}
    }}, 50);
  }}, true);
}})();</script>"""
SCROLLED = f"{PAGE}.scrolled"
#: How many changes of the form's text boxes this session took in (their ``on_change``): see ``_GUARD``.
EDITS = f"{PAGE}.text_edits"
TEXT_FIELDS = ("typed", "note")
GUARD_WAIT_S = 10


def count_edits() -> None:
    """The count of text changes taken in, for the page's guard (``_GUARD``): first thing on the page, so it is
    in the browser as soon as the run that took the change in starts drawing."""
    st.html(f"<style>:root {{ --cl-label-edits: {int(st.session_state.get(EDITS, 0))}; }}</style>")


def scroll_to_case(qs: QueueState, box: str, form: str) -> None:
    """The page's script, always drawn just above the case's box (one element whatever the run, so nothing below
    it shifts): the sidebar links' guard (``_GUARD``) and, after Save & next / Previous / Skip / Next (not on the
    first draw, nor a rerun that moved nowhere), the loop that brings the new case's top into view: its form is
    otherwise left where the last one's buttons were."""
    body = _GUARD.format(form=form, wait_ms=GUARD_WAIT_S * 1000)
    moved = qs.scroll and st.session_state.get(SCROLLED) != qs.scroll
    if moved:
        body += _SCROLL.format(n=qs.scroll, box=box)
    st.html(body, unsafe_allow_javascript=True)
    if moved:  # only once the element went out: a run stopped before it scrolls in the next one
        st.session_state[SCROLLED] = qs.scroll


def jump(qs: QueueState, table_key: str, ids: list[str]) -> None:
    """A row picked in the queue table: open that case."""
    rows = st.session_state[table_key].selection.rows
    if rows and rows[0] < len(ids):
        go(qs, ids[rows[0]])


# --- live parts: what other analysts saved -------------------------------------------------------------------

@st.fragment(run_every=REFRESH_S)
def live_progress(store: LabelStore, dataset: str, cases: list[Case], analyst_key: str, overlap: int) -> None:
    """Cases with all the round's labels over ``cases``, and labels per analyst, read again every few seconds."""
    from backend.labels.team import progress
    from components.team import progress_text

    try:
        current = read(store, lambda s: s.current(dataset, [c.id for c in cases]))
    except LabelStoreError as err:
        st.error(md(str(err)), icon=":material/error:")
        return
    done = progress(current, [c.id for c in cases], overlap)
    st.progress(done["complete"] / max(done["cases"], 1), text=md(progress_text(done, analyst(analyst_key)[0])))


@st.fragment(run_every=REFRESH_S)
def live_status(store: LabelStore, dataset: str, case_id: str, loaded: str | None, analyst_key: str,
                overlap: int) -> None:
    """The case's labels so far ("1 of 2 labels"), the analyst's own versions, a warning when they saved a newer
    version elsewhere (another tab), and, once their own label is saved, the other analysts' labels (blind before:
    read again every few seconds; the form itself is not redrawn, so typed input stays)."""
    from backend.labels.team import by_case, case_progress, may_see_others

    me = analyst(analyst_key)[0]
    try:
        history: list[Label] = read(store, lambda s: s.history(dataset, case_id))
    except LabelStoreError as err:
        st.error(md(str(err)), icon=":material/error:")
        return
    case = by_case(history).get(case_id)
    mine = [lab for lab in history if lab.kind == "analyst" and me and lab.analyst == me]
    own = case.analysts.get(me) if case and me else None
    others = {a: lab for a, lab in case.analysts.items() if a != me} if case else {}
    st.caption(md(f"{case_progress(case, overlap)} · " + (view.status_text(own) if own else "not labelled by you yet")
                  + (" · adjudicated" if case and case.adjudicated and own else "")))  # blind before
    if own is not None and own.uid != loaded:
        st.warning(f"You saved version {own.version} of your label at {md(view.when(own))} elsewhere (another tab or "
                   "window), after this form was loaded. Saving now stops and shows it first.",
                   icon=":material/group:")
        if st.button(f"Load version {own.version} into the form", key=f"{PAGE}.reload"):
            state(dataset).form = (case_id, own.uid)
            st.rerun()
    if others and may_see_others(case, me):
        with st.expander(f"Other analysts' labels ({len(others)})", icon=":material/groups:"):
            for name, lab in sorted(others.items()):
                st.caption(md(f"{name} · {view.when(lab)}"))
                st.text(view.label_text(lab))
        st.caption(view.SEEN_NOTE)
    elif others:
        st.caption(f"{len(others)} other analyst{'' if len(others) == 1 else 's'} labelled this case: their labels "
                   "show once you saved yours (blind labelling).")
    view.render_history(st, mine)


# --- computing a run for the queue ---------------------------------------------------------------------------

ADOPT_KEY = f"{PAGE}.adopt"


def start_compute(selection, methods: list[str], limit: int) -> None:
    """An evaluation of the first ``limit`` questions on the session's worker thread (``evaluations.start``); the
    queue opens on it once it is done (``adopt_finished``)."""
    from components.session import evaluations

    job = evaluations.start(selection, methods, limit)
    st.session_state[ADOPT_KEY] = str(job.about.out_dir)


def adopt_finished(source_key: str, run_key: str) -> None:
    """Point the run picker at the run this page started, once it is done (call before the picker is drawn)."""
    from backend.evaluate import RESULTS
    from components.session import evaluations

    job = evaluations.current()
    if job is None or job.running or st.session_state.get(ADOPT_KEY) != str(job.about.out_dir):
        return
    del st.session_state[ADOPT_KEY]
    if job.error is None:
        st.session_state[source_key] = "run"
        st.session_state[run_key] = str(job.about.out_dir / RESULTS)


def reset_cursor(qs: QueueState) -> None:
    """Filters changed: start at the top of the filtered queue."""
    qs.cursor = None
    qs.problems = qs.conflict = None


def form_label(store: LabelStore, dataset: str, case_id: str, loaded: str | None, latest: Label | None
               ) -> Label | None:
    """The label version the form was loaded from (None: an empty form)."""
    if loaded is None:
        return None
    if latest is not None and latest.uid == loaded:
        return latest
    return next((lab for lab in read(store, lambda s: s.history(dataset, case_id)) if lab.uid == loaded), None)


# --- panels bound to the session ----------------------------------------------------------------------------

def store_panel(store_key: str, analyst_key: str) -> LabelStore:
    """Where the labels live (a setting, collapsed unless the store cannot be opened) and who labels; a store that
    cannot be opened stops the page with the reason."""
    from backend.labels.model import MAX_ANALYST

    choices = store_choices()
    pick_key = f"{store_key}.pick"
    options = choices.options + ([] if choices.fixed else [OTHER_STORE])
    picking = len(options) > 1 and (choices.fixed or bool(choices.listed))  # a picker of the stores the admin set
    if picking and st.session_state.get(pick_key) not in options:
        st.session_state[pick_key] = options[0]
    typing = not choices.fixed and (not picking or st.session_state[pick_key] == OTHER_STORE)
    asked = str(st.session_state.get(store_key) or "") if typing else (
        st.session_state[pick_key] if picking else choices.default)
    where = None
    try:  # the page's rules first (nothing created or connected to when they refuse), then the store itself
        where = location.page_location(asked, choices)
        store, failure = open_store(where), None
    except LocationRefused as err:
        store, failure = None, str(err)
    except LabelStoreError as err:
        store, failure = None, str(err)
    top = st.columns([3, 2], vertical_alignment="top")
    shown = view.shown_location(where) if store is not None and where else "cannot be opened"
    with top[0].expander(f"Label store: {md(shown)}", expanded=store is None):
        if picking:
            st.selectbox("Label store", options, key=pick_key, label_visibility="collapsed",
                         format_func=lambda s: "Another SQLite file…" if s == OTHER_STORE else
                         view.store_label(choices, s))
        elif choices.fixed:
            st.caption(f"Labels live in {md(view.shown_location(choices.default))}, set by whoever runs this server "
                       "(.streamlit/secrets.toml).")
        if typing:
            st.text_input("SQLite file (empty: the default)", key=store_key,
                          placeholder=view.shown_location(choices.default),
                          help="A new .db file in an existing folder this server opens files from, or an existing "
                               "ConflictLens label store. Database servers are set by whoever runs the server "
                               "(label_store / label_stores in .streamlit/secrets.toml; else $CONFLICTLENS_LABELS).")
        st.caption("Every save is a new version; nothing is overwritten. A URL's password is never shown.")
    who = signin.current()
    if who is not None:  # the analyst is who signed in, not a typed name
        top[1].caption("Analyst (signed in: stored with each label you save)")
        top[1].text(who.analyst)
    else:
        top[1].text_input("Your name", key=analyst_key, max_chars=MAX_ANALYST, placeholder="needed to save",
                          help="Self-declared: stored as typed with each label you save, and marked self-declared "
                               "in exports (this server has no sign-in). Remembered for this session.")
    if store is None:
        st.error(md(failure), icon=":material/error:")
        st.stop()
    return store


def versions_panel(store: LabelStore, ds: Dataset) -> None:
    """Labels saved for another version of this dataset's name (the file was edited, another file has its name, or
    they predate identities): how many, and Carry over, which copies those of unchanged questions onto this one."""
    from backend.labels.store import other_versions_text, saved_elsewhere

    key = dataset_key(ds)
    try:
        others = read(store, lambda s: s.other_versions(key))
    except LabelStoreError as err:
        st.error(md(str(err)), icon=":material/error:")
        return
    if not others:
        return
    failed = st.session_state.pop(CARRY_ERROR, None)
    with st.expander(md(saved_elsewhere(sum(o.questions for o in others), ds.name)), icon=":material/history:",
                     expanded=bool(failed)):
        st.caption(md(other_versions_text(others, ds.name)) + ". This version is " + md(key) + ". **Carry over** "
                   "copies, as new versions with a note, the labels of the questions whose id and content did not "
                   "change; the other version keeps its labels.")
        names = {o.dataset: o for o in others}
        source = others[0].dataset if len(others) == 1 else st.selectbox(
            "Carry over from", list(names), key=f"{PAGE}.carry_from")
        if names[source].unfingerprinted:
            st.caption(f"{names[source].unfingerprinted} of its labels were saved before ConflictLens recorded the "
                       "question's content: they carry over by question id only. Check them after.")
        if failed:
            st.error(md(failed), icon=":material/error:")
        st.button("Carry over", key=f"{PAGE}.carry", icon=":material/move_down:", on_click=carry,
                  args=(store, ds, source))


CARRY_ERROR = f"{PAGE}.carry_error"


def carry(store: LabelStore, ds: Dataset, source: str) -> None:
    """Carry over's callback (before the page reruns, so the queue shows the carried labels): what it did, said
    once, or why it could not."""
    try:
        report = store.carry_over(source, ds)
    except LabelError as err:
        st.session_state[CARRY_ERROR] = "; ".join(err.problems)
        return
    except (LabelStoreError, SQLAlchemyError) as err:
        st.session_state[CARRY_ERROR] = f"Not carried over: {failure(err, store.where)}"
        return
    text = report.text()
    state(dataset_key(ds)).flashes.append(text[:1].upper() + text[1:] + ".")


def compute_panel(selection, available: list[str], methods_key: str, limit_key: str) -> None:
    """Methods over the first N questions, on the session's evaluation worker; stops the page while it runs."""
    from components.failures import render_failure
    from components.session import evaluations

    job = evaluations.current()
    n = len(selection.dataset.questions)
    st.session_state[limit_key] = min(st.session_state[limit_key], n)
    cols = st.columns([7, 2, 1], vertical_alignment="bottom")
    methods = cols[0].multiselect("methods", available, key=methods_key, format_func=present.title)
    limit = cols[1].number_input(f"questions (the first N of {n})", 1, n, step=1, key=limit_key)
    if cols[2].button("Compute", type="primary", key=f"{PAGE}.compute",
                      disabled=(job is not None and job.running) or len(methods) < 2):
        start_compute(selection, methods, int(limit))
        job = evaluations.current()
    st.caption(f"Model {md(selection.model.model)} (the sidebar's). The default methods need few calls and often "
               "disagree; at least two are needed. The run is saved under the cache folder's evaluations/ and the "
               "queue opens on it when it is done.")
    if job is not None and job.running:
        from components.session.progress import follow

        follow(job, "Starting the evaluation", note=None)
        st.stop()
    if job is not None and job.error:
        render_failure(st, "The evaluation failed:", job.error)


OTHER = "other"  # the run picker's "a results file elsewhere"


def run_panel(dataset: str, run_key: str, path_key: str) -> Results | None:
    """The runs of ``dataset`` under the cache folder (newest first) or a results file named by path; None (with
    what to do) when there is none or it cannot be read."""
    runs = {str(r.path): r.label for r in find_runs(dataset)}
    options = list(runs) + [OTHER]
    if st.session_state.get(run_key) not in options:
        st.session_state[run_key] = options[0]
    path = st.selectbox(f"Evaluation run of {md(dataset)} (newest first)", options, key=run_key,
                        format_func=lambda p: runs.get(p, "A results file elsewhere…"))
    typed = path == OTHER  # the page's own runs are read as they are; a typed path only inside the open folders
    if typed:
        path = st.text_input("results.jsonl, or the folder holding it", key=path_key,
                             placeholder="/path/to/out/results.jsonl")
        if not path.strip():
            st.info(f"No evaluation run of {md(dataset)} is selected. Compute one here (**Compute now**), run one on "
                    "the Evaluate page, or run `python -m backend evaluate --dataset D --methods M1,M2 --out DIR` "
                    "and enter DIR above.", icon=":material/info:")
            return None
    try:
        return source(path, dataset, confined=typed)
    except ResultsError as err:
        st.error(md(str(err)), icon=":material/error:")
        return None


def label_panel(store: LabelStore, ds: Dataset, case: Case, latest: Label | None, methods: list[str],
                order: list[str], eligible: list[str], analyst_key: str, overlap: int = 1) -> None:
    """The analyst's own label of the current case (``latest``: their current version): the case's labels so far
    (live, blind), a conflict or the reasons a save was refused, the form."""
    key = dataset_key(ds)  # labels are this version's (backend.labels.identity), never another file's of this name
    qs = state(key)
    me = analyst(analyst_key)[0]
    if qs.form is None or qs.form[0] != case.id or qs.form_for != me:  # another case, or a name typed or changed
        qs.form, qs.form_for = (case.id, latest.uid if latest else None), me
    loaded = qs.form[1]
    if qs.conflict and qs.conflict[0] == case.id:
        st.warning(qs.conflict[1], icon=":material/warning:")
        st.expander("Your label that was not saved").text(view.label_text(qs.conflict[2]))
    live_status(store, key, case.id, loaded, analyst_key, overlap)
    for problem in qs.problems[1] if qs.problems and qs.problems[0] == case.id else []:
        st.error(md(problem), icon=":material/error:")
    if not analyst(analyst_key)[0].strip():
        st.caption("Enter your name above to save labels.")
    ctx = Context(store, ds, methods, order, eligible, analyst_key)
    keys = view.form_keys(PAGE, case.id, loaded)
    shown = view.prefill(case, form_label(store, key, case.id, loaded, latest))
    draft = qs.drafts.get(case.id)
    if draft is not None and draft[0] != loaded:  # a label saved since the draft was left: the form shows that
        qs.drafts.pop(case.id)
        draft = None
    if draft is not None:
        st.caption("Your unsaved changes to this label are back in the form.")
    view.render_form(st, case, draft[1] if draft else shown, keys, methods, PAGE,
                     on_save=partial(save, ctx, qs, case.id, loaded, keys),
                     on_move=partial(moved, ctx, qs, case.id, loaded, shown, keys),
                     on_edit=partial(edited, qs, case.id, loaded, shown, keys))
    keep_draft(qs, case.id, loaded, shown, keys)
