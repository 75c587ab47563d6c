"""BRIDGE's two readings of its replies (``backend.methods.reading``): the paper's rules (spec §8.17's responder
regex, the allocator's two "…: X%" lines, the "1. …" lines of the sub-query, generator and reflection formats), the
tolerant responder's rules (an option only from a reply that chooses one, "I don't know" only when chosen, the last
choice wins) and soft bias (a range is no probability), each decision recorded where the two readings differ; spec
§8.9's fallback (one generator call per sub-query when the answer count is off); and a refuse-to-answer scenario
where the paper's algorithm refuses (and its twin, where it cannot: why the bundled scenarios set never refuses)."""

from __future__ import annotations

import pytest

from backend.data import Dataset
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.methods.bridge.method import BRIDGE, estimate
from backend.methods.bridge.parse import (paper_answers, paper_option, paper_reflection, paper_soft_bias,
                                          paper_sub_queries, parse_option, parse_soft_bias)
from backend.methods.estimate import Sizes
from backend.runner import Runner
from backend.schema import Document, Question
from backend.scoring import refused, unreadable, verdict
from tests.methods.test_bridge_readers import CHATTY, MEMORY, QUESTION, SUBS

OPTIONS = QUESTION.options          # A Vicky Binns, B Bianca Ryan, C I don't know, D Lukas Graham
EXACT = {**CHATTY,
         "soft_bias": "Analysis: a stable fact.\nProbability of retrieving external knowledge: 20%\n"
                      "Probability of answering directly: 80%",
         "sub_queries": "\n".join(f"{k}. {q}" for k, q in enumerate(SUBS, 1)),
         "multi_answer": lambda f: "\n".join(f"{k}. Bianca Ryan: {MEMORY}"
                                             for k in range(1, len(f["sub_queries"]) + 1)),
         "select_option": "Correct Option: B"}


def _run(script: dict, tmp_path, reading: str = "tolerant", question: Question = QUESTION, **params):
    """One BRIDGE run on scripted replies (as ``test_bridge_readers._run``, with the run's reading)."""
    ds = Dataset(name="s", path=str(tmp_path / "s.jsonl"), questions=[question])
    with scripted(script) as model:
        runner = Runner(ds, llm=LLMConfig(model="scripted/bridge", cache_mode="off"), reading=reading,
                        method_params={"bridge": {"n": 3, **params}})
        return runner.run(ds.question(question.id), ["bridge"])["bridge"], model


# --- the tolerant responder: an option only from a reply that chooses one -------------------------------------

def test_a_later_explicit_choice_wins():
    read = parse_option("I would pick A, but D is safer: D", 4, OPTIONS)
    assert read.value == 3 and read.status == "lenient" and "later choice (D)" in read.note
    assert parse_option("Correct Option: A. Actually, Correct Option: D", 4, OPTIONS).value == 3
    assert parse_option("I did not pick A. Correct Option: B", 4, OPTIONS).value == 1   # a negated choice is none


@pytest.mark.parametrize("reply", ["I don't know", "I don't know."])
def test_a_bare_i_dont_know_is_no_option(reply):
    read = parse_option(reply, 4, OPTIONS)
    assert read.value is None and read.status == "unreadable" and "P17" in read.note


@pytest.mark.parametrize("reply", ["Correct Option: C", "Correct Option: I don't know", "Answer: I don't know",
                                   "I don't know (C)", "C) I don't know", "I choose \"I don't know\""])
def test_i_dont_know_is_the_option_when_the_reply_chooses_it(reply):
    assert parse_option(reply, 4, OPTIONS).value == 2


@pytest.mark.parametrize("reply", ["Option A is wrong.", "Vicky Binns is not the winner.",
                                   "I don't know, but probably Bianca Ryan."])
def test_an_option_named_but_not_chosen_is_no_option(reply):
    assert parse_option(reply, 4, OPTIONS).value is None


def test_a_bare_i_dont_know_reply_is_an_invalid_answer_not_a_refusal(tmp_path):
    r, _ = _run({**EXACT, "select_option": "I don't know"}, tmp_path)
    tr = r.trace
    assert tr.leaf != "RA" and tr.invalid and tr.option is None and r.answers == [] and not r.abstained
    assert unreadable(r) and not refused(r) and verdict(r, QUESTION) == "unreadable"


# --- the tolerant soft bias: a range is not a probability -------------------------------------------------------

