"""Failures a person can read: one message per cause with what to do, the provider's own words behind an
expander. The classifying and grouping is ``backend.llm.failures``; this module only places it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from backend.llm.failures import classify_failure, group_failures
from backend.schema import MethodResult
from components.safe import md


def column_text(result: MethodResult) -> str:
    """A failed method's column line: the problem only (the page gives the advice once, above the columns)."""
    return classify_failure(result.error or "").problem


def render_failures(st, results: Mapping[str, MethodResult] | Iterable[MethodResult]) -> None:
    """One ``st.error`` per cause among the failed ``results``, then an expander naming the methods it hit and
    holding the raw texts. Messages name a model or endpoint the user typed, so they are shown literally."""
    for group in group_failures(results):
        st.error(md(group.failure.message), icon=":material/error:")
        n = len(group.methods)
        details = st.expander(f"Details ({n} method{'s' if n > 1 else ''}: {md(', '.join(group.methods))})")
        for raw, methods in group.raws:
            if len(group.raws) > 1:  # which method said what; with one text the label already names them
                details.caption(md(", ".join(methods)))
            details.text(raw)


def render_failure(st, heading: str, error: BaseException | str | None, model: str | None = None,
                   missing: str = "no details") -> None:
    """One view's failure: ``heading`` as the error, the short message with what to do as text, the raw text in
    an expander. ``model``: the model an ``LLMCall.error``-style text (``kind: message``) came from."""
    st.error(heading)
    if error is None:
        st.text(missing)
        return
    failure = classify_failure(error, model)
    st.text(failure.message)
    if failure.raw != failure.message:
        st.expander("Provider message").text(failure.raw)
