"""Astute RAG's turning point for the question's story (``backend.story``): the consolidated group that won."""

from __future__ import annotations

from backend.schema import MethodResult
from backend.story import StoryContext, Turn, quote


def astute_story(result: MethodResult, ctx: StoryContext) -> Turn | None:
    trace = result.trace
    if trace is None:
        return None
    if trace.no_context or not trace.rounds:
        return Turn("it had no passage to consolidate", {"groups": "0"})
    groups = trace.rounds[-1].groups
    won = {g for g in trace.final_groups if g}
    winners = [g for g in groups if g.id in won]
    others = [g for g in groups if g.id not in won and g.answer]
    facts = {"groups": str(len(groups)), "won": ", ".join(g.id for g in winners) or "none"}
    if not winners:
        return Turn(f"it consolidated the passages into {len(groups)} group{'s' if len(groups) != 1 else ''}, "
                    "and its pick names none of them", facts)
    g = winners[0]
    text = f"group {g.id} ({g.source}, {len(g.documents)} passage{'s' if len(g.documents) != 1 else ''}) won"
    if others:
        text += f" over {', '.join(f'{o.id} ({quote(o.answer)})' for o in others[:2])}"
        text += f" +{len(others) - 2} more" if len(others) > 2 else ""
    return Turn(text, facts)
