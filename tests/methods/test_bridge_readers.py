"""BRIDGE reading replies as chat models write them, end to end on scripted replies: the allocator's bold or
bracketed probabilities set r_p (so the FE leaf stays reachable), sub-queries in Markdown are the questions (never
n copies of the original), a generator reply laid out as question / Analysis / Answer gives the answers (K_gen is
never the sub-queries), the responder's option in any dress is read, and a responder reply naming no option is an
invalid answer (spec P17): scored wrong, not an abstention. The readers' own corpus is tests/llm/replies/bridge_*."""

import pytest

from backend.data import Dataset
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.methods.bridge.parse import read_option
from backend.runner import Runner
from backend.schema import Document, Question
from backend.scoring import refused, unreadable, verdict

QUESTION = Question(id="agt", question="Who won the first season of America's Got Talent?",
                    documents=[Document(id="agt-d1", text="This season's winner was Vicky Binns.")],
                    options=["Vicky Binns", "Bianca Ryan", "I don't know", "Lukas Graham"],
                    gold_answers=["Bianca Ryan"])
SUBS = ["Who was the winner of America's Got Talent season one?", "Which singer won the first America's Got Talent?",
        "What is the name of the 2006 America's Got Talent champion?"]
MEMORY = "Bianca Ryan won the first season of America's Got Talent in 2006."

CHATTY = {
    "soft_bias": "**Analysis:** a stable fact about a 2006 show.\n\n**Probability of retrieving external knowledge:** "
                 "20%\n**Probability of answering directly:** 80%",
    "generate_passage": MEMORY,
    "sub_queries": "Sure! Here are the questions:\n\n" + "\n".join(f"**{k}.** {q}" for k, q in enumerate(SUBS, 1)),
    "multi_answer": "\n\n".join(f"{k}. {q}\nAnalysis: {MEMORY}\nAnswer: Bianca Ryan" for k, q in enumerate(SUBS, 1)),
    "reflect": "Analysis: x\nNew questions:\n" + "\n".join(f"{k}. {q}" for k, q in enumerate(SUBS, 1)),
    "select_option": "Based on the document, Bianca Ryan won.\n\n**Correct Option:** B",
}


def _run(script: dict, tmp_path, **params):
    ds = Dataset(name="s", path=str(tmp_path / "s.jsonl"), questions=[QUESTION])
    with scripted(script):
        runner = Runner(ds, llm=LLMConfig(model="scripted/bridge", cache_mode="off"),
                        method_params={"bridge": {"n": 3, **params}})
        return runner.run(ds.question("agt"), ["bridge"])["bridge"]


def test_chat_styled_replies_drive_the_method_as_the_papers_formats_would(tmp_path):
    r = _run(CHATTY, tmp_path)
    tr = r.trace
    assert r.error is None and (tr.r_p, tr.g_p) == (0.2, 0.8) and "Markdown" in tr.bias_note
    first = tr.cycles[0]
    assert [s.text for s in first.sub_queries] == SUBS                       # not three copies of the question
    assert [k.text for k in first.k_gen] == [f"Bianca Ryan: {MEMORY}"] * 3   # the answers, not the sub-queries
    assert tr.leaf != "RA" and tr.option == "B" and r.answers == ["Bianca Ryan"] and not tr.invalid
    reads = {c.step: (c.read_status, c.read_note) for c in r.calls}
    assert reads["allocate"][0] == reads["sub_queries"][0] == reads["respond"][0] == "lenient"
    assert reads["generate_cycle_0"] == ("lenient", "read the 'Answer:' lines")


@pytest.mark.parametrize("reply,r_p", [("**Probability of retrieving external knowledge:** 80%", 0.8),
                                       ("Probability of retrieving external knowledge: **70%**", 0.7),
                                       ("Probability of retrieving external knowledge: [80%]", 0.8)])
def test_the_allocators_probability_in_markdown_keeps_fe_reachable(reply, r_p, tmp_path):
    tr = _run({**CHATTY, "soft_bias": reply}, tmp_path).trace
    assert tr.r_p == r_p and tr.r_p >= 0.55      # FE needs r_p >= 0.55 (spec §3, derived properties)


def test_an_unreadable_allocator_reply_uses_the_default_and_says_so(tmp_path):
    r = _run({**CHATTY, "soft_bias": "Probability of retrieving external knowledge: High"}, tmp_path)
    assert r.trace.r_p == 0.5 and "the method used its default: r_p = 0.5" in r.trace.bias_note
    assert next(c for c in r.calls if c.step == "allocate").read_status == "unreadable"


def test_a_responder_reply_with_no_option_is_an_invalid_answer_not_an_abstention(tmp_path):
    r = _run({**CHATTY, "select_option": "The document does not say enough to choose between the options."}, tmp_path)
    tr = r.trace
    assert tr.leaf != "RA" and tr.invalid and tr.invalid_answer() and tr.option is None and tr.answer is None
    assert r.answers == [] and not r.abstained
    assert any("P17" in n and "not an abstention" in n for n in tr.notes)
    assert next(c for c in r.calls if c.step == "respond").read_status == "unreadable"
    assert unreadable(r) and not refused(r) and verdict(r, QUESTION) == "unreadable"


def test_a_read_option_and_the_ra_leaf_are_not_invalid(tmp_path):
    assert not _run(CHATTY, tmp_path).trace.invalid
    idk = _run({**CHATTY, "select_option": "Correct Option: C"}, tmp_path)
    assert idk.abstained and not idk.trace.invalid and idk.answers == []    # the "I don't know" option: a refusal


def test_an_option_past_h_is_never_read_as_a_letter():
    """Only eight options have letters: a reply naming the ninth option's text reads as no option, not a crash."""
    options = [f"City{i} Tours" for i in range(9)]
    assert read_option("City8 Tours", options=options).status == "unreadable"
    assert read_option("City2 Tours", options=options).value == 2
