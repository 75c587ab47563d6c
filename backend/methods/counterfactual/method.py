"""RC-RAG's pipeline, one function per module of the paper (§4) in its order: generation (the RAG answer and
the two counterfactual branches), judgment, fusion, the post-fusion override (see the package docstring).

Every decision read from a reply is read both ways (``backend.methods.reading``: the tolerant readers and the
released code's, ``parse``) and decided by ``ctx.readings``: the RAG answer and its refusal flag (``rag_answer``),
each counterfactual round's judgment (same answer -> keep, changed -> discard), direct selection's keep / discard
and each branch's probability. The judgment under each reading compares that reading's reply with that reading's
RAG answer; the run goes on with its own reading's values (the answer turns of the conversations, the override)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from backend.answers import normalize
from backend.methods.base import Method, Outcome, RunContext, gather_all
from backend.methods.estimate import CallEstimate, Sizes
from backend.methods.counterfactual import prompts
from backend.methods.counterfactual.parse import (THRESHOLD, _rouge, judge, parse_keep_discard, parse_probability,
                                                  parse_reply, read_cf_reply, read_cf_reply_released,
                                                  released_keep_discard, released_probability)
from backend.schema import (CFBranch, CFFusion, CFPassage, CFReply, CFRound, CounterfactualTrace, LLMCall,
                            Question)
from backend.llm.tasks import TaskSpec
from backend.methods.counterfactual.story import counterfactual_story
from backend.methods.spec import MethodSpec, register

FUSIONS = ("direct", "probability", "safety")
SCENARIOS = ("quality", "usage")


def _fields(passages: list[CFPassage], **extra) -> dict:
    return {"passages": [{"id": p.document_id, "source": "external", "text": p.text} for p in passages], **extra}


class CounterfactualRAG(Method):
    """The RAG answer, CF-quality and CF-usage in two concurrent conversations, judgment against the RAG answer,
    fusion when the branches disagree, and the "unknown" override: keep (answer) or discard (abstain)."""

    name = "counterfactual"
    steps = ("rag_answer", "cf_quality_round_{round}", "cf_usage_round_{round}", "fusion_direct",
             "fusion_probability")

    def __init__(self, k: int = 3, iterations: int = 1, fusion: str = "direct", threshold: float = THRESHOLD,
                 max_tokens: int = 256, substring: str = "faithful", refusal_scope: str = "output"):
        if k < 1 or iterations < 1:
            raise ValueError("k and iterations must be at least 1")
        for value, allowed, what in ((fusion, FUSIONS, "fusion"), (substring, ("faithful", "strict"), "substring"),
                                     (refusal_scope, ("output", "answer"), "refusal_scope")):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {allowed}, got {value!r}")
        self.k, self.iterations, self.fusion, self.threshold = k, iterations, fusion, threshold
        self.max_tokens, self.substring, self.refusal_scope = max_tokens, substring, refusal_scope

    def _replies(self, call: LLMCall, n: int) -> tuple[CFReply, CFReply]:
        """The reply read both ways: (tolerant, paper)."""
        tolerant = parse_reply(call.response, n, self.refusal_scope)
        paper = read_cf_reply_released(call.response, n, self.refusal_scope, structured=call.structured)
        tolerant.call_id = paper.call_id = call.id
        return tolerant, paper

    # -- generation module (§4): the RAG answer ----------------------------------------------------------------

    async def rag_answers(self, ctx: RunContext, question: Question, passages: list[CFPassage]
                          ) -> tuple[CFReply, CFReply]:
        """The RAG answer read both ways (tolerant, paper); the answer and the refusal flag are decisions."""
        call = await ctx.client.acomplete(prompts.rag_messages(question.question, passages), task="cf_answer",
                                          step="rag_answer", question=question.question, max_tokens=self.max_tokens,
                                          fields=_fields(passages))
        tolerant, paper = self._replies(call, len(passages))
        ctx.readings.decide("rag_answer", tolerant, paper, call_id=call.id, key=lambda r: normalize(r.answer),
                            show=lambda r: repr(r.answer) if r.answer else "no answer", what="RAG answer")
        ctx.readings.decide("rag_answer", tolerant, paper, call_id=call.id, key=lambda r: r.reject,
                            show=lambda r: f"a refusal ({r.reject_phrase!r})" if r.reject else "not a refusal",
                            what="refusal (the 'unknown' override)")
        return tolerant, paper

    # -- generation + judgment modules (§4, App. B): one counterfactual conversation --------------------------

    async def branch(self, ctx: RunContext, question: Question, passages: list[CFPassage],
                     rags: tuple[CFReply, CFReply], scenario: str) -> tuple[CFBranch, list[dict[str, str]]]:
        """T rounds of one counterfactual, each judged against the RAG answer; stops at the first change. ``rags``:
        the RAG answer read both ways (tolerant, paper): each reading's judgment compares its own reading of the
        reply with its own reading of the RAG answer, and the run's reading decides. Returns the branch and its
        conversation so far (fusion continues it)."""
        rag = rags[0] if ctx.readings.reading == "tolerant" else rags[1]
        messages = prompts.rag_messages(question.question, passages)
        branch, previous, parent = CFBranch(scenario=scenario, decision="keep"), rag.answer, rag.call_id
        for t in range(1, self.iterations + 1):
            messages = messages + [prompts.assistant(previous), prompts.user(prompts.CF[scenario] + prompts.TAIL)]
            extra = {"previous_answer": previous}
            if scenario == "quality":
                extra["previous_evidence"] = (branch.rounds[-1].reply if branch.rounds else rag).passages
            call = await ctx.client.acomplete(messages, task=f"cf_{scenario}", step=f"cf_{scenario}_round_{t}",
                                              question=question.question, parents=[p for p in [parent] if p],
                                              max_tokens=self.max_tokens, fields=_fields(passages, **extra))
            judged = []
            for reply, against in zip(self._replies(call, len(passages)), rags):
                verdict = judge(reply, against, self.threshold, self.substring)   # always against the RAG answer
                judged.append(CFRound(round=t, reply=reply, match=verdict,
                                      decision="keep" if verdict.same else "discard"))
            rnd = ctx.readings.decide(call.step, *judged, call_id=call.id, key=lambda r: r.decision,
                                      show=lambda r: f"{r.decision} ({r.reply.answer!r} against the RAG answer)",
                                      what=f"CF-{scenario} round {t}: same answer (keep) or changed (discard)")
            branch.rounds.append(rnd)
            reply, verdict = rnd.reply, rnd.match
            if not verdict.same:
                branch.decision = "discard"
                break
            previous, parent = reply.answer, call.id
        return branch, messages + [prompts.assistant(branch.rounds[-1].reply.answer)]

    # -- fusion module (§4, App. C.3) -------------------------------------------------------------------------

    async def fuse(self, ctx: RunContext, question: Question, passages: list[CFPassage], rag: CFReply,
                   branches: dict[str, tuple[CFBranch, list[dict[str, str]]]]) -> CFFusion:
        if self.fusion == "safety":   # the released code's ablation: any discard wins
            return CFFusion(strategy="safety", decision="discard", notes=["safety: the branches disagree, so discard"])
        if self.fusion == "direct":
            name = next(s for s in SCENARIOS if branches[s][0].decision == "discard")
            b, messages = branches[name]
            call = await ctx.client.acomplete(
                messages + [prompts.user(prompts.DIRECT[name])], task="cf_judge", step="fusion_direct",
                question=question.question, parents=[c for c in [b.rounds[-1].reply.call_id] if c],
                max_tokens=self.max_tokens, fields=_fields(passages, previous_answer=rag.answer, kind=name))
            read = parse_keep_discard(call.response or "")
            released = released_keep_discard(call.response, structured=call.structured)
            choice = ctx.readings.decide("fusion_direct", read.value, released, call_id=call.id,
                                         what="direct selection: keep or discard")
            note = read.note if ctx.readings.reading == "tolerant" else (
                f"paper reading: the released code's rule ('keep' in the reply, else discard): {choice}")
            return CFFusion(strategy="direct", branch=name, raw=call.response or "", choice=choice, decision=choice,
                            notes=[note] if note else [], call_ids=[call.id])

        async def probability(name: str) -> tuple[str, LLMCall]:
            b, messages = branches[name]
            call = await ctx.client.acomplete(
                messages + [prompts.user(prompts.PROBABILITY)], task="cf_probability", step="fusion_probability",
                question=question.question, parents=[c for c in [b.rounds[-1].reply.call_id] if c],
                max_tokens=self.max_tokens, fields=_fields(passages, previous_answer=b.rounds[-1].reply.answer))
            return name, call

        fusion = CFFusion(strategy="probability", decision="discard")
        for name, call in await gather_all(*(probability(s) for s in SCENARIOS)):
            read = parse_probability(call.response or "")
            released = released_probability(call.response, structured=call.structured)
            value = ctx.readings.decide("fusion_probability", read.value, released, call_id=call.id,
                                        what=f"probability comparison: {name}'s probability")
            note = read.note if ctx.readings.reading == "tolerant" else (
                None if value else "paper reading: no number the released code reads ('0.x' or 'N.'): 0.0")
            fusion.probabilities[name], fusion.raw_probabilities[name] = value, call.response or ""
            fusion.call_ids.append(call.id)
            if note:
                fusion.notes.append(f"{name}: {note}")
        pq, pu = fusion.probabilities["quality"], fusion.probabilities["usage"]
        fusion.winner = "quality" if pq > pu else "usage" if pu > pq else None
        fusion.decision = branches[fusion.winner][0].decision if fusion.winner else "discard"   # a tie discards
        if fusion.winner is None:
            fusion.notes.append(f"tie at {pq:.2f}: discard")
        return fusion

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        docs = ctx.evidence(question, k=self.k)
        passages = [CFPassage(number=i, document_id=d.id, text=d.text) for i, d in enumerate(docs)]
        trace = CounterfactualTrace(k=self.k, iterations=self.iterations, fusion_strategy=self.fusion,
                                    threshold=self.threshold, substring=self.substring,
                                    refusal_scope=self.refusal_scope, passages=passages)
        rags = await self.rag_answers(ctx, question, passages)
        trace.rag = rag = rags[0] if ctx.readings.reading == "tolerant" else rags[1]
        results = await gather_all(*(self.branch(ctx, question, passages, rags, s) for s in SCENARIOS))
        branches = dict(zip(SCENARIOS, results))
        trace.branches = [b for b, _ in results]
        quality, usage = branches["quality"][0].decision, branches["usage"][0].decision
        trace.agree = quality == usage
        if trace.agree:
            trace.fused = quality                                      # agreement: no fusion call
        else:
            trace.fusion = await self.fuse(ctx, question, passages, rag, branches)
            trace.fused = trace.fusion.decision
        trace.override = trace.fused == "keep" and rag.reject          # §3.7: keeping "unknown" is discarding
        trace.decision = "discard" if trace.override else trace.fused
        if trace.decision == "keep" and not rag.answer:
            trace.decision = "discard"
            trace.notes.append("kept, but the RAG reply has no answer text: nothing to answer with, so abstain")
        trace.reason = reason(trace)
        keep = trace.decision == "keep"
        support = {rag.answer: [passages[i].document_id for i in rag.passages]} if keep else {}
        return Outcome([rag.answer] if keep else [], not keep, trace, support=support)


def _branch_text(b: CFBranch, rag: CFReply) -> str:
    last = b.rounds[-1]
    if last.match.same:
        return f"{b.scenario} unchanged ({last.match.fired}) → keep"
    score = f"F1 {last.match.f1:.2f}" if last.match.compared != "nothing" else "nothing to compare"
    return f"{b.scenario} changed '{rag.answer}'→'{last.reply.answer}' ({score}) → discard"


def reason(trace: CounterfactualTrace) -> str:
    """The decision path in one line, e.g. "quality changed 'X'→'Y' (F1 0.12) → discard; usage unchanged (exact)
    → keep; disagreement → direct selection in quality → discard → ABSTAIN"."""
    parts = [_branch_text(b, trace.rag) for b in trace.branches]
    if trace.agree:
        parts.append("agreement")
    elif trace.fusion is not None:
        f = trace.fusion
        if f.strategy == "direct":
            parts.append(f"disagreement → direct selection in {f.branch} → {f.choice}")
        elif f.strategy == "probability":
            probs = ", ".join(f"p_{k} {v:.2f}" for k, v in f.probabilities.items())
            parts.append(f"disagreement → probability ({probs}) → {f.winner or 'tie'} → {f.decision}")
        else:
            parts.append("disagreement → safety → discard")
    if trace.override:
        parts.append(f"override: the RAG answer is a refusal ('{trace.rag.reject_phrase}')")
    parts.append("KEEP" if trace.decision == "keep" else "ABSTAIN")
    return "; ".join(parts[:-1]) + " → " + parts[-1]


