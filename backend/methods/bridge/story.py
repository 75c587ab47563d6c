"""BRIDGE's turning point for the question's story (``backend.story``): the decision tree's path and leaf."""

from __future__ import annotations

from backend.schema import MethodResult
from backend.story import StoryContext, Turn

#: what each leaf tells the responder to read (docs/methods/bridge.md §3 Step 4)
LEAF_WORDS = {"FA": "integrate all knowledge", "FI": "trust internal knowledge", "FE": "trust external knowledge",
              "RA": "refuse to answer"}


def bridge_story(result: MethodResult, ctx: StoryContext) -> Turn | None:
    trace = result.trace
    if trace is None:
        return None
    path = trace.cycles[-1].path if trace.cycles else []
    steps = " → ".join(f"{n.node} {'yes' if n.result else 'no'}" for n in path)
    reflections = len(trace.cycles) - 1 if trace.cycles else 0
    facts = {"leaf": trace.leaf, "path": steps or "none", "reflections": str(reflections)}
    text = f"the decision tree went {steps} to leaf {trace.leaf} ({LEAF_WORDS.get(trace.leaf, trace.leaf)})" if steps \
        else f"the decision tree ended at leaf {trace.leaf} ({LEAF_WORDS.get(trace.leaf, trace.leaf)})"
    if reflections:
        text += f" after {reflections} reflection{'s' if reflections > 1 else ''}"
    if trace.defaulted_to_ra:
        text += ", as reflection ran out"
    return Turn(text, facts)
