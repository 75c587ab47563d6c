"""RA-RAG the method: stage 2 on one question (§3.4 κ-RRSS + eq. 1 WMV) over the weights stage 1 prepared."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Sequence
from typing import Any, Literal

from backend.methods.base import Method, Outcome, Progress, RunContext, gather_all
from backend.methods.estimate import CallEstimate, Sizes
from backend.methods.ra_rag.answering import (ENTAILMENT_PROMPT, KEYWORD_SYSTEM, answer_source, cluster_by_entailment,
                                              keyword_prompt)
from backend.methods.ra_rag.stage1 import CACHE_FOLDER, TIES, Ties, calibrate, calibration_key
from backend.methods.ra_rag.voting import Vote, kappa_rrss, rank_sources, weighted_vote
from backend.methods.reading import DEFAULT_READING, Reading, other
from backend.schema import (Dataset, Question, RARAGTrace, RASourceAnswer, RAVote, RAWalkStep, ReliabilityEstimate,
                            StageReadings)
from backend.methods.ra_rag.story import ra_rag_story
from backend.methods.spec import MethodSpec, register

Variant = Literal["rrss", "wmv", "mv", "oracle_wmv"]
#: Stage-1 reading differences kept as examples in the estimate (the count covers all of them).
STAGE_EXAMPLES = 20
VARIANTS: tuple[str, ...] = ("rrss", "wmv", "mv", "oracle_wmv")


class RARAG(Method):
    """RA-RAG (see the package docstring for the paper's steps and every [ours] choice). ``ties``: stage 1's tie rule,
    ``"skip"`` ([ours], default: order-free) or ``"source_order"`` (the released code's behaviour)."""

    name = "ra_rag"
    steps = ("source_answer", "compare_answer", "calibration_answer", "entailment")
    prepared_type = ReliabilityEstimate
    prepared_folder = CACHE_FOLDER
    prepare_label = "RA-RAG stage 1 (source reliability estimation)"

    def __init__(self, kappa: int = 4, top_k: int = 3, align_threshold: float = 0.9, variant: Variant = "rrss",
                 clustering: Literal["exact", "entailment"] = "exact", calibration_size: int = 200,
                 max_iter: int = 100, scale: float | None = None, stable_init: bool = True, ties: Ties = "skip",
                 compare_all: bool = False, true_reliability: dict[str, float] | None = None):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if variant == "oracle_wmv" and not true_reliability:
            raise ValueError("oracle_wmv needs true_reliability={source: p_i} passed by evaluation code")
        if clustering not in ("exact", "entailment"):
            raise ValueError(f"clustering must be 'exact' or 'entailment', got {clustering!r}")
        self.kappa, self.top_k, self.align_threshold = kappa, top_k, align_threshold
        self.variant, self.clustering, self.calibration_size = variant, clustering, calibration_size
        if ties not in TIES:
            raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
        self.max_iter, self.scale, self.compare_all = max_iter, scale, compare_all
        self.stable_init, self.ties = stable_init, ties
        self.true_reliability = dict(true_reliability) if true_reliability else None

    def calibration_params(self, reading: Reading = DEFAULT_READING) -> dict[str, Any]:
        """Everything stage 1's result depends on besides data, model and evidence mode. The reading of the
        calibration replies decides which answers f_align keeps, so it is one of them; [ours] it is written only
        when it is not the default (``tolerant``), so the keys of existing estimates (the shipped ones included)
        stay valid and a ``paper`` run never reuses a tolerant estimate."""
        params = {"top_k": self.top_k, "align_threshold": self.align_threshold, "clustering": self.clustering,
                  "max_iter": self.max_iter, "scale": self.scale, "stable_init": self.stable_init, "ties": self.ties,
                  "prompt_sha256": hashlib.sha256(KEYWORD_SYSTEM.encode()).hexdigest()[:16]}
        if reading != DEFAULT_READING:
            params["reading"] = reading
        return params

    async def _answer(self, q: Question, source: str, ctx: RunContext, step: str, per_document: bool = False):
        return await answer_source(q, source, ctx, top_k=self.top_k, threshold=self.align_threshold,
                                   step=step, per_document=per_document)

    # -- stage 1: the dataset-level preparation (Method.prepare) ---------------------------------------

    def calibration_questions(self, dataset: Dataset) -> list[Question]:
        return dataset.questions[:self.calibration_size]

    def prepare_key(self, dataset: Dataset, ctx: RunContext) -> str | None:
        """None when documents name no source (nothing recurs across questions, so nothing to estimate)."""
        if not dataset.multi_source:
            return None
        return calibration_key(self.calibration_questions(dataset), dataset.source_names(),
                               ctx.client.identity, ctx.evidence_mode, self.calibration_params(ctx.readings.reading))

    async def prepare(self, dataset: Dataset, ctx: RunContext, on_progress: Progress | None = None
                      ) -> ReliabilityEstimate:
        """Algorithm 1 over the first ``calibration_size`` questions of the (truth-stripped) dataset."""
        return await self.calibrate(self.calibration_questions(dataset), dataset.source_names(), ctx, on_progress,
                                    dataset=dataset.name)

    async def calibrate(self, questions: Sequence[Question], sources: Sequence[str], ctx: RunContext,
                        on_progress: Progress | None = None, dataset: str = "") -> ReliabilityEstimate:
        """Stage 1 on explicit unlabelled ``questions`` and ``sources`` (``stage1.calibrate``), the replies read
        by ``ctx.readings``; the calibration answers the other reading would read differently are counted in the
        estimate (``ReliabilityEstimate.readings``), not on any question's result: the estimate serves them all."""
        cluster = None
        if self.clustering == "entailment":
            async def cluster(q: Question, row: list[RASourceAnswer]):
                return await cluster_by_entailment(q.question, row, ctx)
        readings = ctx.readings
        decisions, first = readings.decisions, len(readings.differences)
        position: dict[str, tuple[int, int]] = {}       # call id -> (question, source): the examples' order
        order = {q.id: i for i, q in enumerate(questions)}
        names = {s: i for i, s in enumerate(sources)}

        async def answer(q: Question, s: str) -> RASourceAnswer:
            row = await self._answer(q, s, ctx, "calibration_answer")
            if row.call_id:
                position[row.call_id] = (order[q.id], names[s])
            return row

        params = self.calibration_params(readings.reading)
        est = await calibrate(questions, sources, ctx, answer, cluster=cluster, params=params, scale=self.scale,
                              max_iter=self.max_iter, stable_init=self.stable_init, ties=self.ties,
                              on_progress=on_progress)
        key = calibration_key(questions, sources, ctx.client.identity, ctx.evidence_mode, params)
        differ = readings.differences[first:]
        summary = None
        if differ:
            differ = sorted(differ, key=lambda d: position.get(d.call_id or "", (len(order), 0)))
            summary = StageReadings(reading=readings.reading, decisions=readings.decisions - decisions,
                                    differences=len(differ), examples=differ[:STAGE_EXAMPLES])
        return est.model_copy(update={"dataset": dataset, "model": ctx.client.config.model, "key": key,
                                      "readings": summary})

    # -- stage 2 ------------------------------------------------------------------------------------

    def _setting(self, q: Question, ctx: RunContext) -> tuple[list[str], dict[str, float], dict, bool, str]:
        """(sources, weights v, estimates ŵ, per-document?, where the weights came from)."""
        if not ctx.sources and all(d.source is None for d in q.documents):
            # [ours] ties in MV fall to the lower source index; dataset order can carry truth (RAMDocs lists
            # a correct document first in 97 of 100 dev questions), so documents are put in a fixed
            # pseudo-random order first: a hash of question and document, blind to position and labels
            names = sorted((d.source_name for d in q.documents),
                           key=lambda n: hashlib.sha256(f"{q.question}\x00{n}".encode()).hexdigest())
            return names, dict.fromkeys(names, 1.0), {}, True, (
                "documents name no source: each document is its own source; nothing to estimate, so "
                "RA-RAG is majority voting (v = 1) with f_align over all documents, ties broken in a fixed "
                "pseudo-random document order")
        names = list(ctx.sources) or list(dict.fromkeys(d.source_name for d in q.documents))
        est = ctx.prepared
        if est is None:
            return names, dict.fromkeys(names, 1.0), {}, False, (
                "no stage-1 weights in the run context: v = 1 for every source (= MV)")
        weights, estimated = est.weights(), est.estimated()
        note = (f"stage 1 on {est.questions} unlabelled calibration questions of {est.dataset or 'the dataset'} "
                f"({est.model or 'model'}, evidence {est.evidence_mode}; {est.iterations} iterations, "
                f"{'converged' if est.converged else 'stopped at a cycle' if est.cycle else 'not converged'})")
        if est.readings is not None and est.readings.differences:
            r = est.readings
            note += (f"; {r.differences} of its {r.decisions} calibration answers would be read differently by the "
                     f"{other(r.reading)} reading")
        return names, {s: weights.get(s, 0.0) for s in names}, estimated, False, note

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        first = len(ctx.readings.differences)
        outcome = await self._answer_question(question, ctx)
        # [ours] the sources are asked concurrently, so their reading differences were recorded in completion order:
        # put this question's in walk order (a result must not depend on timing)
        rank = {s.call_id: s.rank for s in outcome.trace.sources if s.call_id}
        ctx.readings.differences[first:] = sorted(ctx.readings.differences[first:],
                                                  key=lambda d: rank.get(d.call_id, len(rank) + 1))
        return outcome

    async def _answer_question(self, question: Question, ctx: RunContext) -> Outcome:
        names, weights, estimated, per_doc, note = self._setting(question, ctx)
        variant = "mv" if per_doc else self.variant
        ranked = names if per_doc else rank_sources(names, weights)
        asked: dict[str, asyncio.Task] = {}

        def ask(source: str, step: str = "source_answer") -> Awaitable[RASourceAnswer]:
            if source not in asked:
                asked[source] = asyncio.ensure_future(self._answer(question, source, ctx, step, per_doc))
            return asked[source]

        walk: list[RAWalkStep] = []
        if variant != "rrss":
            await gather_all(*(ask(s) for s in ranked))
        if not per_doc:
            walk, _ = await kappa_rrss(ranked, ask, self.kappa)
        walked = {w.source for w in walk if w.status != "not_queried"}
        walk_calls = sum(asked[s].result().called for s in walked)
        if variant == "rrss" and self.compare_all:
            await gather_all(*(ask(s, "compare_answer") for s in ranked))
        rows = {s: t.result() for s, t in asked.items()}
        trace = RARAGTrace(variant=variant, evidence_mode=ctx.evidence_mode, per_document=per_doc, kappa=self.kappa,
                           top_k=self.top_k, align_threshold=self.align_threshold, clustering=self.clustering,
                           weights_note=note, sources=[], walk=walk, walk_calls=walk_calls,
                           compare_calls=sum(r.called for s, r in rows.items() if s not in walked)
                           if variant == "rrss" else 0)
        if self.clustering == "entailment":
            trace.entailments = await cluster_by_entailment(question.question, [rows[s] for s in ranked if s in rows],
                                                            ctx)
        for rank, s in enumerate(ranked, start=1):
            row = rows.get(s) or RASourceAnswer(source=s, rank=rank, weight=0.0)
            row.rank, row.weight, row.estimated = rank, weights[s], estimated.get(s)
            trace.sources.append(row)
        for w in walk:
            w.weight = weights[w.source]
        self._votes(trace, names, weights, variant)
        if variant == "rrss" and len(walked) < len(names) and not self.compare_all:
            trace.notes.append(f"κ-RRSS queried {len(walked)} of {len(names)} sources; the rest were never queried")
        if ctx.prepared is None or per_doc:
            trace.notes.append(note)
        if unknown := sorted({d.source_name for d in question.documents} - set(names)):
            # [ours] RA-RAG queries the dataset's sources (§3.4); a source stage 1 never saw (a what-if edit or an
            # attack that adds one) is not among them, so its documents are never read
            trace.notes.append(f"not among the dataset's sources, so never queried: {', '.join(unknown)}")
        final = trace.answers.get(variant)
        trace.final_answer = final
        return Outcome([final] if final else [], final is None, trace, support=self._support_of(trace, variant))

    @staticmethod
    def _support_of(trace: RARAGTrace, variant: str) -> dict[str, list[str]]:
        """The final answer rests on the documents of the counted sources that voted for its cluster."""
        if trace.final_answer is None:
            return {}
        winner = next((s.cluster for s in trace.sources if s.filtered_answer == trace.final_answer), None)
        counted = {w.source for w in trace.walk if w.status == "selected"} if variant == "rrss" else None
        docs = [d for s in trace.sources if s.cluster is not None and s.cluster == winner
                and (counted is None or s.source in counted) for d in s.documents]
        return {trace.final_answer: docs}

    def _votes(self, trace: RARAGTrace, names: list[str], weights: dict[str, float], variant: str) -> None:
        """Eq. 1 per aggregation over the answers at hand: MV/WMV/oracle need every source answered."""
        rows = {r.source: r for r in trace.sources}
        everyone = all(r.queried for r in rows.values())
        selected = {w.source for w in trace.walk if w.status == "selected"}
        keys = [rows[s].cluster for s in names]
        tallies: dict[str, Vote] = {}
        if everyone:
            tallies["mv"] = weighted_vote(keys, [1.0] * len(names))
            if not trace.per_document:
                tallies["wmv"] = weighted_vote(keys, [weights[s] for s in names])
            if self.true_reliability:
                n, known = len(names), self.true_reliability
                if missing := [s for s in names if s not in known]:
                    trace.notes.append(f"oracle WMV: no true reliability for {', '.join(missing)}; weight 0")
                oracle = [n * float(known[s]) - 1.0 if s in known else 0.0 for s in names]
                tallies["oracle_wmv"] = weighted_vote(keys, oracle)
        if trace.walk:
            tallies["rrss"] = weighted_vote([k if s in selected else None for s, k in zip(names, keys)],
                                            [weights[s] for s in names])
        display: dict[str, str] = {}
        members: dict[str, list[str]] = {}
        for r in trace.sources:        # walk order: a cluster reads as its highest-ranked member's wording
            if r.cluster is not None:
                display.setdefault(r.cluster, r.filtered_answer or r.cluster)
                members.setdefault(r.cluster, []).append(r.source)
        for key, who in members.items():
            trace.votes.append(RAVote(answer=display[key], cluster=key, sources=who,
                                      **{v: round(t.scores.get(key, 0.0), 6) for v, t in tallies.items()}))
        trace.answers = {v: display[t.winner] if t.winner else None for v, t in tallies.items()}
        if variant not in trace.answers:
            trace.answers[variant] = None


# -- what a run will send (MethodSpec.estimate, estimate_prepare) ---------------------------------------------

#: A keyword answer (§3.1: "the essential keywords of the answer alone"): a few tokens, under the call's cap of 32.
KEYWORD_REPLY, KEYWORD_CAP = 8, 32
#: An entailment judgement: "yes" or "no" (cap 8).
YES_NO_REPLY, YES_NO_CAP = 1, 8


def _source_evidence(question: Question, sizes: Sizes, top_k: int, per_document: bool) -> dict[str, list[int]]:
    """Per source, the tokens of the documents ``answer_source`` gives it (``source_documents``): its own documents
    of the question (``given``, or a document that is its own source), else k placeholders from its index."""
    if per_document:
        return {d.source_name: [sizes.tokens(d.text)] for d in question.documents}
    names = list(sizes.sources) or list(dict.fromkeys(d.source_name for d in question.documents))
    if sizes.evidence_mode == "given":
        return {s: [sizes.tokens(d.text) for d in question.documents if d.source_name == s][:top_k] for s in names}
    return {s: [sizes.document_tokens] * top_k for s in names}


def _answers(question: Question, sizes: Sizes, evidence: dict[str, list[int]]) -> tuple[int, int, int]:
    """(calls, prompt tokens, completion tokens) of asking every source that has documents (no documents: no call)."""
    head = sizes.messages(keyword_prompt(question.question, []))
    called = [docs for docs in evidence.values() if docs]
    reply = sizes.reply(KEYWORD_REPLY, KEYWORD_CAP)
    return len(called), sum(head + sum(docs) for docs in called), len(called) * reply


def _entailments(method: RARAG, question: Question, sizes: Sizes, answered: int, est: CallEstimate) -> None:
    """App. I clustering: both directions for every pair of distinct answers, at most n·(n − 1) calls."""
    if method.clustering != "entailment" or answered < 2:
        return
    answer = sizes.placeholder(sizes.reply(KEYWORD_REPLY, KEYWORD_CAP))
    prompt = sizes.tokens(ENTAILMENT_PROMPT.format(question=question.question, a=answer, b=answer))
    pairs = answered * (answered - 1)
    est.add("entailment", pairs, pairs * prompt, pairs * sizes.reply(YES_NO_REPLY, YES_NO_CAP), conditional=True)


def estimate(method: RARAG, question: Question, sizes: Sizes) -> CallEstimate:
    """Stage 2: one keyword call per source that has documents. κ-RRSS asks sources in weight order until κ have
    answered, so the calls beyond κ are conditional; MV/WMV (and ``compare_all``) ask every source. Documents that
    name no source are each their own source and all are asked (majority voting)."""
    est = CallEstimate(method=method.name)
    per_doc = not sizes.sources and all(d.source is None for d in question.documents)
    evidence = _source_evidence(question, sizes, method.top_k, per_doc)
    calls, prompt, completion = _answers(question, sizes, evidence)
    if not calls:
        est.notes.append("no source has documents for this question: no calls")
        return est
    everyone = per_doc or method.variant != "rrss"
    walked = calls if everyone else min(method.kappa, calls)
    est.add("source_answer", walked, prompt * walked // calls, completion * walked // calls)
    rest = calls - walked   # beyond κ: asked only when the walk goes on, or to compare (``compare_all``)
    est.add("compare_answer" if method.compare_all else "source_answer", rest, prompt - prompt * walked // calls,
            completion - completion * walked // calls, conditional=not method.compare_all)
    if rest and not method.compare_all:
        est.notes.append(f"an upper bound: κ-RRSS stops once κ = {method.kappa} sources answered")
    _entailments(method, question, sizes, calls, est)
    return est


def estimate_prepare(method: RARAG, dataset: Dataset, sizes: Sizes) -> CallEstimate:
    """Stage 1 (Algorithm 1 line 3): every source answers every calibration question it has documents for."""
    est = CallEstimate(method=method.name)
    if not dataset.multi_source:
        return est
    questions = method.calibration_questions(dataset)
    for q in questions:
        calls, prompt, completion = _answers(q, sizes, _source_evidence(q, sizes, method.top_k, False))
        est.add("calibration_answer", calls, prompt, completion)
        _entailments(method, q, sizes, calls, est)
    merged = CallEstimate(method=method.name, notes=[f"stage 1 over {len(questions)} calibration questions, once "
                                                     "per dataset and model"])
    for step, conditional in dict.fromkeys((s.step, s.conditional) for s in est.steps):
        same = [s for s in est.steps if (s.step, s.conditional) == (step, conditional)]
        merged.add(step, sum(s.calls for s in same), sum(s.prompt_tokens for s in same),
                   sum(s.completion_tokens for s in same), conditional=conditional)
    return merged


SPEC = register(MethodSpec(
    RARAG, RARAGTrace, title="RA-RAG", color="#1565c0", order=10, estimate=estimate,
    paper_metric='squad_em',  # its paper's own metric (backend.scoring.PAPER_METRICS)
    estimate_prepare=estimate_prepare, story=ra_rag_story,
    description="estimates each source's reliability without labels, then asks the most reliable sources and "
                "takes their weighted vote",
    step_roles={"source_answer": "one source's answer (κ-RRSS walk)",
                "compare_answer": "one source's answer, for MV/WMV beside κ-RRSS",
                "calibration_answer": "stage 1: one source's answer to a calibration question",
                "entailment": "entailment check (answer clustering)"}))
