"""Astute RAG's Algorithm 1, one step per function in the paper's order (see the package docstring)."""

from __future__ import annotations

import hashlib
import random

from pydantic import BaseModel, Field

from backend.answers import normalize
from backend.llm.formats import IDK
from backend.methods.astute import prompts
from backend.methods.astute.parse import (FinalAnswer, answer_group, parse_answer, parse_answer_paper,
                                          parse_consolidation, read_consolidation, read_final_answer,
                                          split_generation)
from backend.methods.base import Method, Outcome, RunContext, default_support
from backend.methods.estimate import CallEstimate, Sizes
from backend.schema import (AstuteGeneration, AstuteGroup, AstutePassage, AstuteRound, AstuteTrace, Document, LLMCall,
                            Question)
from backend.llm.tasks import TaskSpec
from backend.methods.astute.story import astute_story
from backend.methods.spec import MethodSpec, register

ORDERS = ("reversed", "as_is", "random")
ANSWER_MODES = ("single", "multi")
PROMPT_MODES = ("paper", "structured")


def order_documents(docs: list[Document], order: str, question: str, seed: int) -> list[tuple[int, Document]]:
    """(1-based evidence rank, document) in presentation order (P5): ``reversed`` = rank n … 1, so the top
    document sits last, next to the internal passages and the question."""
    ranked = list(enumerate(docs, start=1))
    if order == "reversed":
        return ranked[::-1]
    if order == "random":
        digest = hashlib.sha256(f"{seed}|{question}".encode()).hexdigest()
        random.Random(int(digest, 16)).shuffle(ranked)
    return ranked


def build_d0(ordered: list[tuple[int, Document]], internal: list[str]) -> list[AstutePassage]:
    """D0 = E ⊕ I (Algorithm 1 lines 2-3): external passages first, then internal, numbered 1..n+m."""
    d0 = [AstutePassage(number=k, origin="external", text=d.text, document_id=d.id, source=d.source_name, rank=rank)
          for k, (rank, d) in enumerate(ordered, start=1)]
    d0 += [AstutePassage(number=len(d0) + k, origin="internal", text=t) for k, t in enumerate(internal, start=1)]
    return d0


def passages_field(d0: list[AstutePassage]) -> list[dict[str, str]]:
    """D0 as the task field ``passages``: the source label is S0 (memory / external), never a label of truth."""
    return [{"id": p.document_id or f"internal-{p.number}", "source": "memory" if p.origin == "internal"
             else "external", "text": p.text} for p in d0]


