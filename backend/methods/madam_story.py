"""MADAM-RAG's turning point for the question's story (``backend.story``): the round an agent switched its answer
and, with the truth overlay on, an agent talked out of a right answer."""

from __future__ import annotations

from backend.schema import MethodResult
from backend.story import StoryContext, Turn, quote


def madam_story(result: MethodResult, ctx: StoryContext) -> Turn | None:
    trace = result.trace
    if trace is None or not trace.rounds:
        return None
    documents = {a.number: a.document_id for a in trace.agents}
    switches = [t for r in trace.rounds for t in r.turns if t.changed]
    end = (f"converged in round {trace.stopped_at}" if trace.stop_reason == "converged"
           else f"stopped after {trace.stopped_at} rounds")
    facts = {"switches": str(len(switches)), "rounds": str(trace.stopped_at), "stop": trace.stop_reason}

    def agent(turn) -> str:
        doc = documents.get(turn.agent)
        return f"Agent {turn.agent}" + (f" ({ctx.doc(doc)})" if doc else "")

    # with the truth on, the telling switch is an agent leaving a gold answer for one that is not
    talked_out = [t for t in switches if ctx.kind(t.previous_answer) == "gold" and ctx.kind(t.answer) != "gold"]
    if talked_out:
        t = talked_out[0]
        facts["talked out"] = f"Agent {t.agent}, round {t.round}"
        more = f" ({len(talked_out) - 1} more agents too)" if len(talked_out) > 1 else ""
        return Turn(f"in round {t.round} {agent(t)} was talked out of the right answer {quote(t.previous_answer)} "
                    f"into {quote(t.answer)}{more}; the debate {end}", facts)
    if switches:
        t = switches[0]
        facts["first switch"] = f"Agent {t.agent}, round {t.round}"
        more = f" ({len(switches) - 1} more switches)" if len(switches) > 1 else ""
        return Turn(f"in round {t.round} {agent(t)} switched from {quote(t.previous_answer)} to {quote(t.answer)}"
                    f"{more}; the debate {end}", facts)
    return Turn(f"no agent changed its answer; the debate {end}", facts)
