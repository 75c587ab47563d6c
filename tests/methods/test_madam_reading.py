"""MADAM-RAG's two readings (``backend.methods.reading``): the paper reading is the released code's answer slicing
(HanNight/RAMDocs ``run_madam_rag.py``: ``response[find("Answer: ") + 8 : find("Explanation")].strip()``) for the
agents' answers, the same slicing after "All Correct Answers: " for the aggregations ([ours]: [C] has no reader for
them), and [C]'s stop test on those slices (normalised containment either way; docs/methods/madam.md §3.5). The
released rules are written out here as the expected values of hand-written replies (no released code is imported);
scripted debates then show the paper run stopping at the round the released code stops at, the differences recorded,
and the decisions counted."""

import json

import pytest

from backend.llm.client import LLMClient, LLMConfig
from backend.llm.formats import parse_agent_response, parse_all_correct_answers
from backend.llm.providers import scripted
from backend.methods.base import RunContext
from backend.methods.madam import (MadamRAG, read_agent_response_paper, read_aggregation_paper, released_normalize,
                                   released_slice, released_unchanged, same_answer)
from backend.methods.reading import Readings
from backend.schema import Document, Question

Q = "In which year was Michael Jordan born?"
DOCS = Question(id="mj", question=Q, documents=[
    Document(id="mj-d1", text="Michael Jeffrey Jordan was born on February 17, 1963."),
    Document(id="mj-d2", text="Michael Jeffrey Jordan was born on February 17, 1998.")])


# --- the released slicing -------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw,sliced", [
    ("Answer: 3,559. Explanation: the census says so.", "3,559."),          # the full stop stays in [C]'s slice
    ("Answer: Unknown. Explanation: not in my document.", "Unknown."),
    ("Sure! Answer: 1963. Explanation: my document.", "1963."),
    ("Answer: 1963\nExplanation: my document.", "1963"),
    # "Answer: " missing: find() is -1, so the slice starts at character 7
    ("**Answer:** 1963\n**Explanation:** my document.", "r:** 1963\n**"),
    ("The answer is 1963.", "wer is 1963"),                                  # and no "Explanation": the last char goes
    ('{"answer": "1963", "explanation": "my document"}', 'r": "1963", "explanation": "my document"'),
    ("ANSWER: 1963\n\nEXPLANATION: my document.", "1963\n\nEXPLANATION: my document"),   # case-sensitive
    ("Explanation: the others convinced me. Answer: 1963.", ""),            # "Explanation" before the answer
])
def test_released_slice(raw, sliced):
    assert released_slice(raw) == sliced


def test_the_agents_answer_as_the_paper_reading_keeps_it():
    assert read_agent_response_paper("Answer: 3,559. Explanation: the census.").value == ("3,559", "the census.")
    assert read_agent_response_paper("Answer: Unknown. Explanation: nothing.").value == (None, "nothing.")
    md = "**Answer:** 1963\n**Explanation:** my document."
    paper, tolerant = read_agent_response_paper(md), parse_agent_response(md)
    assert paper.value[0] == "r:** 1963\n**" and paper.status == "lenient" and tolerant.value[0] == "1963"
    empty = read_agent_response_paper("Explanation: the others convinced me. Answer: 1963.")
    assert empty.value[0] is None and empty.status == "unreadable"
    structured = read_agent_response_paper('{"answer": "1963", "explanation": "doc"}', structured=True)
    assert structured.value == ("1963", "doc")


def test_released_stop_test():
    assert released_normalize("The “Bulls”, Chicago!") == "“bulls” chicago"   # ASCII punctuation only
    assert released_unchanged("1963.", "1963") and released_unchanged("Michael Jordan", "jordan")
    assert released_unchanged("born in 1963", "1963") and not released_unchanged("1963", "1956")
    assert released_unchanged("", "1963") and released_unchanged("1998", "")      # an empty slice never changes
    assert not same_answer("1998", None)                                          # ours differs there


