"""RC-RAG's two readings (``backend.methods.reading``): the paper reading is the released code's parsers
(ict-bigdatalab/RC-RAG ``code/utils.py``: ``deal_prediction_with_evidence``, ``deal_fusion``,
``deal_fusion_probability``; docs/methods/counterfactual.md §3.2, §3.6, §8.6, §8.7). The released rules are written
out here as the expected values of hand-written replies (no released code is imported); then scripted runs show each
decision the two readings read differently on chat-style replies, recorded on the result, and the paper run taking
the released code's decision."""

import json

import pytest

from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.methods.base import RunContext
from backend.methods.counterfactual import CounterfactualRAG, parse_keep_discard, parse_probability, parse_reply
from backend.methods.counterfactual.parse import (RELEASED_REFUSAL_PHRASES, read_cf_reply_released,
                                                  released_keep_discard, released_probability, released_refusal,
                                                  refusal)
from backend.methods.reading import Readings
from backend.schema import Document, Question, strip_truth

Q = Question(id="bulls", question="Which team did Michael Jordan play for in 1991?",
             documents=[Document(id=f"b-d{i}", text=t) for i, t in enumerate(
                 ["Jordan led the Chicago Bulls to the 1991 title.", "In 1991 Jordan played for the Bulls.",
                  "Jordan played baseball for the Birmingham Barons in 1994."])],
             gold_answers=["Chicago Bulls"])
RAG = "Answer: Chicago Bulls.\nEvidence: ## Passage-0, Passage-1 ##."
CHANGED = "Answer: Birmingham Barons. Evidence: ## Passage-2 ##"


# --- the released answer reader (deal_prediction_with_evidence, §3.2) -------------------------------------------

@pytest.mark.parametrize("raw,answer,evidence", [
    # the paper's format: both readings agree ([ours]: the trailing full stop dropped in both)
    (RAG, "Chicago Bulls", "Passage-0, Passage-1"),
    ("Paris ## internal knowledge ##", "Paris", "internal knowledge"),
    ("Paris Evidence: Passage-1 and Passage-2", "Paris", "Passage-1, Passage-2"),
    # chat-style replies: the released code keeps everything but "Answer: " and ##…## spans in the answer
    ("**Answer:** Chicago Bulls\n**Evidence:** ## Passage-0 ##", "**Answer:** Chicago Bulls **Evidence:**",
     "Passage-0"),
    ("The answer is Chicago Bulls.\n\nEvidence: ## Passage-1 ##", "The answer is Chicago Bulls", "Passage-1"),
    ("#### Answer\nChicago Bulls\n\n**Evidence**\n## Passage-0 ##", "Answer Chicago Bulls  **Evidence**", "Passage-0"),
    ('{"answer": "Chicago Bulls", "evidence": ["Passage-0"]}',
     '{"answer": "Chicago Bulls", "evidence": ["Passage-0"]}', "Passage-0"),
    # the answer before the first "Evidence: ", the evidence after the last
    ("Answer: Bulls. Evidence: ## Passage-0 ## Evidence: ## Passage-2 ##", "Bulls", "Passage-2"),
])
def test_released_reply_reader(raw, answer, evidence):
    read = read_cf_reply_released(raw, 3)
    assert (read.answer, read.evidence) == (answer, evidence)


def test_the_tolerant_reader_reads_the_chat_style_replies_the_released_one_does_not():
    for raw in ("**Answer:** Chicago Bulls\n**Evidence:** ## Passage-0 ##",
                "The answer is Chicago Bulls.\n\nEvidence: ## Passage-1 ##",
                '{"answer": "Chicago Bulls", "evidence": ["Passage-0"]}'):
        assert parse_reply(raw, 3).answer == "Chicago Bulls" != read_cf_reply_released(raw, 3).answer


def test_released_refusal_is_the_released_list_without_dont_know():
    assert "don't know" not in RELEASED_REFUSAL_PHRASES and len(RELEASED_REFUSAL_PHRASES) == 24
    assert released_refusal("I don't know") is None and refusal("I don't know") == "don't know"
    assert released_refusal("The Unknown Soldier") == "unknown"            # the known false positive, both readings
    assert released_refusal("Sorry, no information.") == "sorry"
    assert released_refusal("Answer: Paris. Evidence: ## N/A ##") == "N/A"  # the whole reply, evidence included
    dont_know = "Answer: I don't know.\nEvidence: ## internal knowledge ##"
    assert parse_reply(dont_know, 3).reject and not read_cf_reply_released(dont_know, 3).reject
    no_reply = read_cf_reply_released(None, 3)
    assert no_reply.reject and no_reply.answer == ""                        # the released code: reject on None


def test_a_structured_reply_is_read_from_its_schema_fields():
    raw = '{"answer": "Chicago Bulls", "evidence": "Passage-0, Passage-1"}'
    read = read_cf_reply_released(raw, 3, structured=True)
    assert (read.answer, read.evidence, read.passages) == ("Chicago Bulls", "Passage-0, Passage-1", [0, 1])