# -- what a run will send (MethodSpec.estimate) ----------------------------------------------------------------

#: The reply the RAG prompt asks for, in its own example ("Answer: apple. Evidence: ## Passage-0, Passage-1 ##.").
EXAMPLE_REPLY = re.search(r'reply "(Answer: .+?##\.)"', prompts.RAG).group(1)
#: A short answer as the conversation carries it forward (the assistant turn is the answer alone).
ANSWER_TOKENS = 8
#: "$$ keep $$" / "$$ discard $$", and "Probability: 0.8".
CHOICE_REPLY = 5


def estimate(method: CounterfactualRAG, question: Question, sizes: Sizes) -> CallEstimate:
    """The RAG answer; then the two counterfactual conversations (CF-quality, CF-usage), each up to T rounds that
    carry the conversation so far, stopping at the first changed answer (rounds after the first are conditional);
    then, only when the branches disagree, the fusion call(s): one for direct selection, two for probability."""
    est = CallEstimate(method=method.name)
    docs = sizes.evidence(question, k=method.k)
    passages = [CFPassage(number=i, document_id=str(i), text="") for i in range(len(docs))]
    rag = sizes.messages(prompts.rag_messages(question.question, passages)) + sum(docs)
    reply = sizes.reply(sizes.tokens(EXAMPLE_REPLY), method.max_tokens)
    est.add("rag_answer", 1, rag, reply)
    answer = min(ANSWER_TOKENS, reply)
    longest = {}
    for scenario in SCENARIOS:
        turn = answer + sizes.tokens(prompts.CF[scenario] + prompts.TAIL)
        for t in range(1, method.iterations + 1):
            est.add(f"cf_{scenario}_round_{t}", 1, rag + t * turn, reply, conditional=t > 1)
        longest[scenario] = rag + method.iterations * turn + answer
    choice = sizes.reply(CHOICE_REPLY, method.max_tokens)
    if method.fusion == "direct":
        prompt = max(longest[s] + sizes.tokens(prompts.DIRECT[s]) for s in SCENARIOS)
        est.add("fusion_direct", 1, prompt, choice, conditional=True)
    elif method.fusion == "probability":
        est.add("fusion_probability", 2, sum(longest.values()) + 2 * sizes.tokens(prompts.PROBABILITY), 2 * choice,
                conditional=True)
    est.notes.append(f"replies ~{reply} tokens (the RAG prompt's own example reply); fusion only when the branches "
                     "disagree")
    return est


