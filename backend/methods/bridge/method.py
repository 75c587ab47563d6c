"""BRIDGE's pipeline in the paper's order (see the package docstring): Soft Bias Allocator, knowledge collection
(multi-query retriever and generator, concurrently), Knowledge Scorer, Maximum Soft-bias Decision Tree with
reflection, responder.

The multi-query retriever [ours] (the paper: BGE-m3 over a Wikipedia dump): in ``given`` mode BM25 candidates over
every document of the dataset (``CANDIDATES`` = 20 per sub-query, pooled over the cycle's sub-queries) re-ranked by
MiniLM cosine similarity, top 1
(``backend.corpus``: indexed in under a second and kept in the cache folder, where a dense index of the whole
dataset embeds every document first, ~37 s for 2,200 documents); in ``retrieve`` mode the dense index every method
searches (``backend.retrieval``). Either way ``retrieval_score`` is the cosine similarity of the sub-query and the
passage."""

from __future__ import annotations

import asyncio
import json
import math
import re
from functools import lru_cache

from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from backend.llm.formats import IDK, Parsed, is_idk, parse_passages, parse_short_answer
from backend.methods.base import Method, Outcome, RunContext, gather_all
from backend.methods.estimate import CallEstimate, Sizes
from backend.methods.bridge import prompts
from backend.methods.bridge.demos import DEMOS
from backend.methods.bridge.parse import (LETTERS, paper_answers, paper_option, paper_reflection, paper_soft_bias,
                                          paper_sub_queries, parse_soft_bias, read_answers, read_option,
                                          read_reflection, read_sub_queries)
from backend.methods.bridge.scorer import KnowledgeScorer
from backend.methods.bridge.tree import ALPHA, BETA, decide
from backend.schema import (BridgeCycle, BridgeDemo, BridgeKnowledge, BridgeSubQuery, BridgeTrace, LLMCall,
                            Question)
from backend.llm.tasks import TaskSpec
from backend.methods.bridge.story import bridge_story
from backend.methods.spec import MethodSpec, register

BIAS_RANGE = (0.1, 0.9)
#: What the responder reads at each leaf (§3 Step 5): FA all, FI internal + generated, FE external + retrieved.
LEAF_KNOWLEDGE = {"FA": ("K_int", "K_gen", "K_ext", "K_ret"), "FI": ("K_int", "K_gen"), "FE": ("K_ext", "K_ret"),
                  "RA": ()}
IDK_TEXT = "None"


@lru_cache(maxsize=1)
def _demo_vectors() -> np.ndarray:
    """The demonstration pool's embeddings, computed once per process (not once per question)."""
    from backend.embeddings import encode

    return encode([q for q, _ in DEMOS])


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _show_bias(p: Parsed) -> str:
    return f"r_p = {p.value[0]:g}" + (" (the default: unreadable)" if p.status == "unreadable" else "")


def _show_list(p: Parsed, expected: int, width: int = 60) -> str:
    """A list read, short: how many items, and the first ones cut to ``width`` characters."""
    items = list(p.value or [])
    if not items:
        return f"nothing (unreadable): the default for all {expected}"
    head = "; ".join(t if len(t) <= width else t[:width - 1] + "…" for t in items[:2])
    return f"{len(items)} of {expected}: {head}" + ("; …" if len(items) > 2 else "")


def _show_option(p: Parsed, options: list[str]) -> str:
    if p.value is None:
        return "no option (invalid)"
    return f"{LETTERS[p.value]}. {options[p.value]}" if p.value < len(options) else LETTERS[p.value]


