"""Astute RAG's two readings of the final answer (backend/methods/astute/parse.py, backend.methods.reading).

The paper's rule, written out here: the p_ans prompt's Step 3 says "Highlight your exact answer within <ANSWER> your
answer </ANSWER>", and the answer is extracted from those special tokens (Astute RAG §3.5, §4, App. A); it names no
other output. So in the paper reading a reply without a closed ``<ANSWER>`` tag has no answer: the method abstains.
The tolerant reading (the default) also reads an answer the reply states without the tag (a JSON key, a "Final
Answer:" label or heading, "the final answer is X"). In both, only the model picks: a reply that names no final
answer abstains, however confident one of its candidates is (the reader never picks the most confident candidate).
"""

import pytest

from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.methods.astute import AstuteRAG, build_d0, parse_answer, parse_consolidation
from backend.methods.astute.parse import parse_answer_paper
from backend.methods.base import RunContext
from backend.methods.reading import Readings
from backend.schema import Document, strip_truth
from tests.methods.test_astute import MEMORY, PAPER_REPLY, QUESTION

STEPS = PAPER_REPLY.split("<ANSWER>")[0]          # Steps 1-3 without the tag (groups, candidates, rationale)
D0 = build_d0([(1, Document(id="a", text="x"))] * 4, ["memory"])


def _both(reply: str, mode: str = "single"):
    groups = parse_consolidation(reply, D0).groups
    return parse_answer(reply, groups, mode), parse_answer_paper(reply, mode)


# --- the readers against hand-written replies -----------------------------------------------------------------

@pytest.mark.parametrize("reply, paper", [
    (STEPS + "<ANSWER>1963</ANSWER>", ["1963"]),
    (STEPS + "<ANSWER> 1963 </ANSWER>", ["1963"]),                       # the prompt's own spacing
    (STEPS + "<ANSWER>1998</ANSWER> on reflection <ANSWER>1963</ANSWER>", ["1963"]),  # [ours] the last tag
    (STEPS + "<ANSWER>I don't know</ANSWER>", []),                      # an abstention in both readings
    (STEPS + "Final answer: 1963.", []),                                 # a label: not the paper's format
    (STEPS + "The final answer is 1963.", []),
    (STEPS + "<answer>1963</answer>", []),                               # not the tag as the paper writes it
    (STEPS + "<ANSWER>1963", []),                                        # cut off inside the tag: not closed
    ('{"final_answer": "1963"}', []),                                     # a JSON reply (no schema was asked for)
    (STEPS, []),                                                          # Steps 1-3, no pick at all
])
def test_the_paper_reads_the_answer_tag_only(reply, paper):
    read = parse_answer_paper(reply)
    assert read.answers == paper
    if not paper and "<ANSWER>I don't know" not in reply:
        assert read.how == "failed" and read.status == "unreadable"
        assert "the method used its default: no answer" in read.note


def test_multi_mode_and_a_structured_reply_in_the_paper_reading():
    assert parse_answer_paper("<ANSWER>1963</ANSWER>\n<ANSWER>1998</ANSWER>", "multi").answers == ["1963", "1998"]
    # structured output asked for the project's JSON schema, not the paper's tag: its own field is read
    reply = '{"groups": [], "final_answers": ["1963"]}'
    assert parse_answer_paper(reply, structured=True).answers == ["1963"]
    assert parse_answer_paper('{"groups": []}', structured=True).answers == []


@pytest.mark.parametrize("reply, tolerant, how", [
    (STEPS + "<ANSWER>1963</ANSWER>", ["1963"], "tag"),
    (STEPS + "Final answer: 1963.", ["1963"], "label"),
    (STEPS + "The final answer is 1963.", ["1963"], "label"),
    (STEPS + "<ANSWER>1963", ["1963"], "tag"),                           # a cut-off tag is still the model's pick
    ('{"final_answer": "1963"}', ["1963"], "label"),
    (STEPS, [], "failed"),             # groups and scored candidates (1963 at 0.8) but no pick: no answer
    ("Michael Jordan was born in 1963", ["Michael Jordan was born in 1963"], "last_line"),  # no structure at all
])
def test_the_tolerant_reading_reads_only_what_the_model_chose(reply, tolerant, how):
    read = _both(reply)[0]
    assert read.answers == tolerant and read.how == how


def test_no_pick_is_no_answer_in_both_readings_and_the_note_says_why():
    groups = parse_consolidation(STEPS, D0).groups
    assert [(g.answer, g.confidence) for g in groups] == [("1963", 0.8), ("1998", 0.2)]
    tolerant, paper = _both(STEPS)
    assert tolerant.answers == paper.answers == []
    assert tolerant.status == paper.status == "unreadable"
    assert any("the reader does not choose for it" in n and "most confident" in n for n in tolerant.notes)


# --- runs with scripted replies ---------------------------------------------------------------------------------

def _run(reply: str, reading: str, **kw):
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/astute", cache_mode="off")).for_method("astute"),
                     readings=Readings(reading))
    with scripted({"generate_passage": MEMORY, "consolidate": "Document 1 (source: memory; documents 5): 1963",
                   "consolidate_answer": reply}):
        return AstuteRAG(**kw).run(strip_truth(QUESTION), ctx)


LABELLED = STEPS + "Final answer: 1963."


def test_a_tolerant_run_records_that_the_paper_would_have_had_no_answer():
    r = _run(LABELLED, "tolerant")
    assert r.error is None and r.answers == ["1963"] and r.trace.answer_parse == "label" and r.reading == "tolerant"
    assert r.decisions_read == 3                     # the passages, the groups (one rule each) and the final answer
    [d] = r.reading_differences
    assert (d.step, d.what, d.used, d.other) == ("consolidate_answer", "final answer", "1963", "no answer (abstains)")
    assert d.call_id == r.calls[-1].id


def test_the_paper_run_abstains_without_the_tag():
    r = _run(LABELLED, "paper")
    assert r.error is None and r.reading == "paper" and r.answers == [] and r.abstained
    assert r.trace.answer_parse == "failed" and r.trace.final_answers == []
    assert any("no <ANSWER>" in n for n in r.trace.notes)
    [d] = r.reading_differences
    assert (d.used, d.other) == ("no answer (abstains)", "1963") and r.decisions_read == 3
    assert len(r.trace.rounds[-1].groups) == 2      # the groups are read alike: still shown


def test_a_reply_in_the_papers_format_reads_alike_and_more_rounds_are_more_decisions():
    for reading in ("tolerant", "paper"):
        r = _run(PAPER_REPLY, reading)
        assert r.answers == ["1963"] and r.reading_differences == [] and r.decisions_read == 3
    r = _run(PAPER_REPLY, "paper", iterations=3)     # + two p_con rounds, each one decision (one rule)
    assert r.answers == ["1963"] and r.decisions_read == 5 and r.reading_differences == []


def test_no_pick_abstains_in_both_runs_and_is_no_difference():
    for reading in ("tolerant", "paper"):
        r = _run(STEPS, reading)
        assert r.answers == [] and r.abstained and r.trace.answer_parse == "failed"
        assert r.reading_differences == [] and r.decisions_read == 3
