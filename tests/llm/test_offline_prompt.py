"""The offline model reads the prompt (``backend.llm.offline``): every task is recognised from its prompt template and
its inputs read back out of the prompt text; the reply is the same with the task fields sent beside the prompt
(in-process) as without them (over HTTP), where they only cross-check the reading; a disagreement is an error naming
the task and the field (strict, as the tests run) or a warning; the model's memory is the one input not in the prompt
(``knowledge``); no handler keys on the wording of a memory template."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest

from backend.llm.offline import respond
from backend.llm.offline.check import MODE_ENV, PromptMismatch, disagreements
from backend.llm.offline.knowledge import Knowledge, bundled_knowledge, load_knowledge
from backend.llm.offline.prompt import GENERIC_TASKS, Prompt, read_numbered, recognise
from backend.llm.offline.registry import READERS
from backend.llm.server import running_server
from backend.llm.tasks import TASKS
from backend.methods import astute, baselines, bridge, counterfactual, madam
from backend.methods.astute import prompts as astute_prompts
from backend.methods.bridge import prompts as bridge_prompts
from backend.methods.counterfactual import prompts as cf_prompts
from backend.methods.ra_rag import answering
from backend.schema import AstutePassage, CFPassage
from tests.llm.test_offline_tasks import (BORN_1869, BORN_1872, BORN_PASSAGES, EXAMPLES, MEMORY_1869, NOISE, Q_BORN,
                                          ext)


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _texts(fields: dict) -> list[str]:
    return [p["text"] for p in fields.get("passages") or []]


def _cf(fields: dict) -> list[CFPassage]:
    return [CFPassage(number=i, document_id=f"d{i}", text=t) for i, t in enumerate(_texts(fields))]


def _cf_branch(fields: dict, last: str) -> list[dict[str, str]]:
    previous = fields["previous_answer"]
    return (cf_prompts.rag_messages(fields["question"], _cf(fields))
            + [cf_prompts.assistant(previous), cf_prompts.user(cf_prompts.CF["quality"] + cf_prompts.TAIL),
               cf_prompts.assistant(previous), cf_prompts.user(last)])


def _astute_context(fields: dict) -> str:
    return astute_prompts.render_context([
        AstutePassage(number=k, origin="internal" if p["source"] == "memory" else "external", text=p["text"])
        for k, p in enumerate(fields["passages"], start=1)])


def prompt_for(task: str, fields: dict) -> list[dict[str, str]]:
    """The prompt a method sends for ``task`` with these inputs (its own prompt builders)."""
    q = fields["question"]
    if task == "ping":
        return _user("Reply with the single word: ready")
    if task == "closed_book":
        return baselines.closed_book_prompt(q)
    if task == "keyword_answer":
        return baselines.documents_prompt(q, _texts(fields))
    if task == "entailment":
        return _user(answering.ENTAILMENT_PROMPT.format(question=q, a=fields["premise"], b=fields["hypothesis"]))
    if task == "generate_passage":
        return astute_prompts.gen_messages(q, fields.get("max_passages", 1))
    if task == "consolidate":
        context = _astute_context(fields)
        return astute_prompts.con_messages(q, context, context, fields.get("prompt_mode") == "structured")
    if task == "consolidate_answer":
        return astute_prompts.ans_messages(q, _astute_context(fields), None, fields.get("answer_mode", "single"),
                                           fields.get("prompt_mode") == "structured")
    if task == "debate_turn":
        history = "\n".join(fields["history"]) if fields["round"] > 1 else None
        return madam.agent_prompt(q, _texts(fields)[0], history)
    if task == "aggregate":
        return madam.aggregator_prompt(q, fields["responses"])
    if task == "cf_answer":
        return cf_prompts.rag_messages(q, _cf(fields))
    if task in ("cf_quality", "cf_usage"):
        return (cf_prompts.rag_messages(q, _cf(fields)) + [cf_prompts.assistant(fields["previous_answer"]),
                cf_prompts.user(cf_prompts.CF[task[3:]] + cf_prompts.TAIL)])
    if task == "cf_judge":
        return _cf_branch(fields, cf_prompts.DIRECT[fields["kind"]])
    if task == "cf_probability":
        return _cf_branch(fields, cf_prompts.PROBABILITY)
    if task == "soft_bias":
        return _user(bridge_prompts.ALLOCATOR.format(examples=bridge_prompts.DEMO.format(question="Who?", r=20, g=80),
                                                     question=q))
    if task == "sub_queries":
        return _user(bridge_prompts.SUB_QUERIES.format(number=fields["n"], question=q))
    if task == "multi_answer":
        return _user(bridge_prompts.GENERATOR.format(queries=bridge_prompts.numbered(fields["sub_queries"])))
    if task == "reflect":
        internal, external, *retrieved = _texts(fields)
        return _user(bridge_prompts.REFLECT.format(question=q, internal=internal, external=external,
                                                   generated=bridge_prompts.numbered(fields["answers"]) or "None",
                                                   retrieved=bridge_prompts.numbered(retrieved) or "None",
                                                   number=fields["n"]))
    if task == "select_option":
        return _user(bridge_prompts.RESPONDER.format(knowledge="\n".join(_texts(fields)), question=q,
                                                     options=bridge_prompts.options_text(fields["options"])))
    raise KeyError(f"no prompt builder for task {task!r}")


def _sent(task: str) -> dict:
    return {"task": task, **EXAMPLES[task]}


def _knows(task: str) -> Knowledge:
    """What serve-model would know: the example's memory about its question."""
    return Knowledge.of(EXAMPLES[task]["question"], EXAMPLES[task].get("memory"))