# --- direct selection (deal_fusion, §3.6, §8.6) --------------------------------------------------------------

@pytest.mark.parametrize("raw,released,tolerant", [
    ("$$ keep $$", "keep", "keep"),
    ("$$ discard $$", "discard", "discard"),
    # the released regex never matches, so "keep" anywhere (case-sensitive) keeps
    ("I keep thinking... $$ discard $$", "keep", "discard"),
    ("Discard it instead of keeping it.", "keep", "discard"),
    ("I would not keep this answer.", "keep", "discard"),
    ('{"decision": "discard", "reason": "no need to keep it"}', "keep", "discard"),
    ("**$$ Keep $$**", "discard", "keep"),
    ("KEEP", "discard", "keep"),
    ("hmm, hard to say", "discard", "discard"),
    ("", "discard", "discard"),
])
def test_released_keep_discard(raw, released, tolerant):
    assert released_keep_discard(raw) == released
    assert parse_keep_discard(raw).value == tolerant


def test_released_keep_discard_of_a_structured_reply_reads_the_decision_field():
    raw = '{"decision": "discard", "reason": "no need to keep it"}'
    assert released_keep_discard(raw, structured=True) == "discard" and released_keep_discard(None) == "discard"


# --- probability comparison (deal_fusion_probability over deal_prediction_with_evidence's answer, §3.6, §8.7) --

@pytest.mark.parametrize("raw,released,tolerant", [
    ("Probability: 0.85", 0.85, 0.85),
    ("0.3.", 0.3, 0.3),
    ("**Probability:** 0.7", 0.7, 0.7),
    ('{"probability": 0.9}', 0.9, 0.9),
    ("Answer: 0.6", 0.6, 0.6),                   # "answer:" dropped first
    ("1", 0.0, 1.0),                             # no "." : the released code reads nothing
    ("Probability: 1", 0.0, 1.0),
    ("Probability: 1.", 1.0, 1.0),               # "\d+\." : 1.0
    ("95%", 0.0, 0.95),
    ("I'd estimate the probability at 83%.", 0.0, 0.83),
    (".8", 0.0, 0.8),
    ("0,8", 0.0, 0.8),
    ("7/10", 0.0, 0.7),
    ("95.", 95.0, 0.95),                         # not clamped
    ("## 0.9 ##", 0.0, 0.9),                     # the ##…## span is removed from the answer part
    ("nothing", 0.0, 0.0),
])
def test_released_probability(raw, released, tolerant):
    assert released_probability(raw) == pytest.approx(released)
    assert parse_probability(raw).value == pytest.approx(tolerant)


def test_released_probability_of_a_structured_reply_reads_the_field():
    assert released_probability('{"probability": 1}', structured=True) == 1.0
    assert released_probability('{"confidence": 0.4}', structured=True) == 0.0 and released_probability(None) == 0.0


# --- runs: decisions read both ways, recorded, decided by the run's reading -------------------------------------

def _run(quality, usage, rag=RAG, judge="$$ keep $$", probability=None, reading="tolerant", structured=False, **kw):
    script = {"cf_answer": rag, "cf_quality": quality, "cf_usage": usage, "cf_judge": judge,
              "cf_probability": probability or "Probability: 0.5"}
    config = LLMConfig(model="scripted/cf-reading", cache_mode="off", concurrency=8, structured_output=structured)
    ctx = RunContext(client=LLMClient(config).for_method("counterfactual"), readings=Readings(reading))
    with scripted(script):
        return CounterfactualRAG(**kw).run(strip_truth(Q), ctx)


@pytest.mark.parametrize("reading", ["tolerant", "paper"])
def test_replies_in_the_papers_format_read_alike(reading):
    r = _run("Answer: Chicago Bulls.\nEvidence: ## Passage-1 ##", "Chicago Bulls", reading=reading)
    assert r.reading == reading and r.answers == ["Chicago Bulls"]
    assert r.decisions_read == 4 and r.reading_differences == []    # the answer, the refusal, two judgments


def test_a_markdown_rag_answer_is_kept_by_the_tolerant_reading_and_discarded_by_the_released_code():
    rag = "**Answer:** Chicago Bulls\n**Evidence:** ## Passage-0 ##"
    runs = {reading: _run("Answer: Chicago Bulls. Evidence: ## Passage-1 ##", "Chicago Bulls", rag=rag,
                          reading=reading) for reading in ("tolerant", "paper")}
    tolerant, paper = runs["tolerant"], runs["paper"]
    assert tolerant.answers == ["Chicago Bulls"] and tolerant.trace.decision == "keep"
    # the released code's RAG answer is "**Answer:** Chicago Bulls **Evidence:**": "Chicago Bulls" is F1 0.67 and
    # ROUGE-L recall 0.5 from it, so both counterfactual answers "changed" -> both discard -> abstain
    assert paper.trace.rag.answer == "**Answer:** Chicago Bulls **Evidence:**"
    assert paper.abstained and paper.trace.decision == "discard" and paper.trace.agree
    assert [b.decision for b in paper.trace.branches] == ["discard", "discard"]
    for r in (tolerant, paper):
        assert r.decisions_read == 4
        assert [(d.step, d.what.split(":")[0]) for d in r.reading_differences] == [
            ("rag_answer", "RAG answer"), ("cf_quality_round_1", "CF-quality round 1"),
            ("cf_usage_round_1", "CF-usage round 1")]
    diff = paper.reading_differences[0]
    assert diff.used == "'**Answer:** Chicago Bulls **Evidence:**'" and diff.other == "'Chicago Bulls'"
    assert diff.call_id == paper.calls[0].id
    assert tolerant.reading_differences[1].used.startswith("keep") and \
        tolerant.reading_differences[1].other.startswith("discard")


