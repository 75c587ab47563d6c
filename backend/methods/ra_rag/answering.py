"""RA-RAG per-source answering: §3.1 keyword prompt, §3.2 misalignment filtration (f_align) and App. I
bidirectional-entailment clustering. Shared by stage 1 (calibration) and stage 2 (one question).

Each source's reply is read two ways (``tolerant_reading``, ``paper_reading``; the rules and their sources in
``parse``) and ``answer_source`` takes the run's reading through ``ctx.readings.decide``: one decision per source and
question, compared by the vote key (the kept answer's cluster, None = IDK). The entailment judgement is read by one
rule (``Readings.same``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from backend.answers import normalize
from backend.llm.formats import Parsed, is_idk, parse_yes_no
from backend.methods.base import RunContext, gather_all, passages_field
from backend.methods.ra_rag.parse import read_paper, read_tolerant
from backend.schema import Document, Question, RAEntailment, RASourceAnswer

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


def f_align(answer: str | None, texts: Sequence[str], threshold: float = 0.9,
            idk: Callable[[str], bool] = is_idk) -> Alignment:
    """Keep ``answer`` when the share of its unigrams found in the documents (clipped) is ≥ threshold. ``idk``: the
    reading's "I don't know" test (the paper reading has decided IDK before: ``parse.paper_reading``)."""
    if answer is None or idk(answer):
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


@dataclass(frozen=True)
class SourceReading:
    """One reading of one source's reply (``parse``): what was read, what f_align made of it, and the vote key."""

    parsed: Parsed[str | None]
    aligned: Alignment

    @property
    def cluster(self) -> str | None:
        return normalize(self.aligned.answer) if self.aligned.answer else None

    def shown(self) -> str:
        if self.aligned.answer:
            return self.aligned.answer
        return f"I don't know ({self.aligned.reason})" if self.aligned.reason else "I don't know"


def tolerant_reading(reply: str, texts: Sequence[str], threshold: float) -> SourceReading:
    """The project's reading: f_align scores the answer ``parse_short_answer`` read from the reply."""
    parsed = read_tolerant(reply)
    return SourceReading(parsed, f_align(parsed.value, texts, threshold))


def paper_reading(reply: str, texts: Sequence[str], threshold: float) -> SourceReading:
    """The paper's reading: f_align scores the reply as the released code passes it (``parse.read_paper``); IDK is
    the released code's test, already applied."""
    parsed = read_paper(reply)
    return SourceReading(parsed, f_align(parsed.value, texts, threshold, idk=lambda _: False))


async def answer_source(question: Question, source: str, ctx: RunContext, *, top_k: int, threshold: float,
                        step: str, per_document: bool = False) -> RASourceAnswer:
    """§3.1 + §3.2 for one source: evidence, keyword answer, both readings of the reply (one decision through
    ``ctx.readings``), f_align, cluster key. The row shows the run's reading."""
    docs = source_documents(question, source, ctx, top_k, per_document)
    row = RASourceAnswer(source=source, rank=0, weight=0.0, queried=True, step=step,
                         documents=[d.id for d in docs])
    call = await generate_answer(question, docs, ctx, step)
    if call is None:
        row.filter_reason = "no documents from this source (no model call)"
        return row
    texts = [d.text for d in docs]
    reply = call.response or ""
    read = ctx.readings.decide(step, tolerant_reading(reply, texts, threshold), paper_reading(reply, texts, threshold),
                               call_id=call.id, key=lambda r: r.cluster, show=SourceReading.shown,
                               what=f"{source}'s answer")
    parsed, aligned = read.parsed, read.aligned
    row.called, row.call_id, row.raw_answer = True, call.id, call.response
    row.parsed_answer, row.parse_note = parsed.value, parsed.note
    row.rouge1_precision = None if aligned.precision is None else round(aligned.precision, 4)
    row.matched_tokens, row.unmatched_tokens = aligned.matched, aligned.unmatched
    row.filtered_answer, row.filter_reason = aligned.answer, aligned.reason
    row.cluster = read.cluster
    return row


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
    parsed = ctx.readings.same("entailment", parse_yes_no(call.response or ""), call_id=call.id)  # parse: one rule
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
        pairs = await gather_all(*(gather_all(_entails(question, reps[key], reps[k], ctx),
                                              _entails(question, reps[k], reps[key], ctx)) for k in rest))
        for k, (ab, ba) in zip(rest, pairs):
            judged += [ab, ba]
            if ab.entails and ba.entails:
                mapping[k] = key
    for row in rows:
        if row.cluster is not None:
            row.cluster = mapping[row.cluster]
    return judged