class AstuteRAG(Method):
    """Adaptive internal passages (call 1), t-1 consolidation calls, one merged consolidate-and-answer call."""

    name = "astute"
    steps = ("generate_passages", "consolidate_round_{round}", "consolidate_answer")

    def __init__(self, m_hat: int = 1, iterations: int = 1, max_tokens: int = 1024, order: str = "reversed",
                 answer_mode: str = "single", prompt_mode: str = "paper", drop_idk: bool = True,
                 source_detail: bool = False, seed: int = 0):
        if m_hat < 1:
            raise ValueError("m_hat must be at least 1 (the model may still generate none)")
        if iterations < 1:
            raise ValueError("iterations (t) must be at least 1")
        for value, allowed, what in ((order, ORDERS, "order"), (answer_mode, ANSWER_MODES, "answer_mode"),
                                     (prompt_mode, PROMPT_MODES, "prompt_mode")):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {allowed}, got {value!r}")
        self.m_hat, self.iterations, self.max_tokens, self.order = m_hat, iterations, max_tokens, order
        self.answer_mode, self.prompt_mode, self.drop_idk = answer_mode, prompt_mode, drop_idk
        self.source_detail, self.seed = source_detail, seed

    # -- §3.3 adaptive generation of internal knowledge (Algorithm 1 line 1) -------------------------------

    async def generate(self, ctx: RunContext, question: Question) -> AstuteGeneration:
        call = await ctx.client.acomplete(
            prompts.gen_messages(question.question, self.m_hat), task="generate_passage", step="generate_passages",
            question=question.question, max_tokens=self.max_tokens,
            fields={"memory": question.internal_knowledge, "max_passages": self.m_hat})
        # one rule for both readings (P4 is inferred from the paper's passage counts, not a stated format)
        gen = ctx.readings.same("generate_passages", split_generation(call.response or "", self.m_hat, self.drop_idk),
                                call_id=call.id)
        gen.call_id = call.id
        return gen

    # -- §3.4 iterative source-aware consolidation (lines 4-7) ----------------------------------------------

    async def consolidate(self, ctx: RunContext, question: Question, d0: list[AstutePassage], context_init: str,
                          last: str, j: int, parents: list[str]) -> tuple[AstuteRound, LLMCall]:
        structured = self.prompt_mode == "structured"
        call = await ctx.client.acomplete(
            prompts.con_messages(question.question, context_init, last, structured), task="consolidate",
            step=f"consolidate_round_{j}", question=question.question, parents=parents, max_tokens=self.max_tokens,
            fields={"passages": passages_field(d0), "round": j, "prompt_mode": self.prompt_mode})
        return self._round(j, call, d0, final=False, ctx=ctx), call

    # -- §3.5 answer finalisation, merged with the t-th consolidation (lines 8 / 10) -----------------------

    async def finalize(self, ctx: RunContext, question: Question, d0: list[AstutePassage], context_init: str,
                       consolidated: str | None, parents: list[str]) -> tuple[AstuteRound, LLMCall]:
        structured = self.prompt_mode == "structured"
        call = await ctx.client.acomplete(
            prompts.ans_messages(question.question, context_init, consolidated, self.answer_mode, structured),
            task="consolidate_answer", step="consolidate_answer", question=question.question, parents=parents,
            max_tokens=self.max_tokens,
            fields={"passages": passages_field(d0), "answer_mode": self.answer_mode, "prompt_mode": self.prompt_mode})
        return self._round(self.iterations, call, d0, final=True, ctx=ctx), call

    def _round(self, j: int, call: LLMCall, d0: list[AstutePassage], final: bool, ctx: RunContext) -> AstuteRound:
        # the paper states no literal format for the groups: one rule for both readings
        c = ctx.readings.same(call.step, parse_consolidation(call.response or "", d0), call_id=call.id)
        return AstuteRound(round=j, step=call.step, final=final, raw=call.response or "", groups=c.groups,
                           excluded=c.excluded, split=c.split, conflict=c.conflict, parse=c.parse, notes=c.notes,
                           call_id=call.id)

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        trace = AstuteTrace(m_hat=self.m_hat, iterations=self.iterations, order=self.order,
                            answer_mode=self.answer_mode, prompt_mode=self.prompt_mode, drop_idk=self.drop_idk,
                            source_detail=self.source_detail, max_tokens=self.max_tokens)
        docs = ctx.evidence(question)
        trace.generation = await self.generate(ctx, question)
        trace.passages = build_d0(order_documents(docs, self.order, question.question, self.seed),
                                  trace.generation.kept)
        calls: list[LLMCall] = []
        if not trace.passages:  # P13: nothing to consolidate; answering an empty context would be a guess
            trace.no_context, trace.answer_parse = True, "skipped"
            trace.notes.append("no retrieved document and no generated passage: nothing to consolidate, so no "
                               "answer call was made and the method abstains")
            return Outcome([], True, trace, support={})
        context_init = prompts.render_context(trace.passages, self.source_detail)
        gen_id = [trace.generation.call_id] if trace.generation.call_id else []
        last, last_id = context_init, []
        for j in range(1, self.iterations):                     # t-1 p_con calls; each reads ctx0 + the last
            rnd, call = await self.consolidate(ctx, question, trace.passages, context_init, last, j, gen_id + last_id)
            trace.rounds.append(rnd)
            calls.append(call)
            last, last_id = call.response or "", [call.id]      # P11: the raw text goes forward
        rnd, call = await self.finalize(ctx, question, trace.passages, context_init,
                                        last if self.iterations > 1 else None, gen_id + last_id)
        trace.rounds.append(rnd)
        calls.append(call)
        self._conclude(trace, call, ctx)
        return Outcome(trace.final_answers, not trace.final_answers, trace, support=self._support_map(trace, docs))

    def pick(self, call: LLMCall, groups: list, ctx: RunContext) -> FinalAnswer:
        """The final answer(s) of the p_ans reply, read both ways (``parse_answer``: tolerant, the model's pick in
        any form it states it but never a pick by the reader; ``parse_answer_paper``: the ``<ANSWER>`` tag only)
        and decided by the run's reading; compared by the normalised answers."""
        reply = call.response or ""
        return ctx.readings.decide(
            call.step, parse_answer(reply, groups, self.answer_mode),
            parse_answer_paper(reply, self.answer_mode, structured=call.structured), call_id=call.id,
            key=lambda p: tuple(sorted({normalize(a) for a in p.answers})),
            show=lambda p: "; ".join(p.answers) if p.answers else "no answer (abstains)", what="final answer")

    def _conclude(self, trace: AstuteTrace, call: LLMCall, ctx: RunContext) -> None:
        final = trace.rounds[-1]
        calls = ctx.client.calls
        picked = self.pick(call, final.groups, ctx)
        trace.final_answers, trace.answer_parse, trace.rationale = picked.answers, picked.how, picked.rationale
        trace.notes += picked.notes
        trace.final_groups = [g.id if (g := answer_group(a, final.groups)) else None for a in picked.answers]
        for a, gid in zip(picked.answers, trace.final_groups):
            if gid is None:
                trace.notes.append(f"the answer {a!r} matches no group's candidate answer")
        for r in trace.rounds:
            trace.notes += [f"round {r.round}: {n}" for n in r.notes]
        cut = [c.step for c in calls if c.completion_tokens >= self.max_tokens]
        if cut:
            trace.truncated = True
            trace.notes.append(f"{', '.join(cut)} used the whole budget of {self.max_tokens} tokens: the reply may "
                               "be cut off")
        if not picked.answers and picked.how == "tag":
            trace.notes.append(f"the model answered {IDK!r}: abstained")

    @staticmethod
    def _support_map(trace: AstuteTrace, docs: list[Document]) -> dict[str, list[str]]:
        """Each answer rests on the external documents its group cites; without a group, on the documents that
        state it."""
        groups = {g.id: g for g in trace.rounds[-1].groups} if trace.rounds else {}
        by_number = {p.number: p.document_id for p in trace.passages if p.document_id}
        out = {}
        for answer, gid in zip(trace.final_answers, trace.final_groups):
            if gid in groups:
                out[answer] = [by_number[n] for n in groups[gid].documents if n in by_number]
            else:
                out[answer] = default_support([answer], docs)[answer]
        return out


