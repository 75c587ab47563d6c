"""Model calls: every call of this session, filterable, with the prompt and response of any one."""

import streamlit as st

from components import calls as view
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.runs import call_cache, call_log
from components.session.state import init_page_state, key

PAGE = "calls"
ensure_navigation()
init_page_state(PAGE, {"methods": [], "steps": []})
st.title("Model calls")
calls = call_log().all()
numbers = view.summary(calls)
for col, (label, value) in zip(st.columns(len(numbers)), numbers.items()):
    col.metric(label, value)

if not calls:
    st.info("No model calls yet in this session. Run methods on the Inspect page.")
else:
    filters = st.columns(2)
    methods = filters[0].multiselect("method", sorted({c.method or "—" for c in calls}), key=key(PAGE, "methods"))
    steps = filters[1].multiselect("step", sorted({c.step for c in calls}), key=key(PAGE, "steps"))
    frame = view.calls_frame(calls, methods, steps)
    st.dataframe(frame, hide_index=True, height=min(400, 40 + 35 * len(frame)))
    chosen = st.selectbox("show call", frame["id"].tolist(), key=key(PAGE, "call"))
    call = next((c for c in calls if c.id == chosen), None)
    if call is not None:
        st.caption(f"{call.method} · {call.step} · task {call.task} · {md(call.model)} · "
                   f"{'cache hit' if call.cache_hit else f'{call.latency_s:.3f} s'} · parents: "
                   f"{', '.join(call.parents) or 'none'}")
        for message in call.messages:
            st.markdown(f"**{md(message.get('role', '?'))}**")
            st.code(message.get("content", ""), language=None, wrap_lines=True)
        st.markdown("**response**" if not call.error else "**error**")
        st.code(call.response if not call.error else call.error, language=None, wrap_lines=True)

st.subheader("Cache")


def _clear_cache() -> None:
    st.session_state[key(PAGE, "cleared")] = call_cache().clear()


cols = st.columns(2)
cols[0].button("Clear the model-call cache", key=key(PAGE, "clear_cache"), on_click=_clear_cache)
cols[1].button("Clear this session's call list", key=key(PAGE, "clear_log"), on_click=lambda: call_log().clear())
if (cleared := st.session_state.pop(key(PAGE, "cleared"), None)) is not None:
    st.success(f"Deleted {cleared} cached replies.")
stats = call_cache().stats()
st.caption(f"{stats['entries']} cached replies in {md(stats['path'])} ({stats['bytes'] / 1e6:.1f} MB). "
           "Re-running a question answers from here with zero model calls.")
