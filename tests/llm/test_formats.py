"""Parsers are total (never raise), read well-formed replies, and say how they fell back on bad ones."""

import random

import pytest

from backend.llm import formats as f

GARBAGE = ["", "   ", "\x00\x01", "}{][", "Answer:", "Explanation:", "<ANSWER>", "$$", "Probability: abc",
           "Correct Option:", "1.", "Document 9 (source: nowhere): x", "All Correct Answers: [", "💥" * 50]


@pytest.mark.parametrize("name", sorted(f.PARSERS))
def test_every_parser_is_total_on_garbage(name):
    rng = random.Random(7)
    samples = GARBAGE + ["".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(1, 80)))
                         for _ in range(200)]
    for text in samples:
        result = f.PARSERS[name](text)
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


def test_answer_evidence_keep_discard_probability():
    assert f.parse_answer_evidence("Answer: Paris.\nEvidence: ## Passage-2 ##.").value == ("Paris", [2])
    assert f.parse_answer_evidence("Answer: I don't know.").ok
    assert f.parse_keep_discard("$$ keep $$").value is True
    r = f.parse_keep_discard("I would discard it")
    assert r.value is False and not r.ok
    assert f.parse_keep_discard("keep or discard?").value is None
    assert f.parse_probability("Probability: 0.85").value == 0.85
    assert f.parse_probability("85%").value == pytest.approx(0.85)
    assert f.parse_probability("Probability: 7").value == pytest.approx(0.07)


def test_soft_bias_numbered_option_passages():
    text = "Analysis: x\nProbability of retrieving external knowledge: 80%\nProbability of answering directly: 20%"
    assert f.parse_soft_bias(text).value == pytest.approx((0.8, 0.2))
    r = f.parse_soft_bias("Probability of retrieving external knowledge: 60%")
    assert r.value == pytest.approx((0.6, 0.4)) and not r.ok
    assert f.parse_numbered_list("1. a\n2) b\nnot numbered\n3: c").value == ["a", "b", "c"]
    assert not f.parse_numbered_list("1. a", expected=10).ok
    assert f.parse_option("Correct Option: C").value == 2
    assert f.parse_option("I pick B) because").value == 1
    assert f.parse_passages("<DOC>one</DOC><DOC>I don't know</DOC>").value == ["one"]


def test_groups_candidates_and_tags():
    text = ("Document 1 (source: both; original documents: 1, 3, 9): Ann wrote it.\n"
            "Document 2 (source: external; original documents: 2): Bob wrote it.\n"
            "Group 1: Ann (confidence 0.8)\nGroup 2: Bob (confidence 20%)\n<ANSWER>Ann</ANSWER>")
    groups = f.parse_groups(text, n_documents=3)
    assert [g.documents for g in groups.value] == [[1, 3], [2]] and "out-of-range" in groups.note
    cands = f.parse_candidates(text)
    assert cands.value == [(1, "Ann", 0.8), (2, "Bob", 0.2)] and "percentage" in cands.note
    assert f.parse_tagged_answers(text).value == ["Ann"]
    assert f.parse_tagged_answers("<ANSWER>I don't know</ANSWER>").ok
    assert f.parse_candidates("Group 1: Ann (confidence high)").value == [(1, "Ann", 0.9)]
