"""RA-RAG: Retrieval-Augmented Generation with Estimation of Source Reliability.

Paper: ``shared/seeds/000_59393aad6bfd13a0.txt``; spec: ``shared/methods/ra-rag.md``. Implemented here,
in the paper's order:

* §3.1 keyword-based system prompt (App. G structure; our wording and examples) -> ``keyword_prompt``,
  ``generate_answer``: one call per source (task ``keyword_answer``) on that source's top-3 documents;
* §3.2 misalignment filtration -> ``f_align``: ROUGE-1 precision of the answer against the source's
  documents; below 0.9 the answer becomes "I don't know" (IDK);
* eq. 1 weighted majority voting -> ``weighted_vote`` (MV is WMV with every weight 1);
* §3.3 / Algorithm 1 iterative reliability estimation -> ``estimate_reliability`` (numpy, no labels)
  and ``RARAG.calibrate`` (the per-source answers of the calibration questions, asked concurrently);
* §3.4 / Algorithm 2 κ-RRSS -> ``kappa_rrss``, then WMV over the selected sources;
* App. I bidirectional-entailment answer clustering -> ``cluster_by_entailment`` (off by default).

Variants (``variant=``): ``rrss`` (RA-RAG, default), ``wmv`` (all sources, estimated weights), ``mv``
(all sources, weight 1), ``oracle_wmv`` (all sources, weights N·p_i − 1 from true reliabilities that
evaluation code passes explicitly as ``true_reliability=``; the method never reads them from data).

Stage-1 weights reach the method through ``RunContext.reliability`` (a ``ReliabilityEstimate``): the
runner computes or loads them once per dataset + model + evidence mode on a truth-stripped dataset
(``backend.reliability`` keeps them on disk). They are an unsupervised estimate, not ground truth.

[ours] choices (spec §8):

* IDK is never a vote candidate: IDK sources cast no vote; the winner is IDK only when every filtered
  answer is IDK; eq. 4 counts a match only for non-IDK answers, so ŵ ≤ 1 (§8.1).
* Answer equality: SQuAD normalisation (``backend.answers.normalize``); a cluster is one normalised
  string (§3.3). IDK: ``formats.is_idk`` on the reply, or an answer that normalises to nothing.
* f_align: the source's documents concatenated, lower-cased ``\\w+`` tokens, no stemming, clipped
  counts, kept when P ≥ τ (§8.9). Votes use the filtered, normalised answers (§8.18).
* Ties (argmax): the higher score, then the candidate whose best supporter has the higher weight,
  then the lower source index (dataset order; per-document mode uses a hash order, since RAMDocs' document
  order correlates with the labels); scores are compared rounded to 1e-9. κ-RRSS ranks equal
  weights by source index (stable sort) (§8.4).
* A source that is IDK on every calibration question has no evidence: ŵ = None, v = 0 (neutral; no NaN)
  (§8.2). Negative weights (ŵ < 1/N) are kept (§8.3). Scale N in v = N·ŵ − 1 = the number of sources (§8.10).
* Stage 1 stops at a fixed point of the pseudo-labels, when they repeat an earlier state (a cycle,
  flagged), or after T = 100 iterations (§8.5).
* Calibration set: the first ``calibration_size`` (200, the paper's M1) questions of the dataset. On
  the bundled 200-question sets it is the whole set, so inspected questions were also calibration
  questions: transductive, but no label is used.
* Evidence ``given``: the question's own documents of that source (the first top-k in dataset order);
  a source with none answers IDK without a model call, recorded as such. ``retrieve``: top-k from the
  chromadb index restricted to the source (the paper's setting).
* κ-RRSS asks sources in rounds: each round asks the next (κ − selected) sources concurrently. The
  sequential lazy walk would ask every one of them, so calls and result equal the lazy walk's.
* ``compare_all=True`` (the dashboard) also asks the sources the walk never reached, in a separate
  step ``compare_answer``, only to show MV/WMV beside κ-RRSS; the walk still marks them not queried and
  ``compare_calls`` counts them apart from ``walk_calls``.
* No stage-1 weights in the context: v = 1 for every source (= MV order and votes), said in the trace.
* Documents naming no source (RAMDocs): each document is its own source, sources never recur across
  questions, so there is nothing to estimate: RA-RAG reduces to MV with f_align over all documents.
* Entailment clustering: greedy (Farquhar et al.), strict (both directions must entail), IDK never
  merged; our prompt asks "yes"/"no" (the task contract's ``yes_no`` output); an unparseable judgement
  counts as "no".
* An answer cluster is shown in the wording of its highest-ranked member. Decoding: the client's
  temperature 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from backend.answers import normalize
from backend.llm.formats import is_idk, parse_short_answer, parse_yes_no
from backend.methods.base import Method, Outcome, RunContext, passages_field
from backend.schema import (Document, Question, RAEntailment, RARAGTrace, RASourceAnswer, RAVote, RAWalkStep,
                            ReliabilityEstimate, ReliabilityIteration, SourceReliability)

Variant = Literal["rrss", "wmv", "mv", "oracle_wmv"]
VARIANTS: tuple[str, ...] = ("rrss", "wmv", "mv", "oracle_wmv")
Progress = Callable[[int, int], None]

# --- §3.1 keyword-based system prompt --------------------------------------------------------------

KEYWORD_SYSTEM = """Answer the question using only the context below, never your own knowledge. Reply with the essential keywords of the answer alone: no sentence, no explanation. If the context does not let you answer with confidence, reply exactly "I don't know".