# -- what a run will send (MethodSpec.estimate) ----------------------------------------------------------------

def estimate(method: AstuteRAG, question: Question, sizes: Sizes) -> CallEstimate:
    """Algorithm 1's t + 1 calls: p_gen (at most m̂ passages, each assumed as long as a document of the dataset, as
    the passages it stands beside), t − 1 p_con rounds and the merged p_ans; each consolidation reads the initial
    context (documents + passages) and the last one, and its reply is assumed as long as the context it rewrites,
    under ``max_tokens``. With no document the answer call happens only if the model writes a passage (P13)."""
    est = CallEstimate(method=method.name)
    q, structured, cap = question.question, method.prompt_mode == "structured", method.max_tokens
    docs = sizes.evidence(question)
    passage = sizes.reply(sizes.document_tokens, cap)
    generated = sizes.reply(method.m_hat * passage, cap)
    est.add("generate_passages", 1, sizes.messages(prompts.gen_messages(q, method.m_hat)), generated)
    labels = [f"Document {k} (source: external retrieval): " for k in range(1, len(docs) + 1)]
    labels += [f"Document {len(docs) + k} (source: memory): " for k in range(1, method.m_hat + 1)]
    context_init = sum(sizes.tokens(label) for label in labels) + sum(docs) + generated
    rewrite = sizes.reply(context_init, cap)
    last = context_init
    for j in range(1, method.iterations):
        est.add(f"consolidate_round_{j}", 1,
                sizes.messages(prompts.con_messages(q, "", "", structured)) + context_init + last, rewrite)
        last = rewrite
    consolidated = f"Consolidated Context:\n{sizes.placeholder(last)}\n" if method.iterations > 1 else None
    answer_prompt = sizes.messages(prompts.ans_messages(q, "", consolidated, method.answer_mode, structured))
    est.add("consolidate_answer", 1, answer_prompt + context_init, rewrite, conditional=not docs)
    est.notes.append(f"generated passages ~{passage} tokens each (the dataset's mean document); consolidation replies "
                     f"~{rewrite} (the context they rewrite, at most max_tokens = {cap})")
    return est


