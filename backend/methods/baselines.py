"""The two baselines every paper compares against.

* ``no_rag``: closed book; the model answers from its own memory (the offline model: ``internal_knowledge``).
* ``vanilla_rag``: the evidence documents concatenated into one prompt (RAMDocs/MADAM's "concatenated
  documents" baseline; RA-RAG's "Naive RAG").

Both use a keyword-answer prompt with the "I don't know" rule (RA-RAG App. G structure) and
``formats.parse_short_answer``. An "I don't know" reply is an abstention.

Readings (``backend.methods.reading``): neither baseline has a paper of its own, so there is no paper rule to read
its reply by; [ours] its one decision (the answer) is read by ``parse_short_answer`` under both readings
(``ctx.readings.same``): counted in ``decisions_read``, never a difference. (RA-RAG's paper reading of a keyword
reply, ``backend.methods.ra_rag.parse``, belongs to RA-RAG's own filter and vote, not to these prompts.)
"""

from __future__ import annotations

from backend.llm.formats import parse_short_answer
from backend.methods.base import Method, Outcome, RunContext, passages_field
from backend.methods.estimate import CallEstimate, Sizes
from backend.schema import BaselineTrace, Document, LLMCall, Question
from backend.methods.spec import MethodSpec, register

SYSTEM = ("Answer the question with only the essential keywords, without explanations. "
          "If you do not confidently know the answer, just say \"I don't know\".")


def closed_book_prompt(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {question}\nAnswer:"}]


def documents_prompt(question: str, texts: list[str]) -> list[dict[str, str]]:
    context = "\n".join(f"Document {i}: {t}" for i, t in enumerate(texts, start=1))
    return [{"role": "system", "content": SYSTEM + " Use only the given documents, not internal knowledge."},
            {"role": "user", "content": f"Context:\n{context}\nQuestion: {question}\nAnswer:"}]


def _outcome(call: LLMCall, trace: BaselineTrace, ctx: RunContext, read: list[Document] | None = None) -> Outcome:
    """The parsed reply (one rule for both readings: no paper of its own); it rests on the ``read`` documents that
    state it (closed book: none)."""
    reply = call.response or ""
    parsed = ctx.readings.same(call.step, parse_short_answer(reply), call_id=call.id)
    trace.raw_answer, trace.parsed_answer, trace.parse_note = reply, parsed.value, parsed.note
    return Outcome([parsed.value] if parsed.value else [], parsed.value is None, trace, read=tuple(read or ()))


class NoRAG(Method):
    name = "no_rag"
    steps = ("answer",)
    reads_evidence = False  # its own memory only: never waits for the retrieval index

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        call = await ctx.client.acomplete(closed_book_prompt(question.question), task="closed_book",
                                          step="answer", question=question.question,
                                          fields={"memory": question.internal_knowledge})
        return _outcome(call, BaselineTrace(evidence_mode="none"), ctx)


class VanillaRAG(Method):
    name = "vanilla_rag"
    steps = ("answer",)

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        docs = ctx.evidence(question)
        call = await ctx.client.acomplete(documents_prompt(question.question, [d.text for d in docs]),
                                          task="keyword_answer", step="answer", question=question.question,
                                          fields={"passages": passages_field(docs)})
        trace = BaselineTrace(evidence_mode=ctx.evidence_mode, documents=[d.id for d in docs])
        return _outcome(call, trace, ctx, docs)


#: A keyword answer ("only the essential keywords"): a few tokens ([ours], the length of a short entity or number).
KEYWORD_REPLY = 8


def estimate_closed_book(method: NoRAG, question: Question, sizes: Sizes) -> CallEstimate:
    """One call: the question alone."""
    est = CallEstimate(method=method.name)
    est.add("answer", 1, sizes.messages(closed_book_prompt(question.question)), sizes.reply(KEYWORD_REPLY))
    return est


def estimate_documents(method: VanillaRAG, question: Question, sizes: Sizes) -> CallEstimate:
    """One call: every evidence document in one prompt."""
    docs = sizes.evidence(question)
    prompt = sizes.messages(documents_prompt(question.question, [""] * len(docs))) + sum(docs)
    est = CallEstimate(method=method.name)
    est.add("answer", 1, prompt, sizes.reply(KEYWORD_REPLY))
    return est


NO_RAG = register(MethodSpec(
    NoRAG, BaselineTrace, title="Closed book", color="#9e9e9e", order=90, baseline=True, paper_metric="squad_em",
    estimate=estimate_closed_book,
    description="the model answers from memory alone (no documents)", step_roles={"answer": "closed-book answer"}))
VANILLA_RAG = register(MethodSpec(
    VanillaRAG, BaselineTrace, title="Vanilla RAG", color="#455a64", order=91, baseline=True,
    paper_metric="squad_em",
    quick=True, estimate=estimate_documents,
    description="the model answers from all documents concatenated",
    step_roles={"answer": "answer from the concatenated documents"}))
