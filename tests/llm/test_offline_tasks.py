"""The offline model's task handlers: every registered task (``TASKS``, general and every method's own) has a
handler whose reply the method reads cleanly with the task's reader (``TaskSpec.reader``, the very function the
method calls, given the call's fields) and says something sensible on hand-built passages; replies are
deterministic; every reader is total; every handler also answers through the real litellm path
(LLMClient -> offline/reader)."""

from __future__ import annotations

import random

import pytest

import backend.methods  # noqa: F401  (registers every method's own tasks into TASKS)
from backend.llm.formats import Parsed, Passages
from backend.llm.offline.handlers import HANDLERS
from backend.llm.tasks import TASKS
from backend.methods.astute.parse import Consolidation, FinalAnswer
from backend.schema import CFReply


def ext(i: int, text: str, source: str = "external") -> dict:
    return {"id": f"d{i}", "source": source, "text": text}


def mem(text: str) -> dict:
    return {"id": "memory-1", "source": "memory", "text": text}


# --- hand-built questions the reader reads reliably -------------------------------------------------

Q_BORN = "When was Horace Rumbold born?"
BORN_1869 = "Sir Horace Rumbold, 9th Baronet, was born on 5 February 1869 in St Petersburg."
BORN_1869_B = "Horace Rumbold was a British diplomat who was born in 1869 and served as ambassador to Germany."
BORN_1872 = "Horace Rumbold was born on 5 February 1872 in London, according to this record."
NOISE = "The British embassy in Berlin was a large building on Wilhelmstrasse."
MEMORY_1869 = "Horace Rumbold, the British diplomat, was born in 1869."

Q_TITANIC = "Who directed the film Titanic?"
CAMERON_A = "Titanic is a 1997 American epic romance film directed by James Cameron."
CAMERON_B = "The 1997 film Titanic was written and directed by James Cameron."
NEGULESCO_A = "Titanic is a 1953 American drama film directed by Jean Negulesco."
NEGULESCO_B = "Titanic, the 1953 film, was directed by Jean Negulesco for 20th Century Fox."
SPIELBERG = "Titanic is a 1997 film directed by Steven Spielberg."
ICEBERG = "Icebergs are large pieces of freshwater ice that have broken off a glacier."

Q_AGT = "Who won the first season of America's Got Talent?"
AGT_RYAN = "Bianca Ryan won the first season of America's Got Talent in 2006."
AGT_BINNS = "The first season of America's Got Talent was won by Vicky Binns."

BORN_PASSAGES = [ext(1, BORN_1869), ext(2, BORN_1872), ext(3, BORN_1869_B), ext(4, NOISE)]

#: One realistic example of every task's fields (the ``question`` included).
EXAMPLES: dict[str, dict] = {
    "ping": {"question": "connection test"},
    "closed_book": {"question": Q_BORN, "memory": MEMORY_1869},
    "keyword_answer": {"question": Q_BORN, "passages": BORN_PASSAGES},
    "entailment": {"question": Q_BORN, "premise": "5 February 1869", "hypothesis": "1869"},
    "generate_passage": {"question": Q_BORN, "memory": MEMORY_1869, "max_passages": 1},
    "consolidate": {"question": Q_BORN, "passages": BORN_PASSAGES + [mem(MEMORY_1869)]},
    "consolidate_answer": {"question": Q_BORN, "passages": BORN_PASSAGES + [mem(MEMORY_1869)],
                           "answer_mode": "single"},
    "debate_turn": {"question": Q_BORN, "passages": [ext(2, BORN_1872)], "round": 2,
                    "history": [f"Agent 1: Answer: 5 February 1869. Explanation: {BORN_1869}",
                                f"Agent 3: Answer: 1869. Explanation: {BORN_1869_B}"]},
    "aggregate": {"question": Q_BORN, "responses": [
        f"Agent 1: Answer: 5 February 1869. Explanation: {BORN_1869}",
        f"Agent 2: Answer: 5 February 1872. Explanation: {BORN_1872}",
        f"Agent 3: Answer: 1869. Explanation: {BORN_1869_B}",
        "Agent 4: Answer: unknown. Explanation: The document does not answer the question."]},
    "cf_answer": {"question": Q_BORN, "passages": BORN_PASSAGES},
    "cf_quality": {"question": Q_BORN, "passages": BORN_PASSAGES, "previous_answer": "5 February 1869",
                   "previous_evidence": [0]},
    "cf_usage": {"question": Q_BORN, "passages": BORN_PASSAGES, "previous_answer": "5 February 1869"},
    "cf_judge": {"question": Q_BORN, "passages": BORN_PASSAGES, "previous_answer": "5 February 1869",
                 "kind": "quality"},
    "cf_probability": {"question": Q_BORN, "passages": BORN_PASSAGES, "previous_answer": "5 February 1869"},
    "soft_bias": {"question": Q_BORN, "memory": MEMORY_1869},
    "sub_queries": {"question": Q_BORN, "n": 10},
    "multi_answer": {"question": Q_BORN, "memory": MEMORY_1869,
                     "sub_queries": ["In which year was Horace Rumbold born?",
                                     "What is the birth date of the diplomat Horace Rumbold?"]},
    "reflect": {"question": Q_BORN, "sub_queries": ["In which year was Horace Rumbold born?"],
                "answers": ["1869"], "n": 10,
                "passages": [mem(MEMORY_1869), ext(1, BORN_1872), ext(2, BORN_1872, "retrieved")]},
    "select_option": {"question": Q_BORN, "options": ["1872", "1869", "I don't know", "1901"],
                      "passages": [mem(MEMORY_1869), ext(1, BORN_1869)]},
}