class AnswerEvidenceReply(BaseModel):
    """The RAG answer and CF-quality replies as a JSON object (structured output, ``backend.llm.structured``)."""

    answer: str
    evidence: str = Field(description="the passages the answer comes from, e.g. \"Passage-1, Passage-3\"; empty "
                                      "when it comes from memory")


class AnswerReply(BaseModel):
    """The CF-usage reply as a JSON object (its prompt asks for no evidence)."""

    answer: str


class DecisionReply(BaseModel):
    """Direct selection as a JSON object."""

    decision: Literal["keep", "discard"]


class ProbabilityReply(BaseModel):
    """Probability comparison as a JSON object."""

    probability: float = Field(description="the probability that the answer is correct, between 0 and 1")


def _answer_evidence(read: CFReply, **_) -> AnswerEvidenceReply:
    return AnswerEvidenceReply(answer=read.answer, evidence=read.evidence)


SPEC = register(MethodSpec(
    CounterfactualRAG, CounterfactualTrace, title="Counterfactual prompting (RC-RAG)", color="#6d4c41", order=40,
    paper_metric='risk',  # its paper's own metric (backend.scoring.PAPER_METRICS)
    estimate=estimate, story=counterfactual_story,
    quick=True, selective=True, reference=True, warm=_rouge,  # ROUGE-L's rouge_score + nltk, for the answer match
    description="asks what the answer would be if the passages were poor or misused, and abstains when the "
                "answer does not survive",
    # (``passages=()``: serve-model reads a structured reply with the fields a request carries, which may be none)
    tasks=(TaskSpec("cf_answer", ("passages",), lambda text, passages=(), **_: read_cf_reply(text, len(passages)),
                    "'Answer: X.' plus 'Evidence: ## Passage-i ##'",
                    schema=AnswerEvidenceReply, as_schema=_answer_evidence),
           TaskSpec("cf_quality", ("passages", "previous_answer", "previous_evidence"),
                    lambda text, passages=(), **_: read_cf_reply(text, len(passages)),
                    "re-answer assuming the cited passage was of poor quality",
                    schema=AnswerEvidenceReply, as_schema=_answer_evidence),
           TaskSpec("cf_usage", ("passages", "previous_answer"),
                    lambda text, passages=(), **_: read_cf_reply(text, len(passages), evidence_asked=False),
                    "re-answer assuming the passages were used improperly",
                    schema=AnswerReply, as_schema=lambda read, **_: AnswerReply(answer=read.answer)),
           TaskSpec("cf_judge", ("passages", "previous_answer", "kind"), parse_keep_discard,
                    "'$$ keep $$' or '$$ discard $$' for the original answer",
                    schema=DecisionReply, as_schema=lambda choice, **_: DecisionReply(decision=choice), reply_tokens=64),
           TaskSpec("cf_probability", ("passages", "previous_answer"), parse_probability,
                    "'Probability: 0.xx' that the answer is right",
                    schema=ProbabilityReply, as_schema=lambda p, **_: ProbabilityReply(probability=p), reply_tokens=64)),
    step_roles={"rag_answer": "RAG answer with evidence",
                "cf_quality_round_{round}": "CF-quality, round {round}",
                "cf_usage_round_{round}": "CF-usage, round {round}",
                "fusion_direct": "fusion: direct selection",
                "fusion_probability": "fusion: probability comparison"}))