def test_a_range_before_the_estimate_is_ignored():
    reply = ("Probability of retrieving external knowledge: 10%-90% → I estimate 30%\n"
             "Probability of answering directly: 70%")
    read = parse_soft_bias(reply)
    assert read.value == pytest.approx((0.3, 0.7)) and "range" in read.note      # not 0.125, not a midpoint
    both = reply.replace("directly: 70%", "directly: 10%-90% → I estimate 70%")
    assert parse_soft_bias(both).value == pytest.approx((0.3, 0.7))


@pytest.mark.parametrize("reply", ["Probability of retrieving external knowledge: 10%-90%",
                                   "Probability of retrieving external knowledge: 10%-90%\n"
                                   "Probability of answering directly: 10%-90%",
                                   "Probability of retrieving external knowledge: [10% - 90%]"])
def test_a_bare_range_is_unreadable(reply):
    read = parse_soft_bias(reply)
    assert read.value == (0.5, 0.5) and read.status == "unreadable"


# --- the paper's rules ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply,value", [
    ("Correct Option: B", 1), ("Correct Option: (B)", 1), ("Correct Option:B.", 1),
    ("Looking at it.\nCorrect Option: D\nCorrect Option: A", 3),     # the first match
    ("Correct Option: Bianca Ryan", 1),                             # the regex reads the first letter, B
    ("Correct Option: C", 2),                                       # the "I don't know" option by its letter
    ("**Correct Option:** B", None), ("correct option: b", None), ("Answer: B", None), ("B", None),
    ("Correct Option: I don't know", None), ("I don't know", None), ("Correct Option: E", None)])
def test_the_paper_responder_is_spec_8_17s_regex(reply, value):
    read = paper_option(reply, options=OPTIONS)
    assert read.value == value and read.status == ("exact" if value is not None else "unreadable")


def test_the_paper_responder_reads_only_letters_of_the_questions_options():
    assert paper_option("Correct Option: D", options=["x", "y", "I don't know"]).value is None
    assert paper_option("Correct Option: F", options=[f"o{i}" for i in range(6)]).value == 5   # [ours]: past D


@pytest.mark.parametrize("reply,value", [
    ("Analysis: x\nProbability of retrieving external knowledge: 80%\nProbability of answering directly: 20%",
     (0.8, 0.2)),
    ("Probability of retrieving external knowledge: 60%\nProbability of answering directly: 60%", (0.5, 0.5)),
    ("Probability of retrieving external knowledge: 10%-90% → I estimate 30%\nProbability of answering directly: 70%",
     (0.125, 0.875)),                                              # literal: the first number after the label
    ("Probability of retrieving external knowledge: 80%", (0.5, 0.5)),            # one line: the default
    ("**Probability of retrieving external knowledge:** 80%\n**Probability of answering directly:** 20%", (0.5, 0.5)),
    ("Probability of retrieving external knowledge: 0.8\nProbability of answering directly: 0.2", (0.5, 0.5)),
    ('{"probability_of_retrieving_external_knowledge": 0.8}', (0.5, 0.5))])
def test_the_paper_soft_bias_reads_the_two_lines_literally(reply, value):
    read = paper_soft_bias(reply)
    assert read.value == pytest.approx(value)
    if value == (0.5, 0.5) and "60%" not in reply:
        assert read.status == "unreadable" and "r_p = 0.5" in read.note


def test_the_paper_lists_are_the_numbered_lines():
    assert paper_sub_queries("New Questions:\n1. a?\n2. b?", n=2).value == ["a?", "b?"]
    assert paper_sub_queries("**1.** a?\n- b?\n1) c?", n=3).value == []
    assert paper_answers("1. Bianca Ryan\n2. I don't know", sub_queries=["a?", "b?"]).value == ["Bianca Ryan",
                                                                                                "I don't know"]
    assert paper_answers("Answer: Bianca Ryan", sub_queries=["a?"]).status == "unreadable"
    assert paper_reflection("Analysis: they differ\nNew questions:\n1. a?\n2. b?", n=2).value == ("they differ",
                                                                                                   ["a?", "b?"])
    assert paper_reflection("Analysis: they differ\n1. a?", n=1).value == ("", [])


# --- the two readings in a run ---------------------------------------------------------------------------------

