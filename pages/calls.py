"""Model calls: every call of this session (by default the selected question's), filterable, with the prompt and
response of any one; the on-disk reply cache."""

import streamlit as st

from backend import deployment
from backend.deployment import shown_path
from backend.report.text import plural
from components.layout import card_columns
from components import calls as view
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.present import title
from components.session import signin
from components.session.runs import call_cache, call_log
from components.session.state import current_selection, init_page_state, key

PAGE = "calls"
ensure_navigation()
init_page_state(PAGE, {"methods": [], "steps": [], "reads": [], "this_question": True})
st.title("Model calls")
every = call_log().all()
selection = current_selection()
calls = every
if selection is not None:
    here = f"{md(selection.dataset.name)} · {md(selection.question.id)}"
    if st.toggle(f"Only the selected question ({here})", key=key(PAGE, "this_question"),
                 help="Off: every call of this session, including dataset-level work such as RA-RAG's stage 1."):
        calls = view.for_question(every, selection.dataset.name, selection.question.id)
numbers = view.summary(calls)
for col, (label, value) in zip(card_columns(st, len(numbers), "numbers"), numbers.items()):  # wrap, not cut
    col.metric(label, value)

if not calls:
    st.info("No model calls yet for this question in this session. Run methods on the Inspect page."
            if every else "No model calls yet in this session. Run methods on the Inspect page.")
else:
    filters = st.columns(3)
    methods = filters[0].multiselect("method", sorted({c.method or "—" for c in calls}), key=key(PAGE, "methods"),
                                      format_func=title)
    steps = filters[1].multiselect("step", sorted({c.step for c in calls}), key=key(PAGE, "steps"))
    reads = filters[2].multiselect("read", view.READS, key=key(PAGE, "reads"),
                                   help="How the method's reader read the reply: exact (the format asked for), lenient "
                                        "(read with an assumption), unreadable (the method used its default), "
                                        f"{view.NOT_READ} (no reply).")
    frame = view.calls_frame(calls, methods, steps, reads)
    st.dataframe(frame, hide_index=True, height=min(400, 40 + 35 * len(frame)))
    chosen = st.selectbox("show call", frame["id"].tolist(), key=key(PAGE, "call"))
    call = next((c for c in calls if c.id == chosen), None)
    if call is not None:
        view.render_call(st, call)

st.subheader("Cache")
stats = call_cache().stats()
CONFIRM = key(PAGE, "confirm_clear")


def _clear_cache() -> None:
    st.session_state[key(PAGE, "cleared")] = call_cache().clear()
    st.session_state[CONFIRM] = False


cols = st.columns(2)
# On a team's server (sign-in, or any deployment setting) the cache holds every analyst's replies, some paid for:
# no page empties it. Its operator does, with `python -m backend cache clear`.
shared = signin.configured() or deployment.current().configured
if shared:
    st.session_state[CONFIRM] = False
    cols[0].caption("This server's reply cache is shared by its team: only whoever runs the server clears it "
                    "(`python -m backend cache clear`).")
elif cols[0].button("Clear the model-call cache…", key=key(PAGE, "clear_cache"), disabled=not stats["entries"]):
    st.session_state[CONFIRM] = True
cols[1].button("Clear this session's call list", key=key(PAGE, "clear_log"), on_click=lambda: call_log().clear())
if st.session_state.get(CONFIRM) and not shared:
    with st.container(border=True):
        st.warning(f"This deletes {plural(stats['entries'], 'cached reply', 'cached replies')}: re-running any "
                   "question will call the model again (a hosted model bills those calls).")
        confirm = st.columns(2)
        confirm[0].button(f"Delete {plural(stats['entries'], 'reply', 'replies')}", type="primary",
                          key=key(PAGE, "confirm"), on_click=_clear_cache)
        confirm[1].button("Cancel", key=key(PAGE, "cancel"), on_click=lambda: st.session_state.update({CONFIRM: False}))
if (cleared := st.session_state.pop(key(PAGE, "cleared"), None)) is not None:
    st.success(f"Deleted {plural(cleared, 'cached reply', 'cached replies')}.")
    stats = call_cache().stats()
st.caption(f"{plural(stats['entries'], 'cached reply', 'cached replies')} in {md(shown_path(stats['path']))} "
           f"({stats['bytes'] / 1e6:.1f} MB). Re-running a question answers from here with zero model calls.")
