"""Astute RAG reading replies as chat models write them, end to end on scripted replies: a JSON reply without the
<ANSWER> tag still gives the answer, groups written as a numbered list are separate groups, groups written on one
line are split (so the conflict flag is right), a refusal is not kept as a memory passage, and each call records
how its reply was read. The readers' own corpus is tests/llm/replies/astute_*.yaml."""

from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.methods.astute import AstuteRAG
from backend.methods.base import RunContext
from backend.schema import strip_truth
from tests.methods.test_astute import MEMORY, PAPER_REPLY, QUESTION  # the paper's Jordan example

ONE_LINE = ("Document 1 (source: both; original documents: 3, 4, 5): Jordan was born in 1963. Document 2 (source: "
            "external; original documents: 2): Jordan was born in 1998.")


def _run(reply: str, gen: str = MEMORY, consolidate: str = ONE_LINE, **kw):
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/astute", cache_mode="off")).for_method("astute"))
    with scripted({"generate_passage": gen, "consolidate": consolidate, "consolidate_answer": reply}):
        return AstuteRAG(**kw).run(strip_truth(QUESTION), ctx)


def _read(r, step: str) -> tuple[str | None, str | None]:
    call = next(c for c in r.calls if c.step == step)
    return call.read_status, call.read_note


def test_the_papers_format_reads_exactly():
    r = _run(PAPER_REPLY)
    assert r.answers == ["1963"] and _read(r, "consolidate_answer") == ("exact", None)
    assert r.trace.rounds[-1].parse == "lenient"        # the paper prints no format: groups come from headers


def test_a_json_reply_without_the_answer_tag_still_gives_the_answer():
    reply = ('```json\n{"groups": [{"documents": [3, 4, 5], "source": "both", "answer": "1963", "confidence": 0.8},'
             ' {"documents": [2], "source": "external", "answer": "1998", "confidence": 0.2}],\n'
             ' "final_answer": "1963"}\n```')
    r = _run(reply)
    tr = r.trace
    assert r.answers == ["1963"] and tr.answer_parse == "label" and tr.final_groups == ["1"]
    assert [(g.documents, g.answer) for g in tr.rounds[-1].groups] == [([3, 4, 5], "1963"), ([2], "1998")]
    assert _read(r, "consolidate_answer")[0] == "lenient" and "JSON" in _read(r, "consolidate_answer")[1]


def test_groups_written_as_a_numbered_list_are_separate_groups():
    reply = ("**Step 1: Consolidate information**\n\n"
             "1. Documents 3, 4, and 5 (external retrieval and memory) say Jordan was born in 1963.\n"
             "2. Document 2 (external retrieval) says he was born in 1998.\n"
             "3. Document 1 is irrelevant to the question.\n\n"
             "**Step 2: Propose Answers and Assign Confidence**\n\n"
             "1. Answer: 1963, Confidence: 90%\n2. Answer: 1998, Confidence: 20%\n\n"
             "**Step 3: Select the Final Answer**\n\nThe most reliable answer is 1963.")
    r = _run(reply)
    final = r.trace.rounds[-1]
    assert [(g.documents, g.answer, g.confidence) for g in final.groups] == [([3, 4, 5], "1963", 0.9),
                                                                              ([2], "1998", 0.2)]
    assert final.conflict and final.excluded == [1] and final.groups[0].source == "mixed"
    assert r.answers == ["1963"] and r.trace.final_groups == ["1"]


def test_groups_on_one_line_are_split_and_the_conflict_flag_is_right():
    r = _run(PAPER_REPLY, iterations=2)              # round 1 is a p_con call answered with ONE_LINE
    first = r.trace.rounds[0]
    assert [g.documents for g in first.groups] == [[3, 4, 5], [2]] and first.conflict and first.excluded == [1]
    status, note = _read(r, "consolidate_round_1")
    assert status == "lenient" and "one line" in note


def test_a_refusal_is_not_kept_as_a_memory_passage():
    r = _run(PAPER_REPLY, gen="I'm sorry, but I don't have reliable information about this.")
    tr = r.trace
    assert tr.generation.kept == [] and len(tr.generation.dropped) == 1
    assert [p.origin for p in tr.passages] == ["external"] * 4


def test_an_empty_reply_is_unreadable_with_the_default_named():
    r = _run("")
    assert r.abstained and r.trace.answer_parse == "failed"
    status, note = _read(r, "consolidate_answer")
    assert status == "unreadable" and "default" in note
