"""Model-call log shaping: calls -> frames and summary numbers (pure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from backend.cost import cost_text
from backend.llm.pricing import is_free
from backend.methods import SPECS, title as method_title
from backend.report.text import plural
from backend.schema import LLMCall
from components.safe import md

COLUMNS = ["id", "dataset", "question", "method", "step", "role", "task", "model", "cache hit", "attempts", "prompt tokens",
           "completion tokens", "cost", "latency s", "read", "read note", "error"]
#: how the question column reads for a method's dataset-level work (RA-RAG's stage 1)
DATASET_LEVEL = "(dataset-level)"


def for_question(calls: list[LLMCall], dataset: str, question_id: str) -> list[LLMCall]:
    """The calls that served one question of one dataset (its methods' own calls, not dataset-level work)."""
    return [c for c in calls if c.dataset == dataset and c.question_id == question_id]


def role(call: LLMCall) -> str:
    """What the call is in its method's paper (``MethodSpec.step_roles``); its step when none is declared."""
    return SPECS[call.method].role(call.step) if call.method in SPECS else call.step


#: how the read column reads for a call without a reply (it failed) or recorded before reads were
NOT_READ = "—"
READS = ["exact", "lenient", "unreadable", NOT_READ]


def read_label(call: LLMCall) -> str:
    """How the call's reply was read (``LLMCall.read_status``): exact, lenient, unreadable, or ``NOT_READ``."""
    return call.read_status or NOT_READ


def calls_frame(calls: list[LLMCall], methods: list[str] | None = None, steps: list[str] | None = None,
                reads: list[str] | None = None) -> pd.DataFrame:
    """One row per call, filtered by method, step and read status (``read_label``); an empty filter keeps all."""
    rows = [{"id": c.id, "dataset": c.dataset or "—", "question": c.question_id or DATASET_LEVEL,
             "method": c.method or "—", "step": c.step, "role": role(c), "task": c.task, "model": c.model,
             "cache hit": c.cache_hit, "attempts": c.attempts, "prompt tokens": c.prompt_tokens,
             "completion tokens": c.completion_tokens, "cost": cost_text([c]), "latency s": round(c.latency_s, 4),
             "read": read_label(c),
             "read note": c.read_note or "", "error": c.error or ""}
            for c in calls
            if (not methods or (c.method or "—") in methods) and (not steps or c.step in steps)
            and (not reads or read_label(c) in reads)]
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(calls: list[LLMCall]) -> dict[str, float | str]:
    return {"calls": len(calls), "cache hits": sum(c.cache_hit for c in calls),
            "uncached": sum(not c.cache_hit for c in calls),
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls),
            "model seconds": round(sum(c.latency_s for c in calls if not c.cache_hit), 2),
            "errors": sum(bool(c.error) for c in calls),
            "unreadable replies": sum(c.read_status == "unreadable" for c in calls),
            "cost": cost_text(calls) if calls else "$0"}


def cost_line(calls: list[LLMCall]) -> str:
    """Tokens in / out, model time (cache hits cost no time) and, for a hosted model, the cost over the calls."""
    if not calls:
        return "no call records"
    cached = sum(c.cache_hit for c in calls)
    return (f"{sum(c.prompt_tokens for c in calls):,} tokens in · {sum(c.completion_tokens for c in calls):,} out · "
            f"{sum(c.latency_s for c in calls if not c.cache_hit):.2f} s model time"
            + ("" if all(is_free(c.model) for c in calls) else f" · {cost_text(calls)}")
            + (f" · {cached} of {len(calls)} from the cache" if cached else ""))


def render_call(st, call: LLMCall) -> None:
    """One call verbatim: who made it, each prompt message, the response (or the error). Text as code blocks."""
    who = method_title(call.method) if call.method else "—"
    st.caption(f"{md(who)} · {md(call.step)} · task {md(call.task)} · {md(call.model)} · "
               f"{'cache hit' if call.cache_hit else f'{call.latency_s:.3f} s'} · parents: "
               f"{md(', '.join(call.parents) or 'none')}")
    for message in call.messages:
        st.markdown(f"**{md(message.get('role', '?'))}**")
        st.code(message.get("content", ""), language=None, wrap_lines=True)
    st.markdown("**response**" if not call.error else "**error**")
    st.code(call.response if not call.error else call.error, language=None, wrap_lines=True)
    if call.read_status is not None:  # how the method's reader read it (the note: what was assumed, or the default)
        st.caption(f"read: {call.read_status}" + (" (JSON schema asked for)" if call.structured else "")
                   + (f" — {md(call.read_note)}" if call.read_note else ""))


ROLE_COLUMNS = ["call", "step", "role", "prompt tokens", "completion tokens", "latency s", "cached", "read", "error"]


def roles_frame(calls: Sequence[LLMCall], role_of: Callable[[LLMCall], str] = role) -> pd.DataFrame:
    """One method's calls in the order given, one row each: what it is (``role_of``), tokens, latency, cache, error."""
    rows = [{"call": i, "step": c.step, "role": role_of(c), "prompt tokens": c.prompt_tokens,
             "completion tokens": c.completion_tokens, "latency s": round(c.latency_s, 3), "cached": c.cache_hit,
             "read": read_label(c), "error": c.error or ""} for i, c in enumerate(calls, start=1)]
    return pd.DataFrame(rows, columns=ROLE_COLUMNS)


def render_raw_calls(st, calls: Sequence[LLMCall], role_of: Callable[[LLMCall], str] = role) -> None:
    """Every call's prompt and raw response, verbatim, collapsed, each titled by what it is."""
    with st.expander(f"Raw prompts and outputs ({plural(len(calls), 'call')})"):
        if not calls:
            st.text("No call records.")
        for i, call in enumerate(calls, start=1):
            st.markdown(f"**Call {i}: {md(role_of(call))}**")
            render_call(st, call)