def read(task: str, text: str, fields: dict):
    """The reply as the method reads it: the task's own reader, given the call's fields."""
    return TASKS[task].reader(text, **fields)


def clean(result) -> tuple[bool, object]:
    """(read without a fallback and found something, what was found) for each kind of reader result."""
    if isinstance(result, Parsed):
        value = result.value.kept if isinstance(result.value, Passages) else result.value
        return result.ok and value not in (None, [], ""), value
    if isinstance(result, CFReply):           # RC-RAG's answer with evidence
        return bool(result.answer) and not result.reject, result.answer
    if isinstance(result, Consolidation):     # Astute's groups
        return result.parse != "failed" and bool(result.groups) and not result.notes, result.groups
    if isinstance(result, FinalAnswer):       # Astute's final pick
        return result.how == "tag" and bool(result.answers), result.answers
    value, note = result                      # RC-RAG's fusion readers: (value, fallback note)
    return note is None, value


def run(task: str, fields: dict):
    text = HANDLERS[task](fields)
    return text, read(task, text, fields)


# --- contract --------------------------------------------------------------------------------------

def test_every_task_has_a_handler_and_an_example():
    assert set(HANDLERS) == set(TASKS)
    assert set(EXAMPLES) == set(TASKS)
    for task, fields in EXAMPLES.items():
        assert set(fields) - {"question"} <= set(TASKS[task].fields), task


@pytest.mark.parametrize("task", sorted(TASKS))
def test_reply_parses_and_is_deterministic(task):
    fields = EXAMPLES[task]
    text, parsed = run(task, fields)
    assert clean(parsed)[0], (task, text, parsed)
    assert HANDLERS[task](dict(fields)) == text


GARBAGE = ["", "   ", "\x00\x01", "}{][", "Answer:", "Explanation:", "<ANSWER>", "$$", "Probability: abc",
           "Correct Option:", "1.", "Document 9 (source: nowhere): x", "All Correct Answers: [", "💥" * 50,
           "<GROUP id=", "Evidence: ##", "Step 3: <ANSWER>"]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_reader_is_total_on_garbage(task):
    rng = random.Random(7)
    fields = {k: v for k, v in EXAMPLES[task].items() if k != "question"}
    samples = GARBAGE + ["".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(1, 80)))
                         for _ in range(100)]
    for text in samples:
        clean(TASKS[task].reader(text, **fields))   # never raises


# --- general tasks ---------------------------------------------------------------------------------

def test_closed_book_and_generate_passage_follow_memory():
    assert run("closed_book", EXAMPLES["closed_book"])[1].value == "1869"
    assert run("closed_book", {"question": Q_BORN, "memory": None})[1].value is None
    assert run("generate_passage", EXAMPLES["generate_passage"])[1].value.kept == [MEMORY_1869]
    two = run("generate_passage", {"question": Q_BORN, "memory": MEMORY_1869, "max_passages": 3})
    assert two[0].startswith("<DOC>") and two[1].value.kept == [MEMORY_1869]
    for memory in (None, "", "None"):
        text, parsed = run("generate_passage", {"question": Q_BORN, "memory": memory, "max_passages": 1})
        assert text == "I don't know" and parsed.value.kept == []


