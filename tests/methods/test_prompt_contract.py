"""The prompt contract, over every registered method: every input a model call depends on is in the prompt it sends.

The offline model answers from the prompt alone (``backend.llm.offline``), so a prompt that drops an input would make
every offline figure describe a method that never ran. For each method (``SPECS``: a method is covered the moment it
is registered), run with the offline model on a RAMDocs question (several documents) and a scenario question (a
simulated memory, options), every call is checked:

* the offline model recognises the prompt as the call's task, and what it reads out of the prompt agrees with the
  task fields sent beside it (``check.disagreements``);
* every input the call's task fields name -- the question, each document's text, the memory passages, the other agents'
  replies, its own earlier answer, the sub-queries, the options -- appears in the prompt text, apart from the inputs a
  prompt does not carry by design (``NOT_IN_PROMPT``, each with its reason) and the settings read back from the
  prompt's wording (``SETTINGS``, checked by the first point).

And the check can fail: a prompt template changed to drop a document fails it, and fails the offline model's own
cross-check (the call errs, naming the task and the field).
"""

from __future__ import annotations

import re

import pytest

from backend.data import load_dataset
from backend.llm import offline
from backend.llm.client import LLMConfig
from backend.llm.offline.check import disagreements
from backend.llm.offline.prompt import Prompt, recognise
from backend.methods import SPECS
from backend.paths import SAMPLE_DATA
from backend.runner import Runner

#: (task or "*", field) -> why the prompt does not carry that input.
NOT_IN_PROMPT = {
    ("*", "memory"): "the simulated memory is the model's own knowledge: a closed-book prompt holds the question only; "
                     "where a prompt carries a memory passage (Astute, BRIDGE) it is among the passages",
    ("cf_quality", "previous_evidence"): "RC-RAG's conversation holds the parsed answer only (counterfactual.md §8.4)",
    ("multi_answer", "question"): "BRIDGE's generator prompt holds only the sub-queries, as the paper's",
    ("reflect", "sub_queries"): "BRIDGE's reflection prompt gives the knowledge the sub-queries found, not the "
                                "sub-queries (bridge.md §4)",
}
#: Settings a prompt states in its wording (round 1 or later, how many questions, single or several answers...),
#: not as a quoted input: the offline model reads them back, and the cross-check compares them.
SETTINGS = {"task", "round", "n", "max_passages", "answer_mode", "prompt_mode", "kind"}

QUESTIONS = {"ramdocs_dev": "ramdocs-0001", "scenarios": "sc-0002"}   # several documents; memory, 2 documents, options


def _flat(text) -> str:
    return re.sub(r"\s+", " ", str(text or "")).strip()


def _inputs(field: str, value) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else [value]
    return [_flat(i.get("text") if isinstance(i, dict) else i) for i in items]


def missing_inputs(messages: list[dict], fields: dict) -> list[str]:
    """The inputs ``fields`` names that the prompt text does not contain (whitespace aside)."""
    text = _flat("\n".join(str(m.get("content") or "") for m in messages))
    task, out = fields.get("task"), []
    for field, value in fields.items():
        if field in SETTINGS or ("*", field) in NOT_IN_PROMPT or (task, field) in NOT_IN_PROMPT:
            continue
        for i, item in enumerate(_inputs(field, value)):
            if item and item not in text:
                out.append(f"{task}: {field}[{i}] {item[:80]!r} is not in the prompt")
    return out


def reading_problems(messages: list[dict], fields: dict) -> list[str]:
    """Where the offline model's reading of the prompt differs from the task fields (nothing: it agrees)."""
    found = recognise(Prompt.of(messages))
    if found is None:
        return [f"{fields.get('task')}: the offline model recognises no template in the prompt"]
    reader, read = found
    return [f"{fields.get('task')}: {field}: {what}" for field, what in disagreements(reader, read, fields)]


@pytest.fixture(scope="module")
def datasets():
    """Six-question slices (a dataset-level preparation stays cheap)."""
    out = {}
    for name in QUESTIONS:
        ds = load_dataset(SAMPLE_DATA / name)
        out[name] = ds.model_copy(update={"questions": ds.questions[:6]})
    return out


