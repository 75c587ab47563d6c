"""Cost before a run, as the pages show it (pure): the estimate (``backend.cost.RunEstimate``) as one line and a
table per method, whether the run needs the user's confirmation, and the confirmation itself.

A hosted model's run is confirmed when its estimate is above the sidebar's threshold or its price is unknown (the
session then asks once per model: ``components.session.cost``); ``always`` (influence, a dataset attack) asks whatever
the estimate; the offline model costs $0 and says so. A local model (llama.cpp on this CPU) costs $0 too and is never
confirmed, but its estimate gives the expected time at the speeds measured on this machine, per method as well."""

from __future__ import annotations

import pandas as pd

from backend.cost import RunEstimate, seconds_text
from backend.llm.pricing import usd
from backend.methods import title as method_title
from components.safe import md

COLUMNS = ["calls", "prompt tokens", "completion tokens", "cost", "at most", "assumed"]
#: A local model's estimate also gives each method's time at the measured speeds (and with every reply at its limit).
TIME_COLUMNS = ["time", "time at most"]


def _calls(low: int, high: int) -> str:
    return f"{high:,}" if low == high else f"{low:,}–{high:,}"


def estimate_frame(estimate: RunEstimate) -> pd.DataFrame:
    """One row per method (the index: the method's title): its calls (fewest–most where the replies decide), tokens, cost at the assumed reply
    lengths and at most (every reply at its token limit), and what the estimate assumed. A local model's gives the
    time at the measured speeds instead of the cost at most ("not measured yet" before the first calls)."""
    rows = []
    # a local model: $0 at most too, so its time in that place
    columns = ([c for c in COLUMNS if c not in ("at most", "assumed")] + TIME_COLUMNS + ["assumed"] if estimate.local
               else COLUMNS)
    for name, m in estimate.methods.items():
        title = method_title(name)
        if not m.estimated:
            rows.append({"method": title, "calls": "not estimated", "prompt tokens": None, "completion tokens": None,
                         "cost": "—", "at most": "—", "time": "—", "time at most": "—",
                         "assumed": "the method declares no estimate"})
            continue
        rows.append({"method": title, "calls": _calls(m.calls_min, m.calls), "prompt tokens": m.prompt_tokens,
                     "completion tokens": m.completion_tokens,
                     "cost": usd(m.cost_usd) if estimate.priced else "price unknown",
                     "at most": usd(m.ceiling_usd) if estimate.priced else "price unknown",
                     "time": _time(m.seconds), "time at most": _time(m.seconds_max),
                     "assumed": "; ".join(m.notes)})
    titles = [row.pop("method") for row in rows]
    return pd.DataFrame(rows, columns=columns, index=pd.Index(titles, name="method"))


def _time(seconds: float | None) -> str:
    return "not measured yet" if seconds is None else f"~{seconds_text(seconds)}"


def needs_confirming(estimate: RunEstimate | None, threshold_usd: float, always: bool = False) -> bool:
    """A hosted model's run the user must confirm: ``always``, else above the threshold or at an unknown price."""
    if estimate is None or estimate.free:
        return False
    if always:  # even when no method could estimate its calls
        return True
    return bool(estimate.calls) and estimate.needs_confirmation(threshold_usd)


def confirm_label(estimate: RunEstimate, once: bool = False) -> str:
    """The confirmation checkbox's words: what will be sent, to which model, for how much."""
    if not estimate.priced and once:
        return f"Yes, send to {md(estimate.model)} at an unknown price (asked once this session)"
    cost = usd(estimate.cost_usd) if estimate.priced else "price unknown"
    return f"Yes, send up to {estimate.calls:,} calls to {md(estimate.model)} ({cost})"


def reason(estimate: RunEstimate, threshold_usd: float, always: bool) -> str:
    """Why the run asks first."""
    if not estimate.priced:
        return f"The price of {md(estimate.model)} is unknown (litellm's model price map does not list it)."
    if always:
        return "This runs the methods many times over: it always asks first with a hosted model."
    return f"The estimate is above your threshold of {usd(threshold_usd)} (sidebar, Model)."


def render_estimate(st, estimate: RunEstimate | None, threshold_usd: float, key: str, always: bool = False,
                    asked: bool = True) -> bool:
    """The estimate above a Run button (nothing for none: the offline model when the page says so itself) and, when
    the run needs it and ``asked`` (False: the user already agreed, e.g. to an unknown price for the session), the
    confirmation; True when the run may start."""
    if estimate is None:
        return True
    # unpriced: the headline says "price unknown" and the warning below says why
    note = estimate.price_note[:1].upper() + estimate.price_note[1:]  # a sentence of its own
    st.caption(md(f"Estimate: {estimate.headline()}." + (f" {note}." if estimate.priced else "")))
    if estimate.local and (note := estimate.time_note()):
        st.caption(md(note))
    if estimate.free and not estimate.local:
        return True
    with st.expander("Estimate per method", expanded=False):
        st.dataframe(estimate_frame(estimate))
        st.caption("Calls where the replies decide (an early stop, a reflection) are counted as if they all happen: "
                   "the range is fewest–most. Prompt tokens come from the prompts the methods would send, counted "
                   "with the model's tokenizer; replies are assumed as long as each prompt asks ('assumed'); 'at "
                   "most': every reply at its token limit. Calls the reply cache can answer cost nothing"
                   + (" and take no time." if estimate.local else "."))
    if estimate.free:  # a local model: $0, nothing to confirm
        return True
    if not asked or not needs_confirming(estimate, threshold_usd, always):
        return True
    st.warning(reason(estimate, threshold_usd, always), icon=":material/payments:")
    return bool(st.checkbox(confirm_label(estimate, once=not always), key=key))