@pytest.mark.parametrize("raw,answers", [
    ('All Correct Answers: ["1963", "1956"]. Explanation: two people.', ["1963", "1956"]),
    ('All Correct Answers: ["1963", "unknown"]. Explanation: one.', ["1963"]),
    ("All Correct Answers: []. Explanation: none.", []),
    ("All Correct Answers: unknown. Explanation: none.", []),
    ("All Correct Answers: 1963, 1956. Explanation: two.", ["1963, 1956"]),          # not a list: one answer
    ('Here you go. All Correct Answers: ["1963"]. Explanation: one.', ["1963"]),
    ('**All Correct Answers:** ["1963"]\n\n**Explanation:** one.', []),             # the label not as asked
    ('All correct answers: ["1963"]. Explanation: one.', []),
    ('{"all_correct_answers": ["1963"], "explanation": "one"}', []),
])
def test_the_aggregations_answers_by_the_released_slicing(raw, answers):
    assert read_aggregation_paper(raw).value[0] == answers


def test_the_tolerant_aggregation_reader_reads_what_the_slicing_does_not():
    for raw in ('**All Correct Answers:** ["1963"]\n\n**Explanation:** one.',
                '{"all_correct_answers": ["1963"], "explanation": "one"}'):
        assert parse_all_correct_answers(raw).value[0] == ["1963"] and read_aggregation_paper(raw).value[0] == []
    assert read_aggregation_paper('{"all_correct_answers": ["1963"], "explanation": "one"}',
                                  structured=True).value == (["1963"], "one")


# --- scripted debates -----------------------------------------------------------------------------------------

def _agents(table):
    def reply(fields):
        doc = int(fields["passages"][0]["id"].rsplit("-d", 1)[1])
        t = fields["round"]
        while (doc, t) not in table:
            t -= 1
        return table[(doc, t)]
    return reply


def _aggregator(fields):
    """Both years while an agent still says 1998, else 1963 (exact format); ``CHATTY`` in a response: Markdown."""
    said = " ".join(fields["responses"])
    answers = ["1963", "1998"] if "1998" in said else ["1963"]
    if "CHATTY" in said:
        return f"**All Correct Answers:** {json.dumps(answers)}\n\n**Explanation:** the agents agree."
    return f"All Correct Answers: {json.dumps(answers)}. Explanation: what the agents said."


def _run(table, reading, **kw):
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/madam-reading", cache_mode="off", concurrency=8))
                     .for_method("madam"), readings=Readings(reading))
    with scripted({"debate_turn": _agents(table), "aggregate": _aggregator}):
        return MadamRAG(shuffle=False, **kw).run(DOCS, ctx)


EXACT = {(1, 1): "Answer: 1963. Explanation: my document.", (2, 1): "Answer: 1963. Explanation: my document."}


@pytest.mark.parametrize("reading", ["tolerant", "paper"])
def test_replies_in_the_papers_format_read_alike(reading):
    r = _run(EXACT, reading)
    assert r.answers == ["1963"] and (r.trace.stop_reason, r.trace.stopped_at) == ("converged", 2)
    assert r.decisions_read == 2 + 1 + 2 + 1 and r.reading_differences == []   # agents, aggregation, agents, stop
    assert [t.released_answer for t in r.trace.rounds[0].turns] == ["1963.", "1963."]


