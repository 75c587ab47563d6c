"""The chatty offline voice (``offline/chatty``, ``backend.llm.chatty``): the same request always gets the same dress,
every task meets several styles, the dress keeps the content (each task's own reader reads back what it reads in the
plain reply), the frames add none, the offline handlers' replies are all recognised, and the voice is reachable
through litellm, the CLI and the sidebar.

A dress a reader still misreads is listed in ``KNOWN_GAPS`` with the reader that falls short; it is excused in
``test_dress_keeps_the_content`` and checked on its own, as an expected failure, by ``test_known_reader_gap``. A gap
no single dress explains (a value the reader rewrites on every lenient path) marks its case in ``KNOWN_CASE_GAPS``.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

import backend.methods  # noqa: F401  (registers every method's own tasks into TASKS)
from backend.llm.chatty import CHATTY_MODEL, DRESSERS, Dressed, render, request_seed
from backend.llm.chatty.pieces import CLOSINGS, PASSAGE_PREAMBLES, PREAMBLES, probability
from backend.llm.chatty.dressers import DOC_PREAMBLES, IDK_FORMS, IDK_PASSAGES, PASSAGE_PREAMBLES_GEN
from backend.llm.tasks import TASKS
from benchmarks.chatty import content

SEEDS = range(60)


def ext(i: int, text: str) -> dict:
    return {"id": f"d{i}", "source": "external", "text": text}


PASSAGES = [ext(1, "Sir Horace Rumbold was born on 5 February 1869."), ext(2, "Horace Rumbold was born in 1872."),
            ext(3, "Rumbold, born in 1869, was a diplomat."), ext(4, "The embassy was on Wilhelmstrasse."),
            {"id": "memory-1", "source": "memory", "text": "Horace Rumbold was born in 1869."}]
Q = "When was Horace Rumbold born?"
GROUPS = ("Document 1 (source: both; original documents: 1, 3, 5): Sir Horace Rumbold was born on 5 February 1869. "
          "Rumbold, born in 1869, was a diplomat.\n"
          "Document 2 (source: external; original documents: 2): Horace Rumbold was born in 1872.")
TAGGED = ('<GROUP id="G1" source="both" docs="1,3,5">Born in 1869.</GROUP>\n'
          '<GROUP id="G2" source="external" docs="2">Born in 1872.</GROUP>\n<EXCLUDED>4</EXCLUDED>')
SUBS = [f"Which record about Horace Rumbold answers question {k}?" for k in range(1, 11)]

#: (case, task, fields, the plain reply in the offline handler's exact format)
CASES = [
    ("ping", "ping", {}, "ready"),
    ("closed_book", "closed_book", {"memory": "Horace Rumbold was born in 1869."}, "1869"),
    ("closed_book idk", "closed_book", {"memory": None}, "I don't know"),
    ("keyword_answer", "keyword_answer", {"passages": PASSAGES}, "5 February 1869"),
    ("keyword_answer dotted", "keyword_answer", {"passages": PASSAGES}, "Washington, D.C."),
    ("keyword_answer quote", "keyword_answer", {"passages": PASSAGES}, "Ocean’s Eleven"),
    ("keyword_answer idk", "keyword_answer", {"passages": PASSAGES[3:4]}, "I don't know"),
    ("entailment yes", "entailment", {"premise": "5 February 1869", "hypothesis": "1869"}, "Yes"),
    ("entailment no", "entailment", {"premise": "1869", "hypothesis": "1872"}, "No"),
    ("generate_passage", "generate_passage", {"memory": "x", "max_passages": 1},
     "Horace Rumbold, the British diplomat, was born in 1869."),
    ("generate_passage docs", "generate_passage", {"memory": "x", "max_passages": 3},
     "<DOC>\nHorace Rumbold, the British diplomat, was born in 1869.\n</DOC>"),
    ("generate_passage idk", "generate_passage", {"memory": None, "max_passages": 1}, "I don't know"),
    ("debate_turn", "debate_turn", {"passages": PASSAGES[:1], "round": 1, "history": []},
     "Answer: 5 February 1869. Explanation: Sir Horace Rumbold was born on 5 February 1869."),
    ("debate_turn unknown", "debate_turn", {"passages": PASSAGES[3:4], "round": 1, "history": []},
     "Answer: unknown. Explanation: The document does not answer the question."),
    ("aggregate", "aggregate", {"responses": ["Agent 1: Answer: 1869. Explanation: x"]},
     'All Correct Answers: ["5 February 1869", "Washington, D.C."]. Explanation: Agents 1 and 3 support '
     "5 February 1869. Agent 2's 1872 is contradicted by the better supported 5 February 1869, so it is dropped."),
    ("debate_turn colon", "debate_turn", {"passages": PASSAGES[:1], "round": 2, "history": []},
     "Answer: 1972. Explanation: House: Official Records Researching Ralph Cole was elected to the Ohio House in 1972. "
     "Agents 3 and 4 give 1900, but about a different subject; both answers can be correct, so I keep 1972."),
    ("aggregate years", "aggregate", {"responses": ["Agent 1: Answer: 1720. Explanation: x"]},
     'All Correct Answers: ["1720", "1630"]. Explanation: Agent 2 supports 1720 (Henry Pelham-Clinton). Agent 1 '
     "supports 1630 (Henry Cavendish)."),
    ("aggregate empty", "aggregate", {"responses": ["Agent 1: Answer: unknown. Explanation: x"]},
     "All Correct Answers: []. Explanation: unknown. Agent 1 gives no answer."),
    ("cf_answer", "cf_answer", {"passages": PASSAGES[:4]}, "Answer: 5 February 1869.\nEvidence: ## Passage-0 ##."),
    ("cf_answer idk", "cf_answer", {"passages": PASSAGES[3:4]},
     "Answer: I don't know.\nEvidence: ## no passage answers the question ##."),
    ("cf_quality", "cf_quality", {"passages": PASSAGES[:4], "previous_answer": "5 February 1869",
                                  "previous_evidence": [0]}, "Answer: 1869.\nEvidence: ## Passage-2 ##."),
    ("cf_usage", "cf_usage", {"passages": PASSAGES[:4], "previous_answer": "5 February 1869"}, "5 February 1869"),
    ("cf_usage idk", "cf_usage", {"passages": PASSAGES[:4], "previous_answer": None}, "I don't know"),
    ("cf_judge keep", "cf_judge", {"passages": PASSAGES[:4], "previous_answer": "1869", "kind": "quality"},
     "$$ keep $$\n2 passages support 1869, more than any other answer (1)."),
    ("cf_judge discard", "cf_judge", {"passages": PASSAGES[:4], "previous_answer": "1872", "kind": "usage"},
     "$$ discard $$\n1 passage supports 1872, against 2 for a different answer."),
    ("cf_probability", "cf_probability", {"passages": PASSAGES[:4], "previous_answer": "1869"}, "Probability: 0.83"),
    ("cf_probability tenths", "cf_probability", {"passages": PASSAGES[:4], "previous_answer": "1869"},
     "Probability: 0.10"),
    ("soft_bias", "soft_bias", {"memory": "x"},
     "Analysis: The question asks for a stable fact that internal knowledge covers, so it can be answered directly."
     "\nProbability of retrieving external knowledge: 20%\nProbability of answering directly: 80%"),
    ("sub_queries", "sub_queries", {"n": 10}, "\n".join(f"{k}. {s}" for k, s in enumerate(SUBS, start=1))),
    ("multi_answer", "multi_answer", {"sub_queries": SUBS[:3], "memory": "x"},
     "1. 1869: Horace Rumbold was born in 1869.\n2. 1869: Horace Rumbold was born in 1869.\n3. I don't know"),
    ("reflect", "reflect", {"sub_queries": SUBS[:1], "answers": ["1869"], "passages": PASSAGES, "n": 10},
     "Analysis: Main contradiction: internal knowledge says 1869 while external knowledge says 1872; contradiction "
     "type: factual; possible cause: model knowledge limitation or external knowledge bias.\nNew questions:\n"
     + "\n".join(f"{k}. {s}" for k, s in enumerate(SUBS, start=1))),
    ("select_option", "select_option", {"options": ["1872", "1869", "I don't know", "1901"], "passages": PASSAGES},
     "Correct Option: B"),
    ("select_option idk", "select_option", {"options": ["A. 1872", "B. 1869", "C. I don't know.", "D. 1901"],
                                            "passages": PASSAGES[3:4]}, "Correct Option: C"),
    ("consolidate", "consolidate", {"passages": PASSAGES, "round": 1, "prompt_mode": "paper"}, GROUPS),
    ("consolidate tags", "consolidate", {"passages": PASSAGES, "round": 1, "prompt_mode": "structured"}, TAGGED),
    ("consolidate nothing", "consolidate", {"passages": PASSAGES[3:4], "round": 1},
     "No document contains information that answers the question."),
    ("consolidate_answer", "consolidate_answer", {"passages": PASSAGES, "answer_mode": "single"},
     f"Step 1:\n{GROUPS}\nStep 2:\nGroup 1: 1869 (confidence 0.85)\nGroup 2: 1872 (confidence 0.25)\n"
     "Step 3: The best supported answer comes from group 1 (both, 3 documents, confidence 0.85).\n"
     "<ANSWER>1869</ANSWER>"),
    ("consolidate_answer multi", "consolidate_answer", {"passages": PASSAGES, "answer_mode": "multi"},
     f"Step 1:\n{GROUPS}\nStep 2:\nGroup 1: 1869 (confidence 0.85)\nGroup 2: 1872 (confidence 0.25)\n"
     "Step 3: The best supported answers come from group 1 (both, 3 documents, confidence 0.85); group 2 "
     "(external, 1 document, confidence 0.25).\n<ANSWER>1869</ANSWER>\n<ANSWER>1872</ANSWER>"),
    ("consolidate_answer idk", "consolidate_answer", {"passages": PASSAGES[3:4], "answer_mode": "single"},
     "Step 1: No document contains information that answers the question.\nStep 3: <ANSWER>I don't know</ANSWER>"),
]
CASE_IDS = [c[0] for c in CASES]

#: (task, style) -> the reader that still misreads that dress. Excused in the content test, checked as an expected
#: failure on its own (it shows as XPASS once the reader reads it).
KNOWN_GAPS: dict[tuple[str, str], str] = {
}
#: case -> the reader gap no single style explains (excused the same way, the whole case an expected failure).
KNOWN_CASE_GAPS: dict[str, str] = {
    "keyword_answer quote": "formats.parse_short_answer rewrites typographic quotes on its lenient path: "
                            "'**Ocean’s Eleven**', 'ANSWER: Ocean’s Eleven', an answer after an opener... are read as "
                            "\"Ocean's Eleven\" (the exact path keeps 'Ocean’s Eleven'), so the final answer differs",
}


def dresses(task: str, fields: dict, plain: str, seeds=SEEDS) -> list[Dressed]:
    return [render(plain, {"task": task, "question": Q, **fields}, seed) for seed in seeds]


def read(task: str, text: str, fields: dict):
    return content(task, TASKS[task].reader(text, **{"question": Q, **fields}))


# --- determinism and variety ---------------------------------------------------------------------------------

def test_same_request_same_dress_and_a_stable_seed():
    messages = [{"role": "user", "content": "Question: When was Horace Rumbold born?\nAnswer:"}]
    # a hash of the request's content: the same in every process (never Python's salted hash())
    assert request_seed(messages, "closed_book") == request_seed([dict(m) for m in messages], "closed_book")
    assert request_seed(messages, "closed_book") != request_seed(messages, "keyword_answer")
    for _, task, fields, plain in CASES:
        assert dresses(task, fields, plain, range(5)) == dresses(task, fields, plain, range(5))


def test_seed_is_a_sha256_of_the_request():
    import hashlib
    import json

    messages = [{"role": "user", "content": "hello"}]
    blob = json.dumps({"task": "ping", "messages": messages}, sort_keys=True, ensure_ascii=False)
    assert request_seed(messages, "ping") == int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big")


@pytest.mark.parametrize("case,task,fields,plain", CASES, ids=CASE_IDS)
def test_every_case_meets_several_dresses(case, task, fields, plain):
    out = dresses(task, fields, plain)
    assert len({d.text for d in out}) >= 3, case
    assert all(d.styles != ("plain",) or d.text == plain for d in out)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_meets_at_least_three_styles(task):
    styles = {tuple(s for s in d.styles if s not in ("preamble", "closing"))
              for _, t, fields, plain in CASES if t == task for d in dresses(t, fields, plain)}
    assert task in DRESSERS and len(styles) >= 3, (task, styles)


# --- the content is kept ---------------------------------------------------------------------------------------

def _excused(task: str, styles: tuple[str, ...]) -> bool:
    return any((task, s) in KNOWN_GAPS for s in styles)


@pytest.mark.parametrize("case,task,fields,plain", [
    pytest.param(*c, marks=pytest.mark.xfail(reason=KNOWN_CASE_GAPS[c[0]], strict=False)) if c[0] in KNOWN_CASE_GAPS
    else c for c in CASES], ids=CASE_IDS)
def test_dress_keeps_the_content(case, task, fields, plain):
    """Each task's own reader (the very function the method calls) reads the dressed reply to what it reads in the
    plain one: the answer, the items, the probability, the option, the groups."""
    want = read(task, plain, fields)
    wrong = [(d.styles, d.text, got) for d in dresses(task, fields, plain)
             if not _excused(task, d.styles) and (got := read(task, d.text, fields)) != want]
    assert not wrong, f"{case}: want {want!r}; {len(wrong)} dresses misread, e.g. {wrong[:3]}"


@pytest.mark.parametrize("task,style", [pytest.param(t, s, marks=pytest.mark.xfail(reason=why, strict=False))
                                        for (t, s), why in KNOWN_GAPS.items()] or
                         [pytest.param("none", "none", marks=pytest.mark.skip(reason="no known reader gap"))])
def test_known_reader_gap(task, style):
    wrong = []
    for _, t, fields, plain in CASES:
        if t != task:
            continue
        want = read(task, plain, fields)
        wrong += [d.text for d in dresses(task, fields, plain)
                  if style in d.styles and read(task, d.text, fields) != want]
    assert not wrong, wrong[:3]


def test_frames_carry_no_content():
    """Openers and closings hold no digit, no yes/no, no keep/discard, no option letter and none of RC-RAG's refusal
    phrases: nothing a reader could take for a value."""
    from backend.methods.counterfactual.parse import refusal

    for text in PREAMBLES + PASSAGE_PREAMBLES + DOC_PREAMBLES + PASSAGE_PREAMBLES_GEN + CLOSINGS:
        assert not re.search(r"\d|\b(yes|no|keep|discard)\b|\b[A-H][.):]", text, re.I), text
        assert refusal(text) is None, text
    for text in IDK_FORMS + IDK_PASSAGES:   # refusals: an "I don't know" a careful reader recognises
        assert "don't know" in text or "don't have reliable information" in text


@pytest.mark.parametrize("style", ["decimal", "percent", "leading-dot", "fraction", "decimal-comma"])
def test_probabilities_keep_their_value(style):
    for hundredths in range(1, 100):
        p = hundredths / 100
        text = probability(p, style)
        if "/" in text:
            num, den = text.split("/")
            value = int(num) / int(den)
        elif text.endswith("%"):
            value = float(text[:-1]) / 100
        else:
            value = float(text.replace(",", "."))
        assert round(value, 2) == p, (style, p, text)


# --- the offline model's replies are all recognised, and the voice is reachable -------------------------------

def test_every_offline_handler_reply_is_dressed():
    """Every task's handler reply (test_offline_tasks' examples) is one a dresser recognises: its format and the
    dresser's agree."""
    from backend.llm.offline.handlers import HANDLERS
    from tests.llm.test_offline_tasks import EXAMPLES

    undressed = []
    for task, fields in EXAMPLES.items():
        plain = HANDLERS[task](dict(fields))
        styles = {d.styles for d in (render(plain, {"task": task, **fields}, s) for s in range(30))}
        if styles <= {("plain",), ("plain", "preamble"), ("plain", "closing"), ("plain", "preamble", "closing")} \
                and task != "ping":
            undressed.append((task, plain))
    assert not undressed, undressed