# --- recognition ------------------------------------------------------------------------------------------

def test_every_task_has_a_prompt_reader_or_a_generic_prompt():
    assert set(TASKS) - GENERIC_TASKS <= {r.task for r in READERS}
    assert len({(r.task, r.template) for r in READERS}) == len(READERS)


@pytest.mark.parametrize("task", sorted(set(EXAMPLES) - {"ping"}))
def test_every_task_is_recognised_and_its_inputs_read_back(task):
    found = recognise(Prompt.of(prompt_for(task, EXAMPLES[task])))
    assert found is not None, task
    reader, read = found
    assert reader.task == task and disagreements(reader, read, _sent(task)) == []
    assert "question" in read or task == "multi_answer"   # the generator's prompt holds only the sub-queries


def test_variants_of_a_template_are_read():
    # Astute: several passages to write, the structured format, several answers
    read = recognise(Prompt.of(astute_prompts.gen_messages(Q_BORN, 3)))[1]
    assert read == {"task": "generate_passage", "question": Q_BORN, "max_passages": 3}
    fields = {**EXAMPLES["consolidate_answer"], "answer_mode": "multi", "prompt_mode": "structured"}
    read = recognise(Prompt.of(prompt_for("consolidate_answer", fields)))[1]
    assert (read["answer_mode"], read["prompt_mode"]) == ("multi", "structured")
    assert [p["source"] for p in read["passages"]] == ["external"] * 4 + ["memory"]
    # Astute with a consolidated context (t > 1) and source details
    context = astute_prompts.render_context([AstutePassage(number=1, origin="external", text=BORN_1869, source="s1")],
                                            source_detail=True)
    read = recognise(Prompt.of(astute_prompts.ans_messages(Q_BORN, context, "Document 1 (source: external): x",
                                                           "single", False)))[1]
    assert read["passages"] == [{"source": "external", "text": BORN_1869}] and read["question"] == Q_BORN
    # MADAM: a lone agent in round 2; the aggregator's line in the history
    read = recognise(Prompt.of(madam.agent_prompt(Q_BORN, BORN_1869, "")))[1]
    assert (read["round"], read["history"]) == (2, [])
    agg = 'Aggregator: All Correct Answers: ["1869"]. Explanation: two agents.'
    read = recognise(Prompt.of(madam.agent_prompt(Q_BORN, BORN_1869, "Agent 2: Answer: 1872.\n" + agg)))[1]
    assert read["history"] == ["Agent 2: Answer: 1872.", agg]
    # BRIDGE: the free-form responder, K_int "None", nothing generated
    read = recognise(Prompt.of(_user(bridge_prompts.RESPONDER_FREE.format(knowledge="None", question=Q_BORN))))[1]
    assert (read["task"], read["passages"]) == ("keyword_answer", [])
    # RC-RAG: no passage at all
    read = recognise(Prompt.of(cf_prompts.rag_messages(Q_BORN, [])))[1]
    assert (read["task"], read["passages"]) == ("cf_answer", [])