def test_the_paper_run_stops_where_the_released_code_stops():
    """Agent 2 moves from 1998 to 1963 in round 2, writing its explanation first: we read the change and debate
    on; [C]'s slice of that reply is empty, which its stop test counts as unchanged, so it stops at round 2 and
    returns round 1's aggregation (both years)."""
    table = {(1, 1): "Answer: 1963. Explanation: my document.", (2, 1): "Answer: 1998. Explanation: my document.",
             (2, 2): "Explanation: the other agent convinced me. Answer: 1963."}
    tolerant, paper = _run(table, "tolerant"), _run(table, "paper")
    assert (tolerant.trace.stop_reason, tolerant.trace.stopped_at, tolerant.trace.final_round) == ("converged", 3, 2)
    assert tolerant.answers == ["1963"] and tolerant.trace.rounds[1].turns[1].answer == "1963"
    assert (paper.trace.stop_reason, paper.trace.stopped_at, paper.trace.final_round) == ("converged", 2, 1)
    assert paper.answers == ["1963", "1998"]
    assert paper.trace.rounds[1].turns[1].answer is None and paper.trace.rounds[1].turns[1].released_answer == ""
    assert paper.trace.rounds[1].converged and not tolerant.trace.rounds[1].converged
    assert len(paper.calls) == 2 + 1 + 2 and len(tolerant.calls) == 2 + 1 + 2 + 1 + 2
    assert paper.decisions_read == 2 + 1 + 2 + 1 and tolerant.decisions_read == 2 + 1 + 2 + 1 + 1 + 2 + 1
    for r in (tolerant, paper):
        assert [(d.step, d.what) for d in r.reading_differences][:2] == [
            ("debate_round_2", "agent 2's answer"),
            ("debate_round_2", "stop the debate at round 2 (no agent changed its answer)")]
    stop = paper.reading_differences[1]
    assert (stop.used, stop.other, stop.call_id) == ("stop: no agent changed its answer", "go on: agent(s) 2 changed",
                                                     None)
    assert paper.reading_differences[0].call_id == paper.trace.rounds[1].turns[1].call_id


def test_a_markdown_aggregation_is_no_answer_to_the_released_slicing():
    table = {(1, 1): "Answer: 1963. Explanation: my document. CHATTY", (2, 1): "Answer: 1963. Explanation: mine."}
    tolerant, paper = _run(table, "tolerant"), _run(table, "paper")
    assert tolerant.answers == ["1963"] and paper.answers == [] and paper.abstained
    for r in (tolerant, paper):
        assert r.decisions_read == 6 and [(d.step, d.what) for d in r.reading_differences] == [
            ("aggregate_round_1", "the aggregator's answers")]
    assert (paper.reading_differences[0].used, paper.reading_differences[0].other) == ("no answer (unknown)", "1963")


def test_chat_style_agent_answers_differ_but_the_released_stop_test_may_still_pass():
    """"**Answer:** 1963" is sliced to "r:** 1963\\n**", which contains "1963" once normalised: the answers differ,
    the stop does not."""
    table = {(1, 1): "**Answer:** 1963\n**Explanation:** my document.", (2, 1): "Answer: 1963. Explanation: mine.",
             (1, 2): "Answer: 1963. Explanation: my document."}
    paper = _run(table, "paper")
    assert paper.trace.rounds[0].turns[0].answer == "r:** 1963\n**" and paper.trace.stop_reason == "converged"
    assert paper.trace.stopped_at == 2 and paper.answers == ["1963"]
    assert [d.what for d in paper.reading_differences] == ["agent 1's answer"]


def test_without_early_stop_the_stop_test_is_no_decision():
    table = {(1, 1): "Answer: 1963. Explanation: my document.", (2, 1): "Answer: 1998. Explanation: my document.",
             (2, 2): "Explanation: the other agent convinced me. Answer: 1963."}
    paper = _run(table, "paper", early_stop=False, max_rounds=2)
    assert paper.trace.stop_reason == "max_rounds" and paper.trace.rounds[1].converged   # the paper reading's marks
    assert len(paper.calls) == 2 + 1 + 2 + 1                       # round 2 aggregated: no early stop
    assert paper.decisions_read == 2 + 1 + 2 + 1                   # agents and aggregations; no stop decision
    assert [d.what for d in paper.reading_differences] == ["agent 2's answer"]


def test_chatty_offline_replies_make_real_differences(ramdocs):
    """The offline model's chat-style voice (``offline/chatty``): the released slicing reads some agents' answers and
    aggregations otherwise, under either reading."""
    from backend.schema import strip_truth

    for reading in ("tolerant", "paper"):
        decisions, differ = 0, []
        for q in ramdocs.questions[:3]:
            ctx = RunContext(client=LLMClient(LLMConfig(model="offline/chatty", cache_mode="off"))
                             .for_method("madam"), readings=Readings(reading))
            r = MadamRAG().run(strip_truth(q), ctx)
            assert r.error is None and r.reading == reading
            decisions += r.decisions_read
            differ += r.reading_differences
        assert 0 < len(differ) < decisions
        assert any(d.what.endswith("'s answer") and d.what.startswith("agent") for d in differ)
