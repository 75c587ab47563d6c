"""RA-RAG's turning point for the question's story (``backend.story``): the vote and the source weights that
decided it."""

from __future__ import annotations

from backend.schema import MethodResult
from backend.story import StoryContext, Turn, quote

VARIANT_WORDS = {"mv": "majority vote", "wmv": "weighted vote", "rrss": "κ-RRSS vote"}


def ra_rag_story(result: MethodResult, ctx: StoryContext) -> Turn | None:
    trace = result.trace
    if trace is None:
        return None
    scored = sorted(((s, v) for v in trace.votes if (s := getattr(v, trace.variant, None)) is not None),
                    key=lambda sv: -sv[0])
    vote = VARIANT_WORDS.get(trace.variant, f"{trace.variant} vote")
    weight = {s.source: s.weight for s in trace.sources}

    def source(name: str) -> str:
        label = ctx.doc(name) if trace.per_document else name
        # a majority vote counts every source alike: its weights decided nothing
        return f"{label} {weight[name]:.2f}" if name in weight and trace.variant != "mv" else label

    if not scored:
        return Turn(f"no source gave an answer to the {vote}", {"vote": "none"})
    top, rest = scored[0], scored[1:2]
    text = f"the {vote} went to {quote(top[1].answer)} ({top[0]:.3g}"
    text += f" vs {quote(rest[0][1].answer)} {rest[0][0]:.3g})" if rest else ")"
    deciding = sorted(top[1].sources, key=lambda s: -weight.get(s, 0.0))
    if deciding:
        what = "document" if trace.per_document else "source"
        text += (f", carried by {what}s " if trace.variant == "mv" else f", carried by {what} weights ") + \
                ", ".join(source(s) for s in deciding[:3]) + (f" +{len(deciding) - 3} more" if len(deciding) > 3 else "")
    return Turn(text, {"vote": " · ".join(f"{v.answer}: {s:.3g}" for s, v in scored),
                       "deciding sources": ", ".join(deciding) or "none"})
