"""Model-call log shaping: calls -> frames and summary numbers (pure); one call verbatim; and a run's calls while it
is in flight (``progress_text``).

A local model's calls say what a hosted model's never need to (``call_notes``): a reply that looped until max_tokens
(``LLMCall.cut_off``: the method got no reply; its raw text is shown, as text), a prompt cut to fit the model's
context (``LLMCall.prompt_cut``, ``backend.llm.local.context.PromptCut``), the server's own time and its queue."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pandas as pd
from pydantic import ValidationError

from backend.cost import RunEstimate, cost_text, seconds_text
from backend.llm.local.context import RULE, PromptCut
from backend.llm.local.runaway import repetition
from backend.llm.pricing import is_free
from backend.methods import SPECS, title as method_title
from backend.report.text import plural
from backend.schema import LLMCall
from components.safe import md

COLUMNS = ["id", "dataset", "question", "method", "step", "role", "task", "model", "cache hit", "attempts", "prompt tokens",
           "completion tokens", "cost", "latency s", "read", "read note", "cut", "error"]
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
             "read note": c.read_note or "", "cut": cut_label(c), "error": c.error or ""}
            for c in calls
            if (not methods or (c.method or "—") in methods) and (not steps or c.step in steps)
            and (not reads or read_label(c) in reads)]
    return pd.DataFrame(rows, columns=COLUMNS)


def cut_label(call: LLMCall) -> str:
    """What was cut: "prompt" (to fit the context), "reply" (it looped until max_tokens), both, or ""."""
    return ", ".join(what for what, cut in (("prompt", call.prompt_cut), ("reply", call.cut_off is not None)) if cut)


# -- what a local model's call says besides its reply ------------------------------------------------------------

_REPEATING = re.compile(r"while repeating (['\"])(.*?)\1")


def repeating(call: LLMCall) -> str | None:
    """The words a cut-off reply kept repeating (``backend.llm.local.runaway``), or None when it is not cut off."""
    if call.cut_off is None:
        return None
    if (unit := repetition(call.cut_off)) is not None:
        return unit
    found = _REPEATING.search(call.read_note or "")  # the client's note names it when the kept text is clipped
    return found.group(2) if found else None


def _over_reply_limit(call: LLMCall) -> bool:
    """Was ``call`` cut off for being longer than any task's reply (``client.MAX_REPLY_CHARS``), not at max_tokens?"""
    return "cut off at the reply limit" in (call.read_note or "")


def cut_off_text(call: LLMCall) -> str | None:
    """"cut off at max_tokens while repeating 'the answer is': the method got no reply (its reader's default)", or
    None when the reply was not cut off."""
    if call.cut_off is None:
        return None
    if _over_reply_limit(call):
        return (f"{call.read_note.split(': read as no reply')[0]}: the method got no reply (it used its reader's "
                "default); the first 2,000 characters the model wrote are below, as it wrote them")
    unit = repeating(call)
    if unit:
        what = f"while repeating {unit!r}"
    elif "inside the JSON object" in (call.read_note or ""):  # structured output, cut off mid-object
        what = "inside the JSON object it was asked for"
    else:
        what = "while repeating itself"
    return (f"cut off at max_tokens {what}: the method got no reply (it used its reader's default); the text the "
            "model wrote is below, as it wrote it")


def prompt_cut_text(call: LLMCall) -> str | None:
    """``PromptCut.note()`` of the call's cut prompt (what was cut to fit the model's context), or None."""
    if not call.prompt_cut:
        return None
    try:
        return PromptCut.model_validate(call.prompt_cut).note()
    except ValidationError:  # a record written by another version: say what is known
        return "prompt cut to fit the model's context"


def server_text(call: LLMCall) -> str | None:
    """The local server's account of the call: "server 8.13 s · waited 0.20 s for a free slot · 640 prompt tokens
    from the server's prompt cache" (None: nothing reported)."""
    parts = []
    if call.server_s is not None:
        parts.append(f"server {call.server_s:.2f} s")
    if call.queued_s:
        parts.append(f"waited {call.queued_s:.2f} s for a free slot")
    if call.cached_tokens:
        parts.append(f"{call.cached_tokens:,} prompt tokens from the server's prompt cache")
    if call.finish_reason == "length" and call.cut_off is None:
        parts.append(f"stopped at max_tokens ({call.completion_tokens:,} tokens): the reply may be cut short")
    return " · ".join(parts) or None


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
    if (timing := server_text(call)) is not None:
        st.caption(md(timing))
    if (cut := prompt_cut_text(call)) is not None:  # the messages below are the ones sent: cut
        st.info(md(f"The prompt below is as sent: {cut}. The rule: {RULE}."), icon=":material/content_cut:")
    for message in call.messages:
        st.markdown(f"**{md(message.get('role', '?'))}**")
        st.code(message.get("content", ""), language=None, wrap_lines=True)
    if (looped := cut_off_text(call)) is not None:  # its text is model output: a code block, never Markdown or HTML
        st.warning(md(looped), icon=":material/warning:")
        st.markdown("**response as written (cut off, not read)**")
        st.code(call.cut_off, language=None, wrap_lines=True)
    else:
        st.markdown("**response**" if not call.error else "**error**")
        st.code(call.response if not call.error else call.error, language=None, wrap_lines=True)
    if call.read_status is not None:  # how the method's reader read it (the note: what was assumed, or the default)
        st.caption(f"read: {call.read_status}" + (" (JSON schema asked for)" if call.structured else "")
                   + (f" — {md(call.read_note)}" if call.read_note else ""))


# -- a run in flight ---------------------------------------------------------------------------------------------

def progress_text(calls: Sequence[LLMCall], expected: RunEstimate | None = None) -> str:
    """A run's model calls while it is in flight: "Model calls: 12 done (5 from the cache, 1 failed), of 14–20
    expected (~1 min at measured speeds) · 2 cut off at max_tokens · 3 waited 14 s in all for a free slot of the
    server". ``expected``: the run's estimate, when one was made for exactly this run."""
    done = len(calls)
    text = f"Model calls: {done:,} done" if done else "Model calls: none done yet"
    extra = [f"{n:,} from the cache" for n in [sum(c.cache_hit for c in calls)] if n]
    extra += [f"{n:,} failed" for n in [sum(bool(c.error) for c in calls)] if n]
    text += f" ({', '.join(extra)})" if extra else ""
    if expected is not None and expected.calls:
        text += f", of {_span(expected.calls_min, expected.calls)} expected"
        if expected.seconds is not None:
            text += f" (~{seconds_text(expected.seconds)} at measured speeds)"
    oversized = sum(c.cut_off is not None and _over_reply_limit(c) for c in calls)
    if cut := sum(c.cut_off is not None for c in calls) - oversized:
        text += f" · {cut:,} cut off at max_tokens (looping)"
    if oversized:
        text += f" · {oversized:,} longer than the reply limit (cut off)"
    if prompts := sum(bool(c.prompt_cut) for c in calls):
        text += f" · {plural(prompts, 'prompt')} cut to fit the context"
    waited = [c.queued_s for c in calls if c.queued_s]
    if sum(waited) >= 1:
        text += f" · {len(waited):,} waited {seconds_text(sum(waited))} in all for a free slot of the server"
    return text


def _span(low: int, high: int) -> str:
    return f"{high:,}" if low == high else f"{low:,}–{high:,}"


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