Context: The Eiffel Tower was built between 1887 and 1889 as the entrance arch to the 1889 World's Fair in Paris. Its design is credited to the engineering company of Gustave Eiffel.
Question: Whose company designed the Eiffel Tower?
Answer: Gustave Eiffel

Context: The Amazon river basin covers about seven million square kilometres and is home to the largest rainforest on Earth, shared by nine countries.
Question: Who was the first European to sail down the Amazon river?
Answer: I don't know

Context: Marie Curie shared the 1903 Nobel Prize in Physics with Pierre Curie and Henri Becquerel, and won the 1911 Nobel Prize in Chemistry alone.
Question: In which year did Marie Curie win the Nobel Prize in Chemistry?
Answer: 1911"""


def keyword_prompt(question: str, texts: list[str]) -> list[dict[str, str]]:
    """System: instruction + examples; user: the source's documents, one per line, and the question."""
    context = "\n".join(" ".join(t.split()) for t in texts)
    return [{"role": "system", "content": KEYWORD_SYSTEM},
            {"role": "user", "content": f"Context: {context}\nQuestion: {question}\nAnswer:"}]


def source_documents(question: Question, source: str, ctx: RunContext, top_k: int,
                     per_document: bool = False) -> list[Document]:
    """R(q, S_i): the source's own documents of the question (``given``, or a document that is its own
    source), else the top-k of the source's index partition (``retrieve``)."""
    if ctx.evidence_mode == "given" or per_document:
        return [d for d in question.documents if d.source_name == source][:top_k]
    return ctx.evidence(question, source=source, k=top_k)


async def generate_answer(question: Question, docs: list[Document], ctx: RunContext, step: str):
    """ỹ_i = G(q, R(q, S_i), P_keyword): one model call, or None when the source has no documents."""
    if not docs:
        return None
    return await ctx.client.acomplete(keyword_prompt(question.question, [d.text for d in docs]),
                                      task="keyword_answer", step=step, question=question.question,
                                      fields={"passages": passages_field(docs)}, max_tokens=32)


# --- §3.2 misalignment filtration ------------------------------------------------------------------

_TOKEN = re.compile(r"\w+")


def rouge1_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Alignment:
    answer: str | None                 # a_i: the answer kept, or None (IDK)
    precision: float | None            # ROUGE-1 precision (None when there was no answer to score)
    matched: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    reason: str | None = None          # why the answer is IDK


def f_align(answer: str | None, texts: Sequence[str], threshold: float = 0.9) -> Alignment:
    """Keep ``answer`` when the share of its unigrams found in the documents (clipped) is ≥ threshold."""
    if answer is None or is_idk(answer):
        return Alignment(None, None, reason="model said I don't know")
    tokens = rouge1_tokens(answer)
    if not tokens or not normalize(answer):
        return Alignment(None, None, reason="empty answer")
    available = Counter(rouge1_tokens(" ".join(texts)))
    matched, unmatched = [], []
    for tok in tokens:
        if available[tok] > 0:
            available[tok] -= 1
            matched.append(tok)
        else:
            unmatched.append(tok)
    precision = len(matched) / len(tokens)
    if precision < threshold:
        return Alignment(None, precision, matched, unmatched, f"ROUGE-1 precision {precision:.2f} < {threshold:g}")
    return Alignment(answer, precision, matched, unmatched)