class BRIDGE(Method):
    """Soft bias -> sub-queries split between retrieval and generation -> S1-S4 -> decision tree (FA / FI / FE /
    RA, or reflect and try again) -> the responder with the knowledge the leaf allows."""

    name = "bridge"
    steps = ("allocate", "internal_knowledge", "sub_queries", "generate_cycle_{round}", "generate_each_{round}",
             "reflect_{round}", "respond")
    needs_index = True   # the multi-query retriever searches the whole dataset in every evidence mode (Runner.retriever)

    def __init__(self, n: int = 10, alpha: float = ALPHA, beta: float = BETA, max_reflections: int = 3,
                 weights: tuple[float, float, float] = (0.2, 0.4, 0.4), k_demos: int = 5, allocator: str = "icl",
                 max_tokens: int = 512):
        if n < 1 or max_reflections < 0 or k_demos < 0:
            raise ValueError("n must be at least 1, max_reflections and k_demos at least 0")
        if allocator not in ("icl", "fixed"):
            raise ValueError(f"allocator must be 'icl' or 'fixed' (r_p = g_p = 1, the paper's ablation), got "
                             f"{allocator!r}")
        self.n, self.alpha, self.beta, self.max_reflections = n, alpha, beta, max_reflections
        # a list, so the parameters survive a JSON round trip unchanged
        self.weights, self.k_demos, self.allocator, self.max_tokens = list(weights), k_demos, allocator, max_tokens

    # -- Step 1: Soft Bias Allocator (ICL) ------------------------------------------------------------------

    def demos(self, question: str) -> list[BridgeDemo]:
        """The k nearest demonstrations (MiniLM cosine) with their pseudo soft labels."""
        if not self.k_demos:
            return []
        from backend.embeddings import encode

        sims = _demo_vectors() @ encode([question])[0]
        top = np.argsort(-sims, kind="stable")[: self.k_demos]
        return [BridgeDemo(question=DEMOS[i][0], similarity=round(float(sims[i]), 4), retrieve=DEMOS[i][1])
                for i in top]

    async def allocate(self, ctx: RunContext, question: Question, trace: BridgeTrace) -> LLMCall | None:
        if self.allocator == "fixed":
            trace.r_p = trace.g_p = 1.0
            trace.bias_note = "w/o Allocator (the paper's ablation): r_p = g_p = 100%"
            return None
        trace.demos = await asyncio.to_thread(self.demos, question.question)
        examples = "\n\n".join(prompts.DEMO.format(question=d.question, r=d.retrieve, g=100 - d.retrieve)
                               for d in trace.demos)
        prompt = prompts.ALLOCATOR.format(examples=examples, question=question.question)
        call = await ctx.client.acomplete(_user(prompt),
                                          task="soft_bias", step="allocate", question=question.question,
                                          max_tokens=self.max_tokens, fields={"memory": question.internal_knowledge})
        trace.bias_raw = call.response or ""
        parsed = ctx.readings.decide(   # unreadable: the default r_p = 0.5, named in the note
            "allocate", parse_soft_bias(trace.bias_raw), paper_soft_bias(trace.bias_raw), call_id=call.id,
            key=lambda p: p.value, show=_show_bias, what="soft bias")
        r_p = parsed.value[0]
        clamped = min(BIAS_RANGE[1], max(BIAS_RANGE[0], r_p))
        trace.r_p, trace.g_p = round(clamped, 4), round(1 - clamped, 4)
        notes = [parsed.note] if parsed.note else []
        if clamped != r_p:
            notes.append(f"r_p {r_p:.2f} clamped to [{BIAS_RANGE[0]}, {BIAS_RANGE[1]}]")
        trace.bias_note = "; ".join(notes) or None
        analysis = [ln.split(":", 1)[1].strip() for ln in trace.bias_raw.splitlines()
                    if ln.lower().startswith("analysis")]
        trace.bias_analysis = analysis[0] if analysis else ""
        return call

    # -- K_int (closed book) and K_ext ------------------------------------------------------------------------

    async def internal(self, ctx: RunContext, question: Question) -> tuple[str, LLMCall]:
        call = await ctx.client.acomplete(_user(prompts.INTERNAL.format(question=question.question)),
                                          task="generate_passage", step="internal_knowledge",
                                          question=question.question, max_tokens=self.max_tokens,
                                          fields={"memory": question.internal_knowledge, "max_passages": 1})
        # our prompt (the paper takes K_int from TRD): one reader for both readings
        kept = ctx.readings.same("internal_knowledge", parse_passages(call.response or "", max_passages=1),
                                 call_id=call.id).value.kept
        return (kept[0] if kept else IDK_TEXT), call

    # -- Step 2: knowledge collection ------------------------------------------------------------------------

    async def sub_queries(self, ctx: RunContext, question: Question) -> tuple[list[str], LLMCall]:
        call = await ctx.client.acomplete(_user(prompts.SUB_QUERIES.format(number=self.n, question=question.question)),
                                          task="sub_queries", step="sub_queries", question=question.question,
                                          max_tokens=self.max_tokens, fields={"n": self.n})
        raw, q = call.response or "", question.question
        read = ctx.readings.decide("sub_queries", read_sub_queries(raw, n=self.n), paper_sub_queries(raw, n=self.n),
                                   call_id=call.id, key=lambda p: self._fill(p.value, q),
                                   show=lambda p: _show_list(p, self.n), what="sub-queries")
        return self._fill(read.value, q), call

    def _fill(self, items: list[str], question: str) -> list[str]:
        items = [q for q in items if q.strip()][: self.n]
        return items + [question] * (self.n - len(items))   # short list: the original question fills in (ours)

    async def collect(self, ctx: RunContext, question: Question, trace: BridgeTrace, cycle: BridgeCycle,
                      queries: list[str], parents: list[str]) -> None:
        """The first s_r sub-queries to the retriever (top-1 each), the first s_g to the generator (one call),
        concurrently."""
        cycle.sub_queries = [BridgeSubQuery(rank=k, text=q, to_retriever=k <= trace.s_r, to_generator=k <= trace.s_g)
                             for k, q in enumerate(queries, start=1)]
        gen_queries, ret_queries = queries[: trace.s_g], queries[: trace.s_r]

        def retrieve() -> list[BridgeKnowledge]:
            out = []
            found = (ctx.retriever.search_many(ret_queries, k=1) if ctx.retriever is not None
                     else [[] for _ in ret_queries])  # one embedding pass and one index query for all sub-queries
            for q, hits in zip(ret_queries, found):
                doc = ctx.retriever.document(hits[0].doc_id) if hits else None
                out.append(BridgeKnowledge(sub_query=q, text=doc.text if doc else IDK_TEXT, idk=doc is None,
                                           document_id=doc.id if doc else None,
                                           retrieval_score=round(hits[0].score, 4) if hits else None))
            return out

        async def generate() -> list[BridgeKnowledge]:
            if not gen_queries:
                return []
            call = await ctx.client.acomplete(
                _user(prompts.GENERATOR.format(queries=prompts.numbered(gen_queries))), task="multi_answer",
                step=f"generate_cycle_{cycle.cycle}", question=question.question, parents=parents,
                max_tokens=self.max_tokens,
                fields={"sub_queries": gen_queries, "memory": question.internal_knowledge})
            cycle.call_ids.append(call.id)
            raw = call.response or ""
            read = ctx.readings.decide(call.step, read_answers(raw, sub_queries=gen_queries),
                                       paper_answers(raw, sub_queries=gen_queries), call_id=call.id,
                                       key=lambda p: p.value, show=lambda p: _show_list(p, len(gen_queries)),
                                       what="generated answers")
            answers = read.value
            if len(answers) != len(gen_queries):   # spec §8.9: one call per sub-query instead
                trace.notes.append(f"cycle {cycle.cycle}: the generator's reply gave {len(answers)} answers for "
                                   f"{len(gen_queries)} sub-queries, so each sub-query was asked on its own "
                                   "(spec §8.9)")
                answers = await gather_all(*(self.generate_one(ctx, question, cycle, q, parents)
                                             for q in gen_queries))
            return [BridgeKnowledge(sub_query=q, text=a, idk=is_idk(a)) for q, a in zip(gen_queries, answers)]

        cycle.k_ret, cycle.k_gen = await gather_all(asyncio.to_thread(retrieve), generate())

    async def generate_one(self, ctx: RunContext, question: Question, cycle: BridgeCycle, sub_query: str,
                           parents: list[str]) -> str:
        """Spec §8.9's fallback: the multi-query generator's prompt with this one sub-query; its answer, or "I don't
        know" when the reply gives none (ours; the first when it gives several, ours)."""
        call = await ctx.client.acomplete(
            _user(prompts.GENERATOR.format(queries=prompts.numbered([sub_query]))), task="multi_answer",
            step=f"generate_each_{cycle.cycle}", question=question.question, parents=parents,
            max_tokens=self.max_tokens, fields={"sub_queries": [sub_query], "memory": question.internal_knowledge})
        cycle.call_ids.append(call.id)
        raw = call.response or ""
        first = lambda p: p.value[0] if p.value else IDK   # noqa: E731
        read = ctx.readings.decide(call.step, read_answers(raw, sub_queries=[sub_query]),
                                   paper_answers(raw, sub_queries=[sub_query]), call_id=call.id, key=first,
                                   what="generated answer")
        return first(read)

    # -- Step 3: Knowledge Scorer; Step 4: the tree ----------------------------------------------------------

    def score(self, trace: BridgeTrace, cycle: BridgeCycle, scorer: KnowledgeScorer) -> None:
        """S1-S4 with one scorer per question: each distinct text is embedded once, whatever the cycle."""
        gen, ret = [k.text for k in cycle.k_gen], [k.text for k in cycle.k_ret]
        scorer.prepare([trace.k_int, trace.k_ext, *gen, *ret])
        for k in cycle.k_gen:
            k.score = scorer.score(k.text, trace.k_int)
        for k in cycle.k_ret:
            k.score = scorer.score(k.text, trace.k_ext)
        cycle.s1 = scorer.score(trace.k_int, trace.k_ext)
        cycle.s2 = scorer.mean_score(gen, trace.k_int)
        cycle.s3 = scorer.mean_score(ret, trace.k_ext)
        cycle.s4 = scorer.mean_pairs(gen, ret)
        cycle.outcome, cycle.path, cycle.t_ret, cycle.t_llm = decide(
            trace.r_p, trace.g_p, cycle.s1.total, cycle.s2.total, cycle.s3.total, cycle.s4.total, self.alpha,
            self.beta)
        trace.texts_embedded = scorer.texts_embedded
        trace.embedding_passes = scorer.sentence_passes + scorer.token_passes

    async def reflect(self, ctx: RunContext, question: Question, trace: BridgeTrace, last: BridgeCycle,
                      k: int) -> tuple[str, list[str], LLMCall]:
        text = prompts.REFLECT.format(question=question.question, internal=trace.k_int, external=trace.k_ext,
                                      generated=prompts.numbered([g.text for g in last.k_gen]) or IDK_TEXT,
                                      retrieved=prompts.numbered([r.text for r in last.k_ret]) or IDK_TEXT,
                                      number=self.n)
        passages = [{"id": "K_int", "source": "memory", "text": trace.k_int},
                    {"id": "K_ext", "source": "external", "text": trace.k_ext},
                    *({"id": r.document_id or "K_ret", "source": "external", "text": r.text} for r in last.k_ret)]
        call = await ctx.client.acomplete(
            _user(text), task="reflect", step=f"reflect_{k}", question=question.question, parents=last.call_ids,
            max_tokens=self.max_tokens,
            fields={"sub_queries": [s.text for s in last.sub_queries], "answers": [g.text for g in last.k_gen],
                    "passages": passages, "n": self.n})
        raw, q = call.response or "", question.question
        read = ctx.readings.decide(call.step, read_reflection(raw, n=self.n), paper_reflection(raw, n=self.n),
                                   call_id=call.id, key=lambda p: self._fill(p.value[1], q),
                                   show=lambda p: _show_list(Parsed(p.value[1], p.status, p.note), self.n),
                                   what="new sub-queries")
        analysis, new = read.value
        return analysis, self._fill(new, q), call

    # -- Step 5: the responder -----------------------------------------------------------------------------

    async def respond(self, ctx: RunContext, question: Question, trace: BridgeTrace, parents: list[str]) -> None:
        last = trace.cycles[-1]
        sets = {"K_int": [trace.k_int], "K_gen": [g.text for g in last.k_gen if not g.idk],
                "K_ext": [trace.k_ext], "K_ret": list(dict.fromkeys(r.text for r in last.k_ret if not r.idk))}
        trace.knowledge_used = list(LEAF_KNOWLEDGE[trace.leaf])
        texts = [t for name in trace.knowledge_used for t in sets[name] if t and t != IDK_TEXT]
        knowledge = "\n".join(texts) or IDK_TEXT
        fields = {"passages": [{"id": f"k{i}", "source": "external", "text": t} for i, t in enumerate(texts, 1)]}
        if question.options:
            call = await ctx.client.acomplete(
                _user(prompts.RESPONDER.format(knowledge=knowledge, question=question.question,
                                               options=prompts.options_text(question.options))),
                task="select_option", step="respond", question=question.question, parents=parents,
                max_tokens=self.max_tokens, fields={**fields, "options": question.options})
            trace.response_raw = call.response or ""
            parsed = ctx.readings.decide("respond", read_option(trace.response_raw, question.options),
                                         paper_option(trace.response_raw, question.options), call_id=call.id,
                                         key=lambda p: p.value, show=lambda p: _show_option(p, question.options),
                                         what="option")
            if parsed.value is not None:
                trace.option = "ABCDEFGH"[parsed.value]
                chosen = question.options[parsed.value]
                trace.answer = None if is_idk(chosen) else chosen
            else:   # spec P17: no readable option is an invalid answer, counted wrong, not a refusal
                trace.invalid = True
            if parsed.note:
                trace.notes.append(f"responder: {parsed.note}")
            return
        call = await ctx.client.acomplete(
            _user(prompts.RESPONDER_FREE.format(knowledge=knowledge, question=question.question)),
            task="keyword_answer", step="respond", question=question.question, parents=parents,
            max_tokens=self.max_tokens, fields=fields)
        trace.response_raw = call.response or ""
        # our prompt (datasets without options; the paper has none): one reader for both readings
        trace.answer = ctx.readings.same("respond", parse_short_answer(trace.response_raw), call_id=call.id).value

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        trace = BridgeTrace(n=self.n, alpha=self.alpha, beta=self.beta, max_reflections=self.max_reflections,
                            weights=dict(zip(("sparse", "dense", "colbert"), self.weights)), allocator=self.allocator)
        docs = ctx.evidence(question, k=1)
        trace.k_ext = "\n".join(d.text for d in docs) or IDK_TEXT
        trace.k_ext_ids = [d.id for d in docs]
        # the allocator, K_int and the sub-queries need nothing from each other: one round trip
        bias_call, (trace.k_int, int_call), (queries, sub_call) = await gather_all(
            self.allocate(ctx, question, trace), self.internal(ctx, question), self.sub_queries(ctx, question))
        trace.k_int_idk = trace.k_int == IDK_TEXT
        trace.s_r, trace.s_g = math.ceil(round(trace.r_p * self.n, 6)), math.ceil(round(trace.g_p * self.n, 6))
        parents, scorer = [sub_call.id], KnowledgeScorer(weights=tuple(self.weights))
        for k in range(self.max_reflections + 1):
            cycle = BridgeCycle(cycle=k)
            if k:   # reflection: new sub-queries from the contradiction analysis, same soft bias
                cycle.analysis, queries, call = await self.reflect(ctx, question, trace, trace.cycles[-1], k)
                cycle.call_ids.append(call.id)
                parents = [call.id]
            await self.collect(ctx, question, trace, cycle, queries, parents)
            await asyncio.to_thread(self.score, trace, cycle, scorer)
            trace.cycles.append(cycle)
            if cycle.outcome != "REFLECT":
                break
        last = trace.cycles[-1]
        trace.leaf = "RA" if last.outcome == "REFLECT" else last.outcome
        trace.defaulted_to_ra = last.outcome == "REFLECT"
        if trace.defaulted_to_ra:
            trace.notes.append(f"{self.max_reflections} reflection cycles did not settle it: RA (the paper's default)")
        if trace.leaf != "RA":
            inputs = [c for c in [bias_call and bias_call.id, int_call.id, *last.call_ids] if c]
            await self.respond(ctx, question, trace, inputs)
        answers = [trace.answer] if trace.answer else []
        read = [d for d in docs if "K_ext" in trace.knowledge_used]
        if "K_ret" in trace.knowledge_used and ctx.retriever is not None:
            read += [ctx.retriever.document(r.document_id) for r in last.k_ret if r.document_id]
        return Outcome(answers, not answers and not trace.invalid, trace,
                       read=tuple({d.id: d for d in read}.values()))


