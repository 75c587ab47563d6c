"""The general readers are total (never raise), read well-formed replies, and say how they fell back on bad ones.
(A method's own readers are tested beside the method; every task's reader against the offline model in
``test_offline_tasks.py``.)"""

import random

import pytest

from backend.llm import formats as f

GARBAGE = ["", "   ", "\x00\x01", "}{][", "Answer:", "Explanation:", "<ANSWER>", "$$", "Probability: abc",
           "Correct Option:", "1.", "Document 9 (source: nowhere): x", "All Correct Answers: [", "💥" * 50]


READERS = {r.__name__: r for r in (f.parse_short_answer, f.parse_yes_no, f.parse_agent_response,
                                   f.parse_all_correct_answers, f.parse_passages)}


@pytest.mark.parametrize("name", sorted(READERS))
def test_every_reader_is_total_on_garbage(name):
    rng = random.Random(7)
    samples = GARBAGE + ["".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(1, 80)))
                         for _ in range(200)]
    for text in samples:
        result = READERS[name](text)
        assert isinstance(result, f.Parsed)


def test_short_answer():
    assert f.parse_short_answer("Answer: Lyndon B. Johnson.").value == "Lyndon B. Johnson"
    assert f.parse_short_answer("I don't know").value is None
    assert f.parse_short_answer("Unknown.").value is None
    r = f.parse_short_answer("Paris\nbecause the passage says so")
    assert r.value == "Paris" and not r.ok and "first line" in r.note


def test_agent_response_and_fallback():
    assert f.parse_agent_response("Answer: 3,559 people. Explanation: the 2010 census.").value == (
        "3,559 people", "the 2010 census.")
    r = f.parse_agent_response("Football, clearly")
    assert r.value[0] == "Football, clearly" and not r.ok
    assert f.parse_agent_response("Answer: unknown. Explanation: nothing").value[0] is None


def test_all_correct_answers_variants():
    assert f.parse_all_correct_answers('All Correct Answers: ["a", "b"]. Explanation: both').value == (["a", "b"], "both")
    r = f.parse_all_correct_answers("All Correct Answers: a, b")
    assert r.value[0] == ["a", "b"] and not r.ok
    assert f.parse_all_correct_answers("All Correct Answers: []. Explanation: unknown.").value[0] == []
    assert not f.parse_all_correct_answers("the answer is a").ok


def test_passages():
    assert f.parse_passages("<DOC>one</DOC><DOC>I don't know</DOC>").value.kept == ["one"]
    r = f.parse_passages("<DOC>one</DOC><DOC>two</DOC>", max_passages=1)
    assert r.value.kept == ["one"] and not r.ok and "past the limit" in r.note
    assert f.parse_passages("I don't know.").value.kept == [] and f.parse_passages("None").value.kept == []


def test_exact_replies_are_read_from_their_raw_text():
    """Nothing to see through: the reply is read as it is (curly quotes, tokenised `` '' quotes), and exact."""
    assert f.parse_short_answer("Rock ’n’ roll") == f.Parsed("Rock ’n’ roll")
    turn = "Answer: Cut Copy. Explanation: inanities such as `` free your mind '' and `` shine on , ''."
    assert f.parse_agent_response(turn) == f.Parsed(("Cut Copy", "inanities such as `` free your mind '' and `` "
                                                                 "shine on , ''."))
    assert f.parse_short_answer("I'm Sorry") == f.Parsed("I'm Sorry")            # a song title, not a refusal
    assert f.parse_short_answer("I'm sorry, but I don't know.").value is None


@pytest.mark.parametrize("name", sorted(READERS))
def test_an_empty_reply_is_unreadable_and_names_the_default(name):
    for text in ("", "   ", None):
        read = READERS[name](text)
        assert read.status == "unreadable" and "the method used its default" in read.note