def test_entailment():
    def yes(a, b):
        return run("entailment", {"question": Q_BORN, "premise": a, "hypothesis": b})[1].value

    assert yes("5 February 1869", "1869") is True
    assert yes("1869", "1872") is False
    assert yes("I don't know", "1869") is False
    assert yes("I don't know", "unknown") is True


def test_keyword_answer_takes_the_majority():
    assert run("keyword_answer", EXAMPLES["keyword_answer"])[1].value in ("5 February 1869", "1869")


# --- Astute RAG ------------------------------------------------------------------------------------

def test_consolidate_groups_memory_and_external_as_both():
    _, read_ = run("consolidate", EXAMPLES["consolidate"])
    groups = read_.groups
    assert [(g.stated_source, g.source, g.documents) for g in groups] == [("both", "mixed", [1, 3, 5]),
                                                                          ("external", "external", [2])]
    assert "1872" in groups[1].summary and read_.excluded == [4]   # the noise is excluded


def test_consolidate_answer_single_and_multi():
    text, parsed = run("consolidate_answer", EXAMPLES["consolidate_answer"])
    assert "(confidence 0.85)" in text and "(confidence 0.25)" in text      # 3/4 + 0.1 mixed; 1/4
    assert len(parsed.answers) == 1 and "1869" in parsed.answers[0]
    groups = read("consolidate", text, EXAMPLES["consolidate_answer"]).groups   # Step 1-2, as Astute reads them
    assert [(g.answer, g.confidence) for g in groups] == [("1869", 0.85), ("5 February 1872", 0.25)]

    ambiguous = [ext(1, CAMERON_A), ext(2, NEGULESCO_A), ext(3, SPIELBERG), ext(4, CAMERON_B),
                 ext(5, NEGULESCO_B), ext(6, ICEBERG)]
    fields = {"question": Q_TITANIC, "passages": ambiguous, "answer_mode": "multi"}
    _, parsed = run("consolidate_answer", fields)
    assert parsed.how == "tag" and parsed.answers == ["James Cameron", "Jean Negulesco"]   # the lone Spielberg: dropped
    _, single = run("consolidate_answer", {**fields, "answer_mode": "single"})
    assert single.answers == ["James Cameron"]   # tie on confidence and size: the lower document number


def test_consolidate_answer_without_any_answer():
    fields = {"question": Q_BORN, "passages": [ext(1, NOISE)], "answer_mode": "single"}
    text, parsed = run("consolidate_answer", fields)
    assert "<ANSWER>I don't know</ANSWER>" in text and parsed.answers == [] and parsed.how == "tag"
    assert not run("consolidate", fields)[1].groups


# --- MADAM-RAG -------------------------------------------------------------------------------------

def _debate(question: str, docs: list[str], rounds: int = 2) -> list[list[str]]:
    history: list[str] = []
    out = []
    for t in range(1, rounds + 1):
        replies = []
        for i, doc in enumerate(docs):
            others = [f"Agent {j + 1}: {r}" for j, r in enumerate(history) if j != i]
            replies.append(HANDLERS["debate_turn"]({"question": question, "passages": [ext(i + 1, doc)],
                                                    "round": t, "history": others}))
        for r in replies:
            assert TASKS["debate_turn"].reader(r).ok, r
        out.append(replies)
        history = replies
    return out


def answers_of(replies: list[str]) -> list[str | None]:
    return [TASKS["debate_turn"].reader(r).value[0] for r in replies]


def test_debate_minority_switches_in_round_two():
    r1, r2 = _debate(Q_BORN, [BORN_1869, BORN_1872, BORN_1869_B, NOISE])
    assert answers_of(r1) == ["5 February 1869", "5 February 1872", "1869", None]
    assert r1[1] == f"Answer: 5 February 1872. Explanation: {BORN_1872}"
    assert r1[3] == "Answer: unknown. Explanation: The document does not answer the question (no date given in it)."
    a2 = answers_of(r2)
    assert a2[0] == "5 February 1869" and a2[2] == "1869" and a2[3] is None
    assert a2[1] == "5 February 1869" and "revise my answer" in r2[1]