async def answer_source(question: Question, source: str, ctx: RunContext, *, top_k: int, threshold: float,
                        step: str, per_document: bool = False) -> RASourceAnswer:
    """§3.1 + §3.2 for one source: evidence, keyword answer, parse, f_align, cluster key."""
    docs = source_documents(question, source, ctx, top_k, per_document)
    row = RASourceAnswer(source=source, rank=0, weight=0.0, queried=True, step=step,
                         documents=[d.id for d in docs])
    call = await generate_answer(question, docs, ctx, step)
    if call is None:
        row.filter_reason = "no documents from this source (no model call)"
        return row
    parsed = parse_short_answer(call.response or "")
    aligned = f_align(parsed.value, [d.text for d in docs], threshold)
    row.called, row.call_id, row.raw_answer = True, call.id, call.response
    row.parsed_answer, row.parse_note = parsed.value, parsed.note
    row.rouge1_precision = None if aligned.precision is None else round(aligned.precision, 4)
    row.matched_tokens, row.unmatched_tokens = aligned.matched, aligned.unmatched
    row.filtered_answer, row.filter_reason = aligned.answer, aligned.reason
    row.cluster = normalize(aligned.answer) if aligned.answer else None
    return row


# --- eq. 1 weighted majority voting ----------------------------------------------------------------

def _r(x: float) -> float:
    return round(float(x), 9)


@dataclass(frozen=True)
class Vote:
    winner: str | None                 # the winning cluster key; None = every answer IDK
    scores: dict[str, float]           # cluster key -> Σ v_i over its supporters (first-seen order)


def weighted_vote(keys: Sequence[str | None], weights: Sequence[float]) -> Vote:
    """ŷ = argmax_u Σ_i v_i 𝟙(a_i = u) over non-IDK answers (``keys`` in source order; None = IDK).
    Ties: higher score, then higher best-supporter weight, then lower source index."""
    scores: dict[str, float] = {}
    best: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, (k, v) in enumerate(zip(keys, weights)):
        if k is None:
            continue
        scores[k] = scores.get(k, 0.0) + float(v)
        best[k] = max(best.get(k, -math.inf), float(v))
        first.setdefault(k, i)
    if not scores:
        return Vote(None, {})
    winner = max(scores, key=lambda k: (_r(scores[k]), _r(best[k]), -first[k]))
    return Vote(winner, scores)


# --- §3.3 / Algorithm 1: iterative reliability estimation ------------------------------------------

@dataclass
class Estimate:
    """What Algorithm 1 computes (numpy arrays over sources, in the matrix's column order)."""

    estimated: np.ndarray              # ŵ, NaN = no evidence
    weights: np.ndarray                # v = scale·ŵ − 1, 0 where ŵ is NaN
    pseudo_labels: list[str | None]    # ŷ^j after the last iteration
    answered: np.ndarray               # non-IDK answers per source
    agreed: np.ndarray                 # answers equal to ŷ^j per source
    iterations: int
    converged: bool
    cycle: bool
    history: list[tuple[np.ndarray, np.ndarray, int]]  # (v, ŵ, pseudo-labels changed) per iteration


def _encode(answers: Sequence[Sequence[str | None]]) -> np.ndarray:
    """Answer keys -> integer codes shared across the matrix (-1 = IDK)."""
    codes: dict[str, int] = {}
    width = len(answers[0]) if len(answers) else 0
    return np.array([[-1 if a is None else codes.setdefault(a, len(codes)) for a in row] for row in answers],
                    dtype=np.int64).reshape(len(answers), width)