# -- what a run will send (MethodSpec.estimate) ----------------------------------------------------------------

#: The allocator's analysis and a reflection's contradiction analysis: a sentence or two ([ours]).
ANALYSIS_TOKENS = 30
#: A short answer (a generator line, the free-form responder) or "Correct Option: B".
ANSWER_TOKENS = 8


def estimate(method: BRIDGE, question: Question, sizes: Sizes) -> CallEstimate:
    """Allocator (ICL), K_int and the sub-queries; the generator once per cycle, and one call per sub-query in a
    cycle whose generator reply gives the wrong number of answers (spec §8.9, conditional); a reflection before each
    further cycle (at most ``max_reflections``, conditional); the responder unless the leaf is RA (conditional). s_r
    and s_g are taken at their largest (⌈0.9·n⌉, or n without the allocator), so the estimate is an upper bound."""
    est = CallEstimate(method=method.name)
    q, n, cap = question.question, method.n, method.max_tokens
    share = n if method.allocator == "fixed" else math.ceil(round(BIAS_RANGE[1] * n, 6))   # s_r, s_g at most
    passage = sizes.reply(sizes.document_tokens, cap)             # K_int: a passage like the documents
    k_ext = sum(sizes.evidence(question, k=1))
    paraphrase = sizes.tokens(q) + 2                                # a numbered question like the original
    answers = sizes.reply(share * (ANSWER_TOKENS + 2), cap)          # the generator's numbered answers, one reply
    retrieved = share * sizes.document_tokens                       # K_ret: top-1 document per sub-query
    if method.allocator == "icl":
        examples = "\n\n".join(prompts.DEMO.format(question=d, r=r, g=100 - r) for d, r in DEMOS[:method.k_demos])
        bias = sizes.tokens("Probability of retrieving external knowledge: 80%\nProbability of answering directly: 20%")
        est.add("allocate", 1, sizes.tokens(prompts.ALLOCATOR.format(examples=examples, question=q)),
                sizes.reply(ANALYSIS_TOKENS + bias, cap))
    est.add("internal_knowledge", 1, sizes.tokens(prompts.INTERNAL.format(question=q)), passage)
    queries = sizes.reply(n * paraphrase, cap)
    est.add("sub_queries", 1, sizes.tokens(prompts.SUB_QUERIES.format(number=n, question=q)), queries)
    generator = sizes.tokens(prompts.GENERATOR.format(queries=prompts.numbered([q] * share)))
    one_query = sizes.tokens(prompts.GENERATOR.format(queries=prompts.numbered([q])))
    one_answer = sizes.reply(ANSWER_TOKENS + 2, cap)
    reflect = (sizes.tokens(prompts.REFLECT.format(question=q, internal="", external="", generated="", retrieved="",
                                                   number=n)) + passage + k_ext + answers + retrieved)
    for k in range(method.max_reflections + 1):
        if k:
            est.add(f"reflect_{k}", 1, reflect, sizes.reply(ANALYSIS_TOKENS + n * paraphrase, cap), conditional=True)
        est.add(f"generate_cycle_{k}", 1, generator, answers, conditional=k > 0)
        # spec §8.9: when the generator's answers do not match its sub-queries, one call per sub-query
        est.add(f"generate_each_{k}", share, share * one_query, share * one_answer, conditional=True)
    template = (prompts.RESPONDER.format(knowledge="", question=q, options=prompts.options_text(question.options))
                if question.options else prompts.RESPONDER_FREE.format(knowledge="", question=q))
    est.add("respond", 1, sizes.tokens(template) + passage + answers + k_ext + retrieved,
            sizes.reply(ANSWER_TOKENS, cap), conditional=True)
    est.notes.append(f"an upper bound: up to {method.max_reflections} reflection cycles, s_r = s_g = {share}, one "
                     "generator call per sub-query in every cycle (spec §8.9's fallback), and the responder reading "
                     "all four knowledge sets (FA); RA makes no responder call")
    return est