def test_the_papers_format_reads_alike_in_both_readings(tmp_path):
    for reading in ("tolerant", "paper"):
        r, _ = _run(EXACT, tmp_path, reading=reading)
        assert r.reading == reading and r.reading_differences == [] and r.decisions_read >= 5
        assert r.trace.option == "B" and r.answers == ["Bianca Ryan"]


def test_chat_styled_replies_differ_between_readings_and_each_difference_is_recorded(tmp_path):
    tolerant, _ = _run(CHATTY, tmp_path)
    assert tolerant.trace.option == "B" and (tolerant.trace.r_p, tolerant.trace.g_p) == (0.2, 0.8)
    differ = {d.step: d for d in tolerant.reading_differences}
    assert {"allocate", "sub_queries", "generate_cycle_0", "respond"} <= set(differ)
    assert differ["respond"].used == "B. Bianca Ryan" and differ["respond"].other == "no option (invalid)"
    assert differ["allocate"].used == "r_p = 0.2" and "default" in differ["allocate"].other
    assert all(d.call_id for d in tolerant.reading_differences)

    paper, _ = _run(CHATTY, tmp_path, reading="paper")
    tr = paper.trace
    assert paper.reading == "paper" and tr.r_p == 0.5 and "r_p = 0.5" in tr.bias_note      # spec §8.6's default
    assert [s.text for s in tr.cycles[0].sub_queries] == [QUESTION.question] * 3           # no "1. …" line
    assert {d.step for d in paper.reading_differences} >= {"allocate", "sub_queries"}
    if tr.leaf != "RA":   # "**Correct Option:** B" is no match for the paper's regex: invalid, counted wrong
        assert tr.invalid and unreadable(paper) and not refused(paper)


# --- spec §8.9: a generator answer count off -> one call per sub-query -------------------------------------------

@pytest.mark.parametrize("short", ["1. Bianca Ryan", "1. Bianca Ryan\n2. Bianca Ryan\n3. Bianca Ryan\n4. Vicky Binns",
                                   "Bianca Ryan won, I believe."])
def test_a_generator_reply_with_the_wrong_count_asks_each_sub_query_on_its_own(short, tmp_path):
    def multi_answer(fields):   # the one-call reply has the wrong count; a one-question reply answers it
        return short if len(fields["sub_queries"]) > 1 else f"1. Bianca Ryan: {MEMORY}"

    r, model = _run({**EXACT, "multi_answer": multi_answer}, tmp_path)
    tr = r.trace
    first = tr.cycles[0]
    each = [c for c in r.calls if c.step == "generate_each_0"]
    assert r.error is None and tr.s_g == 3 and len(each) == 3
    prompts = [c.messages[0]["content"] for c in each]       # one sub-query each, every sub-query once
    assert sorted(q for p in prompts for q in SUBS if f"Questions:\n1. {q}\nAnswers:" in p) == sorted(SUBS)
    assert sum(len(f["sub_queries"]) == 1 for f in model.received if f.get("task") == "multi_answer") == 3
    generator = next(c for c in r.calls if c.step == "generate_cycle_0")
    assert all(c.parents == generator.parents for c in each)           # built from the sub-queries, as it was
    assert set(first.call_ids) == {generator.id, *(c.id for c in each)}
    assert [k.text for k in first.k_gen] == [f"Bianca Ryan: {MEMORY}"] * 3 and not any(k.idk for k in first.k_gen)
    assert any("spec §8.9" in n for n in tr.notes)
    for c in each:   # the paper's generator prompt with one question
        assert c.task == "multi_answer" and "Questions:\n1. " in c.messages[0]["content"]


def test_a_right_count_makes_no_extra_call(tmp_path):
    r, _ = _run(EXACT, tmp_path)
    assert not any(c.step.startswith("generate_each") for c in r.calls)


def test_the_estimate_counts_the_fallback_as_conditional():
    est = estimate(BRIDGE(), QUESTION, Sizes())
    each = [s for s in est.steps if s.step.startswith("generate_each_")]
    assert [s.step for s in each] == [f"generate_each_{k}" for k in range(4)]
    assert all(s.conditional and s.calls == 9 for s in each)           # s_g at most ⌈0.9·10⌉
    assert BRIDGE.declares_step("generate_each_2")


# --- a refuse-to-answer scenario where the paper's algorithm refuses --------------------------------------------