def _vote_rows(same: np.ndarray, known: np.ndarray, first: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Eq. 3 for every question at once, with ``weighted_vote``'s tie rule. Returns, per row, the column
    of the winning answer's first supporter (-1 when the row is all IDK)."""
    n = v.shape[0]
    score = np.round(same @ v, 9)                                   # (M, N): score of column i's answer
    score = np.where(known, score, -np.inf)
    tie = known & (score == score.max(axis=1, keepdims=True))
    best = np.round(np.where(same, v[None, None, :], -np.inf).max(axis=2), 9)
    best = np.where(tie, best, -np.inf)
    tie &= best == best.max(axis=1, keepdims=True)
    winner = np.where(tie, first, n).min(axis=1)
    return np.where(known.any(axis=1), winner, -1)


def _prepare(answers: Sequence[Sequence[str | None]]):
    """Integer codes (M, N; -1 = IDK), the non-IDK mask, ``same[j, i, k]`` (source k gives source i's
    answer to question j) and each answer's first supporter (its candidate id; N for IDK)."""
    g = _encode(answers)
    known = g >= 0
    same = (g[:, :, None] == g[:, None, :]) & known[:, :, None]
    first = np.where(known, same.argmax(axis=2), g.shape[1])
    return g, known, same, first


def _winners(answers: Sequence[Sequence[str | None]], win: np.ndarray) -> list[str | None]:
    return [answers[j][c] if c >= 0 else None for j, c in enumerate(win.tolist())]


def wmv_rows(answers: Sequence[Sequence[str | None]], weights: Sequence[float]) -> list[str | None]:
    """Eq. 3 for every question at once: ``weighted_vote`` of each row, vectorised."""
    _, known, same, first = _prepare(answers)
    return _winners(answers, _vote_rows(same, known, first, np.asarray(weights, dtype=float)))


def estimate_reliability(answers: Sequence[Sequence[str | None]], *, scale: float | None = None,
                         max_iter: int = 100) -> Estimate:
    """Algorithm 1 lines 4–9 on an M × N matrix of filtered answer keys (None = IDK), vectorised.

    v ← 1; repeat: ŷ^j = WMV(a^j; v) (eq. 3); ŵ_i = #(a_i^j = ŷ^j) / #(a_i^j ≠ IDK) (eq. 4);
    v_i = scale·ŵ_i − 1; until ŷ stops changing (or cycles, or T iterations).
    """
    if max_iter < 1:
        raise ValueError("max_iter must be at least 1")
    g, known, same, first = _prepare(answers)
    m, n = g.shape
    scale = float(n if scale is None else scale)
    answered = known.sum(axis=0)
    rows = np.arange(m)
    v = np.ones(n)
    labels_prev: np.ndarray | None = None
    seen: set[bytes] = set()
    history: list[tuple[np.ndarray, np.ndarray, int]] = []
    converged = cycle = False
    for _ in range(max_iter):
        win = _vote_rows(same, known, first, v)                       # eq. 3 (line 6)
        labels = np.where(win >= 0, g[rows, np.maximum(win, 0)], -1)
        agreed = (known & (g == labels[:, None]) & (labels[:, None] >= 0)).sum(axis=0)
        w = np.where(answered > 0, agreed / np.maximum(answered, 1), np.nan)   # eq. 4 (line 7), guarded
        v = np.where(np.isnan(w), 0.0, scale * w - 1.0)                # line 8; no evidence -> neutral
        changed = m if labels_prev is None else int((labels != labels_prev).sum())
        history.append((v.copy(), w.copy(), changed))
        if labels_prev is not None and changed == 0:
            converged = True
            break
        if labels.tobytes() in seen:
            cycle = True
            break
        seen.add(labels.tobytes())
        labels_prev = labels
    return Estimate(w, v, _winners(answers, win), answered, agreed, len(history), converged, cycle, history)


# --- §3.4 / Algorithm 2: κ-RRSS ---------------------------------------------------------------------

def rank_sources(names: Sequence[str], weights: dict[str, float]) -> list[str]:
    """Sources by weight, descending; equal weights keep the dataset order (stable sort)."""
    return sorted(names, key=lambda s: -_r(weights.get(s, 0.0)))


async def kappa_rrss(ranked: Sequence[str], ask: Callable[[str], Awaitable[RASourceAnswer]],
                     kappa: int) -> tuple[list[RAWalkStep], dict[str, RASourceAnswer]]:
    """Walk ``ranked`` asking each source; IDK sources are skipped; stop once κ are selected. Each round
    asks the next κ − |selected| sources at once: the lazy walk would ask all of them anyway."""
    selected: list[str] = []
    answers: dict[str, RASourceAnswer] = {}
    pos = 0
    while len(selected) < kappa and pos < len(ranked):
        batch = list(ranked[pos:pos + kappa - len(selected)])
        pos += len(batch)
        for source, row in zip(batch, await asyncio.gather(*(ask(s) for s in batch))):
            answers[source] = row
            if row.cluster is not None:
                selected.append(source)
    walk = [RAWalkStep(rank=r, source=s, weight=0.0,
                       status="selected" if s in selected else "skipped" if s in answers else "not_queried")
            for r, s in enumerate(ranked, start=1)]
    return walk, answers


# --- App. I: bidirectional-entailment clustering ----------------------------------------------------

ENTAILMENT_PROMPT = ('We are evaluating answers to the question "{question}"\nHere are two possible answers:\n'
                     "Possible Answer 1: {a}\nPossible Answer 2: {b}\n"
                     "Does Possible Answer 1 semantically entail Possible Answer 2? Respond only with yes or no.\n"
                     "Response:")


async def _entails(question: str, a: RASourceAnswer, b: RASourceAnswer, ctx: RunContext) -> RAEntailment:
    call = await ctx.client.acomplete(
        [{"role": "user", "content": ENTAILMENT_PROMPT.format(question=question, a=a.filtered_answer,
                                                              b=b.filtered_answer)}],
        task="entailment", step="entailment", question=question,
        fields={"premise": a.filtered_answer, "hypothesis": b.filtered_answer},
        parents=[c for c in (a.call_id, b.call_id) if c], max_tokens=8)
    parsed = parse_yes_no(call.response or "")
    return RAEntailment(premise=a.filtered_answer or "", hypothesis=b.filtered_answer or "",
                        entails=parsed.value, call_id=call.id, parse_note=parsed.note)


async def cluster_by_entailment(question: str, rows: list[RASourceAnswer], ctx: RunContext) -> list[RAEntailment]:
    """Greedy clustering of the answered rows (in order): a row joins the first earlier cluster whose
    representative entails it both ways. Rewrites ``row.cluster``; returns every judgement made."""
    reps: dict[str, RASourceAnswer] = {}
    for row in rows:                   # one representative per distinct normalised answer
        if row.cluster is not None:
            reps.setdefault(row.cluster, row)
    keys, mapping, judged = list(reps), {}, []
    for i, key in enumerate(keys):
        if key in mapping:
            continue
        mapping[key] = key
        rest = [k for k in keys[i + 1:] if k not in mapping]
        pairs = await asyncio.gather(*(asyncio.gather(_entails(question, reps[key], reps[k], ctx),
                                                      _entails(question, reps[k], reps[key], ctx)) for k in rest))
        for k, (ab, ba) in zip(rest, pairs):
            judged += [ab, ba]
            if ab.entails and ba.entails:
                mapping[k] = key
    for row in rows:
        if row.cluster is not None:
            row.cluster = mapping[row.cluster]
    return judged


# --- the method -----------------------------------------------------------------------------------

class RARAG(Method):
    name = "ra_rag"

    def __init__(self, kappa: int = 4, top_k: int = 3, align_threshold: float = 0.9, variant: Variant = "rrss",
                 clustering: Literal["exact", "entailment"] = "exact", calibration_size: int = 200,
                 max_iter: int = 100, scale: float | None = None, compare_all: bool = False,
                 true_reliability: dict[str, float] | None = None):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if variant == "oracle_wmv" and not true_reliability:
            raise ValueError("oracle_wmv needs true_reliability={source: p_i} passed by evaluation code")
        if clustering not in ("exact", "entailment"):
            raise ValueError(f"clustering must be 'exact' or 'entailment', got {clustering!r}")
        self.kappa, self.top_k, self.align_threshold = kappa, top_k, align_threshold
        self.variant, self.clustering, self.calibration_size = variant, clustering, calibration_size
        self.max_iter, self.scale, self.compare_all = max_iter, scale, compare_all
        self.true_reliability = dict(true_reliability) if true_reliability else None

    def calibration_params(self) -> dict[str, Any]:
        """Everything stage 1's result depends on besides data, model and evidence mode."""
        return {"top_k": self.top_k, "align_threshold": self.align_threshold, "clustering": self.clustering,
                "max_iter": self.max_iter, "scale": self.scale,
                "prompt_sha256": hashlib.sha256(KEYWORD_SYSTEM.encode()).hexdigest()[:16]}

    async def _answer(self, q: Question, source: str, ctx: RunContext, step: str, per_document: bool = False):
        return await answer_source(q, source, ctx, top_k=self.top_k, threshold=self.align_threshold,
                                   step=step, per_document=per_document)

    # -- stage 1 ------------------------------------------------------------------------------------

    async def calibrate(self, questions: Sequence[Question], sources: Sequence[str], ctx: RunContext,
                        on_progress: Progress | None = None) -> ReliabilityEstimate:
        """Algorithm 1 over unlabelled ``questions``: every source's filtered answer (line 3; calls run
        concurrently under the client's limit), then ``estimate_reliability`` (lines 4–9)."""
        if not questions or not sources:
            raise ValueError("stage 1 needs at least one calibration question and one source")
        start = time.perf_counter()
        total, done = len(questions) * len(sources), 0
        if on_progress:
            on_progress(0, total)

        async def one(q: Question, s: str) -> RASourceAnswer:
            nonlocal done
            row = await self._answer(q, s, ctx, "calibration_answer")
            done += 1
            if on_progress:
                on_progress(done, total)
            return row

        async def question_row(q: Question) -> list[RASourceAnswer]:
            row = list(await asyncio.gather(*(one(q, s) for s in sources)))
            if self.clustering == "entailment":
                await cluster_by_entailment(q.question, row, ctx)
            return row

        matrix = await asyncio.gather(*(question_row(q) for q in questions))
        est = estimate_reliability([[r.cluster for r in row] for row in matrix], scale=self.scale,
                                   max_iter=self.max_iter)
        calls = ctx.client.calls
        return ReliabilityEstimate(
            sources=[SourceReliability(
                name=s, estimated=None if np.isnan(est.estimated[i]) else round(float(est.estimated[i]), 6),
                weight=round(float(est.weights[i]), 6), answered=int(est.answered[i]), agreed=int(est.agreed[i]),
                idk=sum(row[i].cluster is None for row in matrix),
                no_documents=sum(not row[i].called for row in matrix)) for i, s in enumerate(sources)],
            questions=len(questions), iterations=est.iterations, converged=est.converged, cycle=est.cycle,
            history=[ReliabilityIteration(iteration=t, weights=[round(float(x), 6) for x in v],
                                          estimated=[None if np.isnan(x) else round(float(x), 6) for x in w],
                                          changed=c) for t, (v, w, c) in enumerate(est.history, start=1)],
            evidence_mode=ctx.evidence_mode, params=self.calibration_params(), calls=len(calls),
            cache_hits=sum(c.cache_hit for c in calls), seconds=round(time.perf_counter() - start, 3))

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
        est = ctx.reliability
        if est is None:
            return names, dict.fromkeys(names, 1.0), {}, False, (
                "no stage-1 weights in the run context: v = 1 for every source (= MV)")
        weights, estimated = est.weights(), est.estimated()
        note = (f"stage 1 on {est.questions} unlabelled calibration questions of {est.dataset or 'the dataset'} "
                f"({est.model or 'model'}, evidence {est.evidence_mode}; {est.iterations} iterations, "
                f"{'converged' if est.converged else 'stopped at a cycle' if est.cycle else 'not converged'})")
        return names, {s: weights.get(s, 0.0) for s in names}, estimated, False, note

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
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
            await asyncio.gather(*(ask(s) for s in ranked))
        if not per_doc:
            walk, _ = await kappa_rrss(ranked, ask, self.kappa)
        walked = {w.source for w in walk if w.status != "not_queried"}
        walk_calls = sum(asked[s].result().called for s in walked)
        if variant == "rrss" and self.compare_all:
            await asyncio.gather(*(ask(s, "compare_answer") for s in ranked))
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
        if ctx.reliability is None or per_doc:
            trace.notes.append(note)
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
