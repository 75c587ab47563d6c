"""Two readings of the same replies (``backend.methods.reading``): the run's reading decides, every decision is
counted, and each one the other reading would read differently is recorded on the result, whichever method made it."""

from __future__ import annotations

import pytest

from backend.llm.client import LLMConfig
from backend.llm.formats import parse_short_answer
from backend.llm.providers import scripted
from backend.methods import MethodSpec, register, unregister
from backend.methods.base import Method, Outcome, RunContext
from backend.methods.reading import READINGS, Readings, check, other, shown
from backend.runner import Runner
from backend.schema import BaselineTrace, MethodResult, Question


def paper_rule(reply: str) -> str | None:
    """A paper's literal format, for the test: "Answer: X" and nothing else."""
    return reply[len("Answer: "):].strip() if reply.startswith("Answer: ") else None


class TwoReadings(Method):
    """One call, one decision read both ways: the tolerant short-answer reader and the literal "Answer: X" rule."""

    name = "two_readings"
    steps = ("answer",)

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        call = await ctx.client.acomplete([{"role": "user", "content": question.question}], task="closed_book",
                                          step="answer", question=question.question)
        reply = call.response or ""
        answer = ctx.readings.decide("answer", parse_short_answer(reply).value, paper_rule(reply), call_id=call.id,
                                     what="answer")
        return Outcome([answer] if answer else [], not answer, BaselineTrace(evidence_mode="none"))


@pytest.fixture
def two_readings():
    register(MethodSpec(TwoReadings, BaselineTrace, title="two readings", description="a test method",
                        color="#000000"))
    yield TwoReadings.name
    unregister(TwoReadings.name)


def test_decide_returns_the_runs_reading_and_records_where_the_other_differs():
    tolerant = Readings("tolerant")
    assert tolerant.decide("responder", "D", None, call_id="c1", what="option") == "D"
    assert tolerant.decide("responder", "A", "A") == "A"
    assert tolerant.decisions == 2
    [diff] = tolerant.differences
    assert (diff.step, diff.call_id, diff.what, diff.used, diff.other) == ("responder", "c1", "option", "D",
                                                                           "nothing (unreadable)")
    paper = Readings("paper")
    assert paper.decide("responder", "D", None) is None
    assert (paper.differences[0].used, paper.differences[0].other) == ("nothing (unreadable)", "D")


def test_decide_compares_the_decision_not_the_readers_notes():
    r = Readings()
    a, b = parse_short_answer("**Eiffel**"), parse_short_answer("Eiffel")
    assert a.note != b.note and a.value == b.value
    r.decide("answer", a, b, key=lambda p: p.value)
    assert r.decisions == 1 and not r.differences
    r.same("answer", "x")
    assert r.decisions == 2 and not r.differences


def test_readings_are_checked_and_shown():
    assert READINGS == ("tolerant", "paper") and other("tolerant") == "paper" and other("paper") == "tolerant"
    with pytest.raises(ValueError, match="reading must be one of"):
        check("lenient")
    with pytest.raises(ValueError):
        Readings("strict")  # type: ignore[arg-type]
    assert shown(True) == "yes" and shown(["a", "b"]) == "a; b" and shown(0.25) == "0.25" and shown([]) == "none"


@pytest.mark.parametrize("reading, answers", [("tolerant", ["Gustave Eiffel"]), ("paper", [])])
def test_the_runner_reads_with_its_reading_and_the_result_says_which(two_readings, ramdocs, reading, answers):
    with scripted({"closed_book": "The answer is **Gustave Eiffel**."}):
        result = Runner(ramdocs, llm=LLMConfig(model="scripted/t", cache_mode="off"), reading=reading).run(
            ramdocs.question("@1"), [two_readings])[two_readings]
    assert result.error is None and result.reading == reading
    assert result.answers == answers
    assert result.decisions_read == 1 and len(result.reading_differences) == 1
    diff = result.reading_differences[0]
    assert diff.call_id == result.calls[0].id and {diff.used, diff.other} == {"Gustave Eiffel", "nothing (unreadable)"}


def test_a_reply_in_the_papers_format_depends_on_no_reading(two_readings, ramdocs):
    with scripted({"closed_book": "Answer: Gustave Eiffel"}):
        result = Runner(ramdocs, llm=LLMConfig(model="scripted/t", cache_mode="off"), reading="paper").run(
            ramdocs.question("@1"), [two_readings])[two_readings]
    assert result.answers == ["Gustave Eiffel"] and result.decisions_read == 1 and not result.reading_differences


def test_a_result_written_before_readings_loads_as_tolerant():
    old = MethodResult.model_validate({"method": "vanilla_rag", "question_id": "q1", "answers": ["x"]})
    assert old.reading == "tolerant" and old.decisions_read == 0 and old.reading_differences == []
    again = MethodResult.model_validate_json(old.model_copy(update={"reading": "paper"}).model_dump_json())
    assert again.reading == "paper"