# The replies as JSON objects (structured output, ``backend.llm.structured``), keyed as the readers read JSON.

class SoftBiasReply(BaseModel):
    analysis: str
    probability_of_retrieving_external_knowledge: float = Field(description="between 0 and 1")
    probability_of_answering_directly: float = Field(description="between 0 and 1; the two sum to 1")


def _soft_bias(p: tuple[float, float], reply: str = "", **_) -> SoftBiasReply:
    """The probabilities read, with the analysis as the reply wrote it (a JSON reply's, or the text before the
    probabilities after "Analysis:")."""
    try:
        analysis = str(json.loads(reply)["analysis"])
    except (ValueError, TypeError, KeyError):
        analysis = re.split(r"^\W*probability\b", reply, maxsplit=1, flags=re.I | re.M)[0]
        analysis = re.sub(r"^\W*analysis\W*:", "", analysis.strip(), flags=re.I).strip()
    return SoftBiasReply(analysis=analysis, probability_of_retrieving_external_knowledge=p[0],
                         probability_of_answering_directly=p[1])


class SubQueriesReply(BaseModel):
    sub_queries: list[str]


class AnswersReply(BaseModel):
    answers: list[str] = Field(description="one answer per question, in order; \"I don't know\" where unknown")


class ReflectionReply(BaseModel):
    analysis: str
    new_questions: list[str]