def test_chatty_through_litellm_is_the_plain_reply_dressed():
    from backend.llm.client import LLMClient, LLMConfig

    plain_client = LLMClient(LLMConfig(model="offline/reader", cache_mode="off"))
    chatty_client = LLMClient(LLMConfig(model=CHATTY_MODEL, cache_mode="off"))
    fields = {"passages": PASSAGES[:4]}
    seen = set()
    for k in range(8):
        messages = [{"role": "user", "content": f"Context: ...\nQuestion: {Q}\nAnswer: (variant {k})"}]
        plain = plain_client.complete(messages, task="keyword_answer", step="s", question=Q, fields=fields)
        chatty = chatty_client.complete(messages, task="keyword_answer", step="s", question=Q, fields=fields)
        again = chatty_client.complete(messages, task="keyword_answer", step="s", question=Q, fields=fields)
        expected = render(plain.response, {"task": "keyword_answer", "question": Q, **fields},
                          request_seed(messages, "keyword_answer")).text
        assert chatty.response == again.response == expected
        assert chatty.model == CHATTY_MODEL
        seen.add(chatty.response)
    assert len(seen) >= 3   # different calls, different dresses


def test_cli_help_and_sidebar_offer_the_chatty_voice(capsys):
    from streamlit.testing.v1 import AppTest

    from backend.cli import build_parser
    from tests.conftest import ROOT

    with pytest.raises(SystemExit):
        build_parser().parse_args(["inspect", "--help"])
    assert CHATTY_MODEL in " ".join(capsys.readouterr().out.split())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["methods"] = "no_rag"
    at.run()
    at.button(key=f"app.use_{CHATTY_MODEL}").click().run()
    assert not at.exception, at.exception
    assert at.text_input(key="app.model").value == CHATTY_MODEL
    assert at.session_state["app.selection"].model.model == CHATTY_MODEL


def test_known_gaps_name_real_styles():
    seen = defaultdict(set)
    for _, task, fields, plain in CASES:
        for d in dresses(task, fields, plain):
            seen[task].update(d.styles)
    assert all(style in seen[task] for task, style in KNOWN_GAPS), KNOWN_GAPS