def test_debate_keeps_answers_about_different_entities():
    q = "When was Michael Jordan born?"
    docs = ["Michael Jeffrey Jordan (born February 17, 1963) is an American basketball player.",
            "Basketball star Michael Jeffrey Jordan was born on February 17, 1963 in Brooklyn.",
            "Michael Irwin Jordan (born February 25, 1956) is an American scientist at UC Berkeley."]
    r1, r2 = _debate(q, docs)
    assert answers_of(r2) == answers_of(r1)
    assert "different subject" in r2[2]


def test_aggregate_keeps_ambiguous_answers_and_drops_lone_misinformation():
    docs = [CAMERON_A, NEGULESCO_A, SPIELBERG, CAMERON_B, NEGULESCO_B, ICEBERG]
    (r1,) = _debate(Q_TITANIC, docs, rounds=1)
    text, parsed = run("aggregate", {"question": Q_TITANIC,
                                     "responses": [f"Agent {i + 1}: {r}" for i, r in enumerate(r1)]})
    assert parsed.ok and parsed.value[0] == ["James Cameron", "Jean Negulesco"], text
    assert "Agent 3's Steven Spielberg" in text and "Agent 6 gives no answer" in text

    _, parsed = run("aggregate", EXAMPLES["aggregate"])
    assert parsed.value[0] == ["5 February 1869"]

    text, parsed = run("aggregate", {"question": Q_BORN, "responses": [
        "Agent 1: Answer: unknown. Explanation: The document does not answer the question."]})
    assert parsed.ok and parsed.value[0] == [] and "unknown" in text


# --- counterfactual prompting (RC-RAG) -------------------------------------------------------------

def _answer_evidence(read: Parsed[CFReply]) -> tuple[str, list[int]]:
    return read.value.answer, read.value.passages


def test_cf_answer_quality_usage():
    _, a0 = run("cf_answer", EXAMPLES["cf_answer"])
    answer, cited = _answer_evidence(a0)
    assert "1869" in answer and len(cited) == 1 and cited[0] in (0, 2)

    # the cited passage removed, 1869 and 1872 are one passage each: the more relevant passage wins
    _, q = run("cf_quality", {**EXAMPLES["cf_quality"], "previous_answer": answer, "previous_evidence": cited})
    assert _answer_evidence(q) == ("5 February 1872", [1])

    # three passages back 1869: without the cited one the rest still say 1869, from another passage
    backed = BORN_PASSAGES + [ext(5, MEMORY_1869)]
    _, a0 = run("cf_answer", {"question": Q_BORN, "passages": backed})
    answer, cited = _answer_evidence(a0)
    _, q = run("cf_quality", {"question": Q_BORN, "passages": backed, "previous_answer": answer,
                              "previous_evidence": cited})
    q_answer, q_cited = _answer_evidence(q)
    assert "1869" in q_answer and len(q_cited) == 1 and q_cited != cited and q_cited[0] in (0, 2, 4)

    # the only supporting passage removed: the answer changes
    fields = {"question": Q_AGT, "passages": [ext(1, AGT_RYAN), ext(2, AGT_BINNS)],
              "previous_answer": "Vicky Binns", "previous_evidence": [1]}
    _, q = run("cf_quality", fields)
    assert _answer_evidence(q) == ("Bianca Ryan", [0])
    # nothing else answers: "I don't know", read as a refusal citing no passage
    text, q = run("cf_quality", {"question": Q_BORN, "passages": [ext(1, BORN_1869), ext(2, NOISE)],
                                 "previous_answer": "5 February 1869", "previous_evidence": [0]})
    assert text.startswith("Answer: I don't know.") and q.value.reject and q.value.passages == []

    assert run("cf_usage", EXAMPLES["cf_usage"])[1].value.answer == "5 February 1869"


def test_cf_judge_and_probability():
    assert run("cf_judge", EXAMPLES["cf_judge"])[1] == Parsed("keep")
    conflicted = {"question": Q_BORN, "passages": BORN_PASSAGES, "previous_answer": "5 February 1872",
                  "kind": "usage"}
    assert run("cf_judge", conflicted)[1] == Parsed("discard")
    alone = {"question": Q_AGT, "passages": [ext(1, AGT_RYAN)], "previous_answer": "Bianca Ryan",
             "kind": "quality"}
    assert run("cf_judge", alone)[1] == Parsed("keep")
    assert run("cf_judge", {**alone, "previous_answer": "I don't know"})[1] == Parsed("discard")

    p_major = run("cf_probability", EXAMPLES["cf_probability"])[1].value
    p_minor = run("cf_probability", {**EXAMPLES["cf_probability"], "previous_answer": "5 February 1872"})[1].value
    assert 0 < p_minor < p_major < 1