RA_QUESTION = Question(
    id="ra", question="Who is the current head coach of the Riverton Rovers football club?",
    documents=[Document(id="ra-d1", text="The Riverton Rovers football club is currently coached by Marcus Vell, a "
                                         "former goalkeeper from Lisbon.")],     # corrupted external knowledge
    options=["Marcus Vell", "Daniel Hart", "I don't know", "Tom Reyes"], gold_answers=["I don't know"],
    meta={"scenario": "RA", "temporal": "evolution", "true_answer": "Elena Moreau"})
RA_SUBS = ["Which person is the head coach of the Riverton Rovers now?", "Who leads the Riverton Rovers as head coach?",
           "What is the name of the Riverton Rovers' head coach?",
           "Whose tactics does the Riverton Rovers team follow as coach?",
           "How is the Riverton Rovers' head coach called?",
           "Where does the Riverton Rovers' head coach come from?",
           "When was the Riverton Rovers' present head coach appointed?",
           "Why is the Riverton Rovers' coach in the news?", "Which coach manages the Riverton Rovers football club?",
           "Who trains the Riverton Rovers players?"]
#: outdated memory, worded unlike the document (spec §9: otherwise N0 sees agreement)
OUTDATED = "In 2021 Daniel Hart was appointed head coach of the Riverton Rovers football club."
#: the same outdated answer in the document's own sentence, as the bundled set's memories are (its "twins")
TWIN = "The Riverton Rovers football club is currently coached by Daniel Hart, a former goalkeeper from Lisbon."


def _ra_script(memory: str) -> dict:
    return {"soft_bias": "Analysis: the current coach may have changed since training.\n"
                         "Probability of retrieving external knowledge: 80%\nProbability of answering directly: 20%",
            "generate_passage": memory, "sub_queries": "\n".join(f"{k}. {q}" for k, q in enumerate(RA_SUBS, 1)),
            "multi_answer": lambda f: "\n".join(f"{k}. Daniel Hart: {memory}"
                                                for k in range(1, len(f["sub_queries"]) + 1)),
            "reflect": "Analysis: memory and the document name different coaches.\nNew questions:\n"
                       + "\n".join(f"{k}. {q}" for k, q in enumerate(reversed(RA_SUBS), 1)),
            "select_option": "Correct Option: B"}


@pytest.mark.parametrize("reading", ["tolerant", "paper"])
def test_outdated_memory_against_a_corrupted_document_is_refused(reading, tmp_path):
    """K_int (2021: Daniel Hart) and K_ext (Marcus Vell) disagree, so N0 finds no agreement (S1 + S4 ≤ 1); the
    80/20 bias follows the retriever (T_Ret ≥ T_LLM), but what it retrieves only echoes K_ext against a
    self-consistent memory, so T_Ret stays in [α, β): REFLECT, three reflections do not settle it, RA: BRIDGE gives
    the "I don't know" option without a responder call, counted right on this refuse-to-answer item."""
    r, _ = _run(_ra_script(OUTDATED), tmp_path, reading=reading, question=RA_QUESTION, n=10)
    tr = r.trace
    first = tr.cycles[0]
    assert r.error is None and (tr.r_p, tr.g_p) == (0.8, 0.2)
    assert first.s1.total + first.s4.total < 1 and first.t_ret >= first.t_llm and 0.5 <= first.t_ret < 1.1
    assert [c.outcome for c in tr.cycles] == ["REFLECT"] * 4 and tr.leaf == "RA" and tr.defaulted_to_ra
    assert "respond" not in {c.step for c in r.calls} and r.abstained and r.answers == [] and not tr.invalid
    assert refused(r) and verdict(r, RA_QUESTION) == "abstained"
    sent = "\n".join(m["content"] for c in r.calls for m in c.messages)
    assert "Elena Moreau" not in sent and "scenario" not in sent       # no label reaches the model


def test_a_memory_in_the_documents_words_looks_like_agreement_and_is_not_refused(tmp_path):
    """Why the bundled scenarios set never refuses on RA/evolution: its memories are the documents' sentences with
    the answer swapped (or cut from the same pool), which the Knowledge Scorer rates as agreeing (spec §8.16), so N0
    says FA and the responder answers from the conflicting knowledge."""
    r, _ = _run(_ra_script(TWIN), tmp_path, question=RA_QUESTION, n=10)
    first = r.trace.cycles[0]
    assert first.s1.total > 0.5 and first.s1.total + first.s4.total > 1 and r.trace.leaf == "FA"
    assert r.answers == ["Daniel Hart"] and not refused(r)
