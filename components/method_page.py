"""The generic method page's panels: what any registered method answered and why, from its result alone — its
answers (and verdict with the truth on), the trace's key facts, the whole trace, and its calls in the paper's words
(``MethodSpec.step_roles``). A method with a view of its own (``components/<home>.py``) draws its own panels."""

from __future__ import annotations

import pandas as pd

from backend.report.palette import VERDICT_COLORS
from backend.report.text import plural
from backend.schema import LLMCall, MethodResult, Question
from backend.scoring import verdict
from components.calls import cost_line, render_raw_calls, roles_frame

def facts_frame(result: MethodResult) -> pd.DataFrame:
    facts = result.trace.key_facts() if result.trace is not None else {}
    return pd.DataFrame({"fact": list(facts), "value": list(facts.values())})


def render_panels(st, result: MethodResult, question: Question, show_truth: bool, page: str) -> None:
    st.subheader("Answer")
    if result.abstained or not result.answers:
        st.badge("abstained", color="gray")
    for answer in result.answers:
        st.text(answer)  # model output: text, never markup
    if show_truth and (v := verdict(result, question)) not in ("abstained", "error"):
        st.badge(v, color=VERDICT_COLORS[v])
    facts = facts_frame(result)
    if len(facts):
        st.subheader("Key facts")
        st.dataframe(facts, hide_index=True)
    with st.expander("The whole trace (JSON)"):
        st.json(result.trace.model_dump(mode="json"), expanded=False)
    render_calls(st, result.calls)


def render_calls(st, calls: list[LLMCall]) -> None:
    st.subheader(f"Model calls ({plural(len(calls), 'call')})")
    st.caption(cost_line(calls))
    if calls:
        st.dataframe(roles_frame(calls), hide_index=True)
    render_raw_calls(st, calls)