# --- BRIDGE ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("question,memory,expected", [
    (Q_BORN, MEMORY_1869, (0.2, 0.8)),
    (Q_BORN, None, (0.8, 0.2)),
    (Q_BORN, "None", (0.8, 0.2)),
    ("Who is the most recent winner of the International Brain Bee?", MEMORY_1869, (0.8, 0.2)),
    ("Who is the current CEO of Twitter?", MEMORY_1869, (0.8, 0.2)),
    ("Who won the Ballon d'Or in 2024?", MEMORY_1869, (0.8, 0.2)),
    ("Who won the Ballon d'Or in 1998?", MEMORY_1869, (0.2, 0.8)),
])
def test_soft_bias(question, memory, expected):
    text, parsed = run("soft_bias", {"question": question, "memory": memory})
    assert parsed.ok and parsed.value == pytest.approx(expected), text
    assert text.startswith("Analysis: ")


def test_sub_queries_and_reflect_keep_the_subject():
    _, parsed = run("sub_queries", {"question": Q_BORN, "n": 10})
    subs = parsed.value
    assert len(subs) == 10 and len(set(subs)) == 10 and all("Horace Rumbold" in s for s in subs)
    assert len(run("sub_queries", {"question": Q_BORN, "n": 3})[1].value) == 3
    assert len(run("sub_queries", {"question": Q_BORN, "n": 12})[1].value) == 12

    text, parsed = run("reflect", EXAMPLES["reflect"])
    analysis, new = parsed.value
    assert len(new) == 10 and all("Horace Rumbold" in s for s in new) and not set(new) & set(subs)
    assert analysis == text.splitlines()[0].removeprefix("Analysis:").strip()
    assert "1869" in analysis and "1872" in analysis and "contradiction" in analysis.lower()


def test_multi_answer_reads_memory_per_sub_query():
    subs = run("sub_queries", {"question": Q_BORN, "n": 10})[1].value
    fields = {"question": Q_BORN, "sub_queries": subs, "memory": MEMORY_1869}
    text, parsed = run("multi_answer", fields)
    assert parsed.ok and len(parsed.value) == 10 and all(v.startswith("1869: ") for v in parsed.value)
    assert all("Rumbold" in v for v in parsed.value)   # the memory sentence the answer was read from
    _, parsed = run("multi_answer", {**fields, "memory": None})
    assert parsed.ok and parsed.value == ["I don't know"] * 10


def test_select_option():
    assert run("select_option", EXAMPLES["select_option"])[1].value == 1                 # 1869
    external = {"question": Q_BORN, "options": ["1869", "1872", "I don't know", "1901"],
                "passages": [ext(1, BORN_1872), ext(2, BORN_1872, "retrieved")]}
    assert run("select_option", external)[1].value == 1                                  # 1872
    letters = {**external, "options": ["A. 1869", "B. 1872", "C. I don't know.", "D. 1901"]}
    assert run("select_option", letters)[1].value == 1
    nothing = {**external, "passages": [ext(1, NOISE)]}
    assert run("select_option", nothing)[1].value == 2                                   # I don't know


# --- the real litellm path -------------------------------------------------------------------------

def test_every_task_through_litellm():
    from backend.llm.client import LLMClient, LLMConfig
    from backend.llm.offline import respond
    from tests.llm.test_offline_prompt import prompt_for   # the offline model reads the task's own prompt

    client = LLMClient(LLMConfig(cache_mode="off"))
    for task in sorted(TASKS):
        fields = {k: v for k, v in EXAMPLES[task].items() if k != "question"}
        messages = prompt_for(task, EXAMPLES[task])
        call = client.complete(messages=messages, task=task, step="t", question=EXAMPLES[task]["question"],
                               fields=fields)
        assert call.error is None and call.response == respond(messages, {"task": task, **EXAMPLES[task]}), task
        assert clean(read(task, call.response, EXAMPLES[task]))[0], (task, call.response)