def test_documents_spanning_lines_are_read_whole():
    docs = [f"{BORN_1869}\nDocument 3: not a label, a line of the first document", "Line one.\n\nLine two.", NOISE]
    read = recognise(Prompt.of(baselines.documents_prompt(Q_BORN, docs)))[1]
    assert [p["text"] for p in read["passages"]] == docs
    read = recognise(Prompt.of(cf_prompts.rag_messages(Q_BORN, _cf({"passages": [{"text": t} for t in docs]}))))[1]
    assert [p["text"] for p in read["passages"]] == docs
    assert read_numbered("1. a\n2. b\nwith a second line\n4. c") == ["a", "b\nwith a second line\n4. c"]
    assert read_numbered("2. a") is None


# --- the same reply with or without the fields --------------------------------------------------------------

@pytest.mark.parametrize("task", sorted(EXAMPLES))
def test_the_reply_is_the_same_with_or_without_the_task_fields(task):
    messages = prompt_for(task, EXAMPLES[task])
    assert respond(messages, {}, _knows(task)) == respond(messages, _sent(task))


def test_over_http_without_task_fields_the_reply_is_the_in_process_one(tmp_path):
    dataset = tmp_path / "memory.jsonl"
    dataset.write_text(json.dumps({"id": "m1", "question": Q_BORN, "gold_answers": ["1869"], "documents": [
        {"id": "m1-d1", "source": "s", "text": BORN_1869}], "internal_knowledge": MEMORY_1869}) + "\n")
    with running_server(knowledge=(str(dataset),)) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as http:
        for task in sorted(EXAMPLES):
            messages = prompt_for(task, EXAMPLES[task])
            body = http.post("/chat/completions", json={"model": "reader", "messages": messages}).json()
            assert body["choices"][0]["message"]["content"] == respond(messages, _sent(task)), task


# --- the cross-check ----------------------------------------------------------------------------------------

def test_a_dropped_document_is_an_error_naming_the_task_and_the_field():
    messages = baselines.documents_prompt(Q_BORN, _texts(EXAMPLES["keyword_answer"])[:-1])
    with pytest.raises(PromptMismatch) as info:
        respond(messages, _sent("keyword_answer"))
    message = str(info.value)
    assert "'keyword_answer'" in message and "'passages'" in message and "item 4" in message, message


def test_a_prompt_of_another_task_or_round_is_an_error():
    with pytest.raises(PromptMismatch, match="'closed_book'.*'task'"):
        respond(baselines.documents_prompt(Q_BORN, [BORN_1869]), {"task": "closed_book", "question": Q_BORN})
    turn = EXAMPLES["debate_turn"]   # a round-2 prompt
    with pytest.raises(PromptMismatch, match="'round'"):
        respond(prompt_for("debate_turn", turn), {"task": "debate_turn", **turn, "round": 1})
    assert respond(prompt_for("debate_turn", turn), {"task": "debate_turn", **turn, "round": 3})   # any later round
    with pytest.raises(PromptMismatch, match="'question'"):
        respond(baselines.closed_book_prompt(Q_BORN), {"task": "closed_book", "question": "Who else?"})


def test_an_unrecognised_prompt_of_a_method_task_is_an_error():
    with pytest.raises(PromptMismatch, match="matches no template"):
        respond(_user("Consolidate these."), _sent("consolidate"))


def test_outside_strict_mode_a_disagreement_is_logged_and_the_prompt_answers(monkeypatch, caplog):
    monkeypatch.setenv(MODE_ENV, "warn")
    messages = baselines.documents_prompt(Q_BORN, [BORN_1872])
    with caplog.at_level(logging.WARNING, logger="backend.llm.offline.check"):
        reply = respond(messages, {"task": "keyword_answer", "question": Q_BORN, "passages": [ext(1, BORN_1869)]})
    assert "1872" in reply and "disagree on 'passages'" in caplog.text


