"""Inspect page panels: one method's column. The comparison itself (table, agreement, document support) is
shaped in ``backend.report.compare``, which the HTML report shares."""

from __future__ import annotations

from backend.methods import SPECS
from backend.report.compare import tokens
from backend.report.palette import VERDICT_COLORS
from backend.report.text import duration, plural
from backend.report.timing import cached, first_run_text
from backend.schema import MethodResult, Question
from backend.scoring import verdict
from components.failures import column_text

def render_column(parent, name: str, result: MethodResult | None, question: Question, show_truth: bool,
                  details=None, describe: bool = False) -> None:
    """One method's column inside ``parent`` (a column or placeholder container); ``details``: the page its
    "details" link opens (a page file or ``st.Page``, from the view registry), None for no link; ``describe``:
    a line on what the method does under its name (presentation mode)."""
    box = parent.container(border=True)
    spec = SPECS.get(name)
    box.markdown(f"**{spec.title if spec else name}**")  # the registry's display name, not data
    if describe and spec:
        box.caption(spec.description[:1].upper() + spec.description[1:] + ".")
    if result is None:
        box.caption("running…")
        return
    if result.error:
        box.badge("error", color="red")
        box.text(column_text(result))  # the cause; what to do and the provider's text are above the columns
    elif result.abstained or not result.answers:
        box.badge("abstained", color="gray")
    if unread := sum(c.read_status == "unreadable" for c in result.calls):  # the warning above says which default
        box.badge(f"{plural(unread, 'unreadable reply', 'unreadable replies')}", color="orange")
    if dependent := len(result.reading_differences):  # the note above the columns lists them
        box.badge(f"{plural(dependent, 'decision')} reading-dependent", color="blue")
    for answer in result.answers:
        box.text(answer)
    if show_truth:
        v = verdict(result, question)
        if v not in ("abstained", "error"):
            box.badge(v, color=VERDICT_COLORS[v])
    # the time the method took when its replies were made, not this run's cache read (backend.report.timing)
    box.caption(f"{plural(len(result.calls), 'call')} · {plural(tokens(result), 'token')} · "
                f"{first_run_text(result)}" + (" · from the reply cache" if result.calls and
                                               cached(result) == len(result.calls) else ""))
    if (prep := result.preparation) is not None:  # dataset-level work (RA-RAG's stage 1), not this question's
        box.caption(f"Dataset-level, once per dataset and model: {prep.label}, {plural(prep.calls, 'call')} · "
                    f"{duration(prep.seconds)}")
    if details is not None:
        box.page_link(details, label="details", icon=":material/arrow_forward:")