# The consolidation and answer replies as JSON objects (structured output, ``backend.llm.structured``), keyed as
# ``parse.py`` reads a JSON reply.

class GroupReply(BaseModel):
    id: str
    documents: list[int] = Field(description="the numbers of the passages consolidated into this group")
    source: str = Field(description="memory, external or both")
    summary: str


class ConsolidationReply(BaseModel):
    groups: list[GroupReply]


class CandidateGroupReply(GroupReply):
    answer: str | None
    confidence: float | None = Field(description="between 0 and 1")


class FinalAnswerReply(BaseModel):
    groups: list[CandidateGroupReply]
    final_answers: list[str] = Field(description="the final answer; every answer in multi-answer mode")


def _group(g: AstuteGroup) -> dict:
    # every citation as written: a server that read the reply without the call's passages cannot tell which exist
    return {"id": g.id, "documents": g.documents + g.invalid_citations, "source": g.stated_source or "",
            "summary": g.summary}


def _final_answer(answers: list[str], reply: str = "", fields: dict | None = None, **_) -> FinalAnswerReply:
    """The groups and candidates (read from the same reply) and the final answer(s); an abstention as "I don't know"."""
    groups = read_consolidation(reply, **(fields or {})).value
    return FinalAnswerReply(groups=[CandidateGroupReply(**_group(g), answer=g.answer, confidence=g.confidence)
                                    for g in groups], final_answers=answers or [IDK])


SPEC = register(MethodSpec(
    AstuteRAG, AstuteTrace, title="Astute RAG", color="#6a1b9a", order=20, quick=True, estimate=estimate,
    paper_metric='gold_in_response',  # its paper's own metric (backend.scoring.PAPER_METRICS)
    story=astute_story,
    description="writes passages from the model's own memory, consolidates them with the retrieved ones by "
                "source, and answers from the most reliable group",
    tasks=(TaskSpec("consolidate", ("passages", "round", "prompt_mode"), read_consolidation,
                    "group passages by the answer they support, tagging memory/external sources",
                    schema=ConsolidationReply,
                    as_schema=lambda groups, **_: ConsolidationReply(groups=[GroupReply(**_group(g)) for g in groups]),
                    reply_tokens=512),
           TaskSpec("consolidate_answer", ("passages", "answer_mode", "prompt_mode"), read_final_answer,
                    "groups, candidate answers with confidence, final <ANSWER> tag(s)",
                    schema=FinalAnswerReply, as_schema=_final_answer, reply_tokens=512)),
    step_roles={"generate_passages": "p_gen: internal passages",
                "consolidate_round_{round}": "p_con: consolidation round {round}",
                "consolidate_answer": "p_ans: last round + answers + final pick"}))