@pytest.fixture
def sent(monkeypatch) -> list[tuple[list[dict], dict]]:
    """Every (messages, task fields) the offline model is sent."""
    seen, respond = [], offline.respond

    def recording(messages, fields, *args, **kwargs):
        seen.append(([dict(m) for m in messages], dict(fields)))
        return respond(messages, fields, *args, **kwargs)

    monkeypatch.setattr(offline, "respond", recording)
    return seen


def _run(name: str, datasets, sent) -> list[tuple[list[dict], dict]]:
    for ds_name, qid in QUESTIONS.items():
        ds = datasets[ds_name]
        question = next(q for q in ds.questions if q.id == qid)
        result = Runner(ds, llm=LLMConfig(cache_mode="off", concurrency=8)).run(question, [name])[name]
        assert result.error is None, (ds_name, result.error)
    return list(sent)


@pytest.mark.parametrize("name", list(SPECS))
def test_every_input_of_every_call_is_in_its_prompt(name, datasets, sent):
    calls = _run(name, datasets, sent)
    assert calls, f"{name} made no model call"
    problems = [p for messages, fields in calls for p in reading_problems(messages, fields)
                + missing_inputs(messages, fields)]
    assert not problems, "\n".join(problems[:20])


def test_the_memory_passage_travels_in_the_prompt_where_it_is_meant_to(datasets, sent):
    """Astute writes the model's memory as a passage, and its answer call reads it from the prompt, labelled memory."""
    calls = _run("astute", datasets, sent)
    memory = next(q for q in datasets["scenarios"].questions if q.id == QUESTIONS["scenarios"]).internal_knowledge
    answers = [(m, f) for m, f in calls if f["task"] == "consolidate_answer"
               and any(p["source"] == "memory" for p in f["passages"])]
    assert memory and answers, "no answer call carried the memory passage"
    for messages, fields in answers:
        texts = [p["text"] for p in fields["passages"] if p["source"] == "memory"]
        assert texts == [memory]
        assert f"(source: memory): {_flat(memory)}" in _flat(messages[-1]["content"])


# --- the check can fail --------------------------------------------------------------------------------------

def _drop_last(texts: list[str]) -> list[str]:
    return texts[:-1]


def test_a_template_that_drops_a_document_fails_the_check_and_the_cross_check(datasets, sent, monkeypatch):
    import backend.methods.baselines as baselines

    original = baselines.documents_prompt
    monkeypatch.setattr(baselines, "documents_prompt", lambda question, texts: original(question, _drop_last(texts)))
    ds = datasets["ramdocs_dev"]
    question = next(q for q in ds.questions if q.id == QUESTIONS["ramdocs_dev"])
    assert len(question.documents) >= 2
    result = Runner(ds, llm=LLMConfig(cache_mode="off", num_retries=0)).run(question, ["vanilla_rag"])["vanilla_rag"]

    # the offline model's cross-check (strict in the tests) refuses the call, naming the task and the field
    assert result.error and "keyword_answer" in result.error and "'passages'" in result.error, result.error
    messages, fields = sent[0]
    assert any("passages[" in p for p in missing_inputs(messages, fields))      # this test's check
    assert any("passages" in p for p in reading_problems(messages, fields))


def test_a_conversation_that_drops_a_passage_fails_both_too(datasets, sent, monkeypatch):
    from backend.methods.counterfactual import prompts

    original = prompts.render_passages
    monkeypatch.setattr(prompts, "render_passages", lambda passages: original(passages[:-1]))
    ds = datasets["scenarios"]
    question = next(q for q in ds.questions if q.id == QUESTIONS["scenarios"])
    result = Runner(ds, llm=LLMConfig(cache_mode="off", num_retries=0)).run(question, ["counterfactual"])
    error = result["counterfactual"].error
    assert error and "cf_answer" in error and "'passages'" in error, error
    messages, fields = sent[0]
    assert missing_inputs(messages, fields) and reading_problems(messages, fields)
