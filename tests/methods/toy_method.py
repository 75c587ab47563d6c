"""A toy method added the way the README's "Adding a method" says: one ``MethodSpec`` beside the class, its trace and
its offline handler with the reader of its prompt, all in this one file; no other file of the project names it.

It reads the question's first document and answers its first sentence's last word (or abstains without documents).
``tests/methods/test_toy_method.py`` imports it; ``pytest -p tests.methods.toy_method`` loads it as a plugin, so
the contract test collects it too.
"""

from __future__ import annotations

from typing import Literal

from backend.llm.formats import parse_short_answer
from backend.llm.offline.prompt import matcher
from backend.llm.offline.registry import PromptReader, register_handlers, register_readers
from backend.llm.tasks import TaskSpec
from backend.methods import MethodSpec, register
from backend.methods.base import Method, Outcome, RunContext, passages_field
from backend.methods.estimate import CallEstimate, Sizes
from backend.schema import Question
from backend.schema.trace import Trace

NAME, TASK = "toy", "toy_last_word"


class ToyTrace(Trace):
    kind: Literal["toy"] = "toy"
    document: str | None = None
    raw: str = ""

    def key_facts(self) -> dict[str, str]:
        return {"document read": self.document or "none"}


class ToyMethod(Method):
    name = NAME
    steps = ("read",)

    def __init__(self, documents: int = 1):
        self.documents = documents

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        docs = ctx.evidence(question)[: self.documents]
        call = await ctx.client.acomplete(
            [{"role": "user", "content": f"Question: {question.question}\nPassage: "
                                         f"{docs[0].text if docs else ''}\nAnswer with one word."}],
            task=TASK, step="read", question=question.question, fields={"passages": passages_field(docs)})
        # one rule for both readings (backend.methods.reading): the toy has no paper whose format it could read
        answer = ctx.readings.same("read", parse_short_answer(call.response or "").value, call_id=call.id)
        trace = ToyTrace(document=docs[0].id if docs else None, raw=call.response or "")
        return Outcome([answer] if answer else [], not answer, trace, read=tuple(docs))


def last_word(fields: dict) -> str:
    """The offline model's reply: the first passage's first sentence's last word, else "I don't know"."""
    passages = fields.get("passages") or []
    words = str(passages[0].get("text", "")).split(".")[0].split() if passages else []
    return words[-1].strip(",;:") if words else "I don't know"


def estimate(method: ToyMethod, question: Question, sizes: Sizes) -> CallEstimate:
    """Its cost before a run (``MethodSpec.estimate``): one call over its prompt and the first document, a one-word
    reply."""
    est = CallEstimate(method=NAME)
    first = sizes.evidence(question)[:1]
    est.add("read", 1, sizes.tokens(f"Question: {question.question}\nPassage: \nAnswer with one word.") + sum(first),
            sizes.reply(1))
    return est


def read_prompt(m, prompt) -> dict:
    """The offline model reads the task's inputs out of the prompt: the question and the passage."""
    return {"question": m["question"], "passages": [{"text": m["passage"]}] if m["passage"] else []}


HANDLERS = register_handlers({TASK: last_word})
register_readers(PromptReader(TASK, "toy prompt", matcher(r"Question: (?P<question>.*?)\nPassage: (?P<passage>.*)"
                                                          r"\nAnswer with one word\.", read_prompt)))
SPEC = register(MethodSpec(
    ToyMethod, ToyTrace, title="Toy method", color="#795548",
    description="answers the first passage's first sentence's last word (a test of the registry)",
    tasks=(TaskSpec(TASK, ("passages",), parse_short_answer, "the last word of the first sentence"),),
    step_roles={"read": "read the first passage"}, estimate=estimate))
