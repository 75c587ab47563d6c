"""Counterfactual prompting's (RC-RAG's) turning point for the question's story (``backend.story``): the keep /
discard decision on the RAG answer and the branches behind it."""

from __future__ import annotations

from backend.schema import MethodResult
from backend.story import StoryContext, Turn, quote


def counterfactual_story(result: MethodResult, ctx: StoryContext) -> Turn | None:
    trace = result.trace
    if trace is None:
        return None
    rag = trace.rag.answer if trace.rag and trace.rag.answer else None
    branches = ", ".join(f"{b.scenario}: {b.decision}" for b in trace.branches)
    verb = "kept" if trace.decision == "keep" else "discarded"
    text = f"it {verb} the RAG answer {quote(rag)}"
    how = [branches] if branches else []
    if trace.fusion is not None:
        how.append(f"settled by {trace.fusion.strategy} {'selection' if trace.fusion.strategy == 'direct' else 'fusion'}")
    if trace.override:
        how.append("a kept refusal counts as a discard")
    if how:
        text += f" ({'; '.join(how)})"
    return Turn(text, {"decision": trace.decision, "rag answer": rag or "none", "branches": branches or "none"})
