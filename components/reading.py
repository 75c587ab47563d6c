"""Which of a method's decisions depend on how its replies were read (``backend.methods.reading``), where the user
looks at the method: its page, and Inspect per method, beside the read-status note (``components.read_status``).

Every decision a method reads from a reply (BRIDGE's responder option, RC-RAG's keep or discard, a MADAM-RAG agent's
answer...) is read both the tolerant way and the paper's; a result lists the decisions the reading it was not run
with would have read differently (``MethodResult.reading_differences``). The line says so, e.g. "2 of this method's
9 decisions depend on the tolerant reader: responder: option D (paper: nothing (unreadable)); …"; with no such
decision, a quiet caption (or nothing, when the method read no decision). Pure shaping (``dependent_text``,
``difference_text``, ``quiet_text``: ``backend.report.reading``'s, one wording with the HTML report; here
``differences_frame`` and the caption for several methods) plus two small ``render_*`` functions.

The values come from model replies: every line goes through ``components.safe.md`` and the table is a dataframe
(text, never Markdown or HTML).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from backend.methods import title as method_title
from backend.methods.reading import other
from backend.report.reading import HOW, READER, RULE, VALUE_CHARS, decisions, dependent_text, difference_text, quiet_text
from backend.report.text import plural
from backend.schema import MethodResult
from components.safe import md

# the line's words are the report's (``backend.report.reading``): one wording for the app, the HTML report and the
# terminal
__all__ = ["HOW", "READER", "RULE", "VALUE_CHARS", "decisions", "dependent_text", "difference_text", "quiet_text",
           "read_phrase", "quiet_many_text", "differences_frame", "render_reading", "render_results_reading"]

#: How a caption says what a reading did ("Replies read the tolerant way").
READ = {"tolerant": "read the tolerant way", "paper": "read by each paper's own rule"}


def read_phrase(reading: str | None) -> str:
    """"read the tolerant way" / "read by each paper's own rule": how a caption says what a reading did."""
    return READ.get(reading or "tolerant", f"read the {reading} way")


def _other_rule(reading: str) -> str:
    return RULE.get(other(reading), "the other reading") if reading in RULE else "the other reading"


def quiet_many_text(results: Mapping[str, MethodResult]) -> str | None:
    """One caption for the methods of a page that shows several (Inspect) with no decision depending on the
    reading: "Replies read the tolerant way: no decision of Closed book or Vanilla RAG (12 in all) would be read
    otherwise by the paper's rule."; None when there is none such."""
    quiet = {name: r for name, r in results.items() if quiet_text(r) is not None}
    if not quiet:
        return None
    readings = {r.reading for r in quiet.values()}
    reading = readings.pop() if len(readings) == 1 else None
    names = [method_title(name) for name in quiet]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    total = sum(r.decisions_read for r in quiet.values())
    how = HOW.get(reading, "Replies read as each run says") if reading else "Replies read as each run says"
    rule = _other_rule(reading) if reading else "the other reading"
    return f"{how}: no decision of {listed} ({total} in all) would be read otherwise by {rule}."


def differences_frame(result: MethodResult) -> pd.DataFrame:
    """Every difference as a row: the step, the call, the decision, what this run's reading read ("read (tolerant,
    used)") and what the other would have ("read (paper)")."""
    used, unused = f"read ({result.reading}, used)", f"read ({other(result.reading)})"  # type: ignore[arg-type]
    rows = [{"step": d.step, "call": d.call_id or "—", "decision": d.what or "—", used: d.used, unused: d.other}
            for d in result.reading_differences]
    return pd.DataFrame(rows, columns=["step", "call", "decision", used, unused])


def render_reading(st, result: MethodResult, title: str | None = None, quiet: bool = True) -> None:
    """The decisions that depend on the reading, in a note with every difference in a table one click away; with
    none, a quiet caption (``quiet``), or nothing when the method read no decision. ``title``: the method's name,
    for a page that shows several."""
    prefix = f"{title}: " if title else ""
    if (line := dependent_text(result)) is not None:
        st.info(md(prefix + line), icon=":material/rule:")
        with st.expander(f"{prefix}the {plural(len(result.reading_differences), 'decision')} "
                         f"{_other_rule(result.reading)} would read otherwise"):
            st.dataframe(differences_frame(result), hide_index=True)
    elif quiet and (caption := quiet_text(result)) is not None:
        st.caption(md(prefix + caption))


def render_results_reading(st, results: Mapping[str, MethodResult]) -> None:
    """``render_reading`` for each method of a page that shows several (Inspect), titled by the method; the methods
    none of whose decisions depend on the reading in one caption."""
    for name, result in results.items():
        render_reading(st, result, title=method_title(name), quiet=False)
    if (caption := quiet_many_text(results)) is not None:
        st.caption(md(caption))