def test_direct_selection_takes_the_released_keep_when_keep_is_anywhere_in_the_reply():
    judge = "I keep going back and forth, but I would $$ discard $$ this answer."
    tolerant = _run(CHANGED, "Chicago Bulls", judge=judge)
    paper = _run(CHANGED, "Chicago Bulls", judge=judge, reading="paper")
    assert tolerant.abstained and tolerant.trace.fusion.choice == "discard"
    assert paper.answers == ["Chicago Bulls"] and paper.trace.fusion.choice == "keep"
    assert any("released code's rule" in n for n in paper.trace.fusion.notes)
    for r in (tolerant, paper):
        assert r.decisions_read == 5                                # + the fusion call
        assert [(d.step, d.what) for d in r.reading_differences] == [
            ("fusion_direct", "direct selection: keep or discard")]
    assert (paper.reading_differences[0].used, paper.reading_differences[0].other) == ("keep", "discard")


def test_probability_comparison_reads_probability_1_as_zero_under_the_released_code():
    def probability(fields):
        return "Probability: 1" if fields["previous_answer"] == "Birmingham Barons" else "Probability: 0.6"
    tolerant = _run(CHANGED, "Chicago Bulls", probability=probability, fusion="probability")
    paper = _run(CHANGED, "Chicago Bulls", probability=probability, fusion="probability", reading="paper")
    assert tolerant.trace.fusion.probabilities == {"quality": 1.0, "usage": 0.6}
    assert tolerant.trace.fusion.winner == "quality" and tolerant.abstained       # quality said discard
    assert paper.trace.fusion.probabilities == {"quality": 0.0, "usage": 0.6}
    assert paper.trace.fusion.winner == "usage" and paper.answers == ["Chicago Bulls"]
    for r in (tolerant, paper):
        assert r.decisions_read == 6
        assert [d.what for d in r.reading_differences] == ["probability comparison: quality's probability"]
    assert (paper.reading_differences[0].used, paper.reading_differences[0].other) == ("0", "1")


def test_i_dont_know_is_no_refusal_to_the_released_code_so_the_override_does_not_fire():
    rag = "Answer: I don't know.\nEvidence: ## internal knowledge ##"
    tolerant = _run("I don't know", "I don't know", rag=rag)
    paper = _run("I don't know", "I don't know", rag=rag, reading="paper")
    assert tolerant.trace.override and tolerant.abstained
    assert not paper.trace.override and paper.trace.decision == "keep" and paper.answers == ["I don't know"]
    for r in (tolerant, paper):
        assert [d.what for d in r.reading_differences] == ["refusal (the 'unknown' override)"]
    assert paper.reading_differences[0].used == "not a refusal"
    assert tolerant.reading_differences[0].used == "a refusal (\"don't know\")"


def test_structured_replies_read_alike():
    replies = dict(rag=json.dumps({"answer": "Chicago Bulls", "evidence": "Passage-0"}),
                   quality=json.dumps({"answer": "Chicago Bulls", "evidence": "Passage-1"}),
                   usage=json.dumps({"answer": "Chicago Bulls"}))
    for reading in ("tolerant", "paper"):
        r = _run(replies["quality"], replies["usage"], rag=replies["rag"], reading=reading, structured=True)
        assert all(c.structured for c in r.calls)
        assert r.answers == ["Chicago Bulls"] and r.decisions_read == 4 and r.reading_differences == []


def test_chatty_offline_replies_make_real_differences(ramdocs):
    """The offline model's chat-style voice (``offline/chatty``): the released parsers read some of its decisions
    otherwise, under either reading."""
    for reading in ("tolerant", "paper"):
        decisions, differ = 0, []
        for q in ramdocs.questions[:6]:
            ctx = RunContext(client=LLMClient(LLMConfig(model="offline/chatty", cache_mode="off"))
                             .for_method("counterfactual"), readings=Readings(reading))
            r = CounterfactualRAG().run(strip_truth(q), ctx)
            assert r.error is None and r.reading == reading
            decisions += r.decisions_read
            differ += r.reading_differences
        assert decisions >= 6 * 4 and 0 < len(differ) < decisions
        assert {d.what for d in differ} >= {"RAG answer"}