# --- prompts no template matches ----------------------------------------------------------------------------

def test_a_bare_prompt_is_answered_as_a_model_would():
    assert respond(_user("Reply with the single word: ready"), {}) == "ready"
    assert respond(_user(f"Context: {BORN_1872}\nQuestion: {Q_BORN}"), {}) == "5 February 1872"
    bare = _user(f"Answer from what you know.\nQuestion: {Q_BORN}")
    assert respond(bare, {}, Knowledge()) == "I don't know"
    assert respond(bare, {}, Knowledge.of(Q_BORN, MEMORY_1869)) == "1869"
    assert respond(bare, {"task": "closed_book", "question": Q_BORN, "memory": MEMORY_1869}) == "1869"


# --- memory -------------------------------------------------------------------------------------------------

def test_knowledge_is_recalled_by_the_question_the_prompt_asks(tmp_path):
    known = Knowledge.from_pairs([(Q_BORN, MEMORY_1869), ("Who directed Titanic?", "James Cameron directed it."),
                                  (Q_BORN.upper(), "a second memory of the same question"), ("Who?", "None")])
    assert len(known) == 2                                           # "None" is no memory; the first of two wins
    assert known.recall("when was horace rumbold born") == MEMORY_1869   # case and punctuation do not matter
    assert known.recall("Who is Horace Rumbold?") is None
    # paraphrases built around the question recall it; failing that, the question whose subject they keep
    assert known.recall_within([f"According to records, {Q_BORN.lower()}", "Something else?"])[1] == MEMORY_1869
    assert known.recall_within(["In which year was the diplomat Horace Rumbold born?"])[1] == MEMORY_1869
    assert known.recall_within(["What is the capital of France?"]) is None

    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "a", "question": Q_BORN, "gold_answers": ["x"], "documents": [
        {"id": "a-d1", "source": "s", "text": NOISE}], "internal_knowledge": MEMORY_1869}) + "\n")
    assert load_knowledge([path]).recall(Q_BORN) == MEMORY_1869


def test_serve_model_knows_the_bundled_memories_by_default():
    from backend.data import load_dataset
    from backend.paths import SAMPLE_DATA

    scenario = next(q for q in load_dataset(SAMPLE_DATA / "scenarios").questions if q.internal_knowledge)
    assert bundled_knowledge().recall(scenario.question) == scenario.internal_knowledge.strip()
    reply = respond(baselines.closed_book_prompt(scenario.question), {})   # no fields: the bundled store
    assert reply == respond(baselines.closed_book_prompt(scenario.question),
                            {"task": "closed_book", "question": scenario.question,
                             "memory": scenario.internal_knowledge})


def test_the_generator_recalls_through_the_sub_queries():
    subs = EXAMPLES["multi_answer"]["sub_queries"]
    messages = prompt_for("multi_answer", EXAMPLES["multi_answer"])
    assert respond(messages, {}, Knowledge.of(Q_BORN, MEMORY_1869)).startswith("1. 1869: ")
    assert respond(messages, {}, Knowledge()) == "\n".join(f"{k}. I don't know" for k in range(1, len(subs) + 1))


TEMPLATE_PHRASES = ("i recall", "right reply", "stored knowledge", "memory serves", "i remember", "that is what i")


def test_no_handler_keys_on_a_memory_template():
    """The memory is read as any passage is read: no offline module matches the old scenario templates' words."""
    folder = Path(offline_package_file()).parent
    for path in sorted(folder.glob("*.py")):
        text = path.read_text(encoding="utf-8").lower()
        assert not [p for p in TEMPLATE_PHRASES if p in text], path.name
    # a memory in the documents' own style answers closed book, with no template words around it
    assert respond(baselines.closed_book_prompt(Q_BORN), {"task": "closed_book", "question": Q_BORN,
                                                          "memory": BORN_1869}) == "5 February 1869"


def offline_package_file() -> str:
    import backend.llm.offline as package

    return package.__file__


def test_the_method_modules_imported_here_are_the_registered_ones():
    """(The prompt builders above are the methods' own.)"""
    assert astute.prompts is astute_prompts and bridge.prompts is bridge_prompts
    assert counterfactual.prompts is cf_prompts