class OptionReply(BaseModel):
    correct_option: Literal["A", "B", "C", "D", "E", "F", "G", "H"]


def _warm() -> None:
    """bm25s (0.2 s to import): the Knowledge Scorer's sparse mode and the corpus retriever (``backend.corpus``)."""
    import bm25s  # noqa: F401


SPEC = register(MethodSpec(
    BRIDGE, BridgeTrace, title="BRIDGE", color="#ef6c00", order=50, estimate=estimate, story=bridge_story, warm=_warm,
    paper_metric='squad_em',  # its paper's own metric (backend.scoring.PAPER_METRICS)
    description="a soft bias between memory and retrieval, sub-queries, knowledge scores S1–S4 and a decision "
                "tree that picks what to answer from",
    tasks=(TaskSpec("soft_bias", ("memory",), parse_soft_bias,
                    "analysis, then probabilities of retrieving vs answering directly", schema=SoftBiasReply,
                    as_schema=_soft_bias, reply_tokens=160),
           TaskSpec("sub_queries", ("n",), read_sub_queries, "n numbered paraphrases of the question",
                    schema=SubQueriesReply, as_schema=lambda qs, **_: SubQueriesReply(sub_queries=qs), reply_tokens=256),
           TaskSpec("multi_answer", ("sub_queries", "memory"), read_answers,
                    "one numbered answer per sub-query, from memory",
                    schema=AnswersReply, as_schema=lambda answers, **_: AnswersReply(answers=answers), reply_tokens=320),
           TaskSpec("reflect", ("sub_queries", "answers", "passages", "n"), read_reflection,
                    "a short contradiction analysis, then n new numbered questions", schema=ReflectionReply,
                    as_schema=lambda r, **_: ReflectionReply(analysis=r[0], new_questions=r[1]), reply_tokens=384),
           TaskSpec("select_option", ("options", "passages"), read_option, "'Correct Option: X'",
                    schema=OptionReply, as_schema=lambda k, **_: OptionReply(correct_option=LETTERS[k]), reply_tokens=48)),
    step_roles={"allocate": "Soft Bias Allocator", "internal_knowledge": "K_int: closed-book passage (ours)",
                "sub_queries": "sub-query generation", "generate_cycle_{round}": "multi-query generator, cycle {round}",
                "generate_each_{round}": "multi-query generator, one sub-query a call (spec §8.9), cycle {round}",
                "reflect_{round}": "reflection {round}", "respond": "responder"}))
