"""The method contract, run over every registered method (after Hugging Face evaluate's common metric test):
a method added to ``backend.methods.METHODS`` is covered the moment it is registered.

For each method, on a multi-source question (RA-RAG's setting, with its dataset-level preparation), a RAMDocs
question (documents are their own sources) and a BRIDGE-style scenario question (simulated memory, options):

* ground truth never matters: the truth-laden and the truth-stripped inputs give identical results (and
  identical ``prepare`` artefacts), and no piece of truth (a canary planted in every truth field) reaches a model;
* the result and its trace round-trip through JSON, and the trace names its key facts (the what-if diff);
* a failing model call is contained in ``error`` (directly and through the runner), never raised;
* malformed replies degrade: no error, a trace, and every parse problem stays inside the result;
* every call carries a step the method declares, the method's name, and parents that are earlier calls of
  the same result which had finished before it started.
"""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from backend.data import load_dataset
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.llm.tasks import TASKS
from backend.methods import METHODS, SPECS
from backend.methods.base import Method, run_sync
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema.trace import Trace
from backend.schema import (Dataset, DocLabel, MethodResult, Question, Source, strip_truth,
                            without_timings)

NAMES = sorted(METHODS)
CASES = ["multisource", "ramdocs_dev", "scenarios"]
#: fields of a prepare artefact that measure time or cache state, not what was computed
VOLATILE = {"seconds", "cache_hits"}


@pytest.fixture(scope="module")
def datasets() -> dict[str, Dataset]:
    """Small slices of the bundled datasets (6 questions keep a dataset-level preparation cheap)."""
    out = {}
    for name in CASES:
        ds = load_dataset(SAMPLE_DATA / name)
        out[name] = ds.model_copy(update={"questions": ds.questions[:6]})
    return out


def _runner(ds: Dataset, model: str = "offline/reader") -> Runner:
    return Runner(ds, llm=LLMConfig(model=model, cache_mode="off", concurrency=8))


def _artefact_data(artefact: BaseModel | None):
    return None if artefact is None else artefact.model_dump(mode="json", exclude=VOLATILE)


def _run_direct(name: str, ds: Dataset, question: Question, model: str = "offline/reader"):
    """Prepare (if the method needs it) and run, handing the method exactly the inputs given: no stripping."""
    runner = _runner(ds, model)
    method: Method = runner.method(name)
    ctx = runner.context(name)
    artefact = None
    if method.prepared_type is not None and method.prepare_key(ds, ctx) is not None:
        artefact = run_sync(method.prepare(ds, ctx))
    return artefact, method.run(question, runner.context(name, artefact))


# --- ground truth never matters ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_truth_stripped_gives_identical_results(name, case, datasets):
    ds = datasets[case]
    q = ds.questions[1]
    assert q.has_truth
    art_truth, with_truth = _run_direct(name, ds, q)
    art_plain, without = _run_direct(name, strip_truth(ds), strip_truth(q))
    assert with_truth.error is None, with_truth.error
    assert _artefact_data(art_truth) == _artefact_data(art_plain)
    assert without_timings(with_truth) == without_timings(without)


CANARY = "zq-canary-7731"


def _poisoned(ds: Dataset) -> Dataset:
    """Every truth field carries the canary: gold/wrong answers, document labels, meta, source reliabilities."""
    questions = [q.model_copy(update={
        "gold_answers": [f"{CANARY} gold"], "wrong_answers": [f"{CANARY} wrong"], "meta": {"note": CANARY},
        "documents": [d.model_copy(update={"label": DocLabel(type="misinfo", answer=f"{CANARY} label")})
                      for d in q.documents]}) for q in ds.questions]
    sources = [Source(name=s.name, true_reliability=0.123, coverage=0.456) for s in ds.sources]
    return ds.model_copy(update={"questions": questions, "sources": sources})


@pytest.mark.parametrize("name", NAMES)
def test_no_truth_reaches_a_model(name, datasets):
    for case in CASES:
        ds = _poisoned(datasets[case])
        with scripted({"*": lambda fields: json.dumps(fields)}) as model:  # echo: whatever it saw comes back
            artefact, result = _run_direct(name, ds, ds.questions[1], model="scripted/echo")
            received = json.dumps(model.received)
        seen = received + json.dumps([c.messages for c in result.calls])
        assert CANARY not in seen and "0.123" not in seen and "0.456" not in seen, (case, name)
        assert result.calls, f"{name} made no model call on {case}: the check would be empty"


# --- results and traces are data ----------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_result_and_trace_round_trip_through_json(name, case, datasets):
    ds = datasets[case]
    artefact, result = _run_direct(name, strip_truth(ds), strip_truth(ds.questions[1]))
    assert result.error is None and result.method == name and result.trace is not None
    assert type(result.trace) is SPECS[name].trace and Trace.kinds[result.trace.kind] is SPECS[name].trace
    again = MethodResult.model_validate_json(result.model_dump_json())
    assert again == result and type(again.trace) is type(result.trace)
    facts = result.trace.key_facts()  # what a what-if comparison shows of this method (backend.whatif.compare)
    assert facts and all(isinstance(k, str) and isinstance(v, str) and v for k, v in facts.items())
    if artefact is not None:
        assert type(artefact).model_validate_json(artefact.model_dump_json()) == artefact


# --- failures and malformed replies are contained ------------------------------------------------------------

def _remembering(q: Question) -> Question:
    """The question with a memory, so memory-only steps (closed book) make a call too."""
    return strip_truth(q).model_copy(update={"internal_knowledge": q.internal_knowledge or q.documents[0].text})


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_a_failing_model_call_is_contained(name, case, datasets):
    ds = strip_truth(datasets[case])
    q = _remembering(ds.questions[1])
    method = METHODS[name]()
    with scripted({}):  # no reply for any task: every call fails with a provider error
        runner = _runner(ds, "scripted/failing")
        result = method.run(q, runner.context(name))  # directly, without any preparation
        through_runner = runner.run(q, [name])[name]  # the runner's preparation fails first where there is one
    assert result.error and result.error.startswith("model call failed"), result.error
    assert result.calls and all(c.error for c in result.calls)
    assert through_runner.error and "failed" in through_runner.error and through_runner.method == name


MALFORMED = ["", "<<<???>>>", "Answer:", "$$ $$ ## ## [[ ]] {", "答案：不知道 " * 40, "1. \n2. \n3.",
             "Probability: lots. Correct Option: Z. <ANSWER></ANSWER>"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_malformed_replies_degrade_without_error(name, case, datasets):
    ds = strip_truth(datasets[case])
    q = _remembering(ds.questions[1])
    for reply in MALFORMED:
        with scripted({"*": reply}):
            runner = _runner(ds, "scripted/garbage")
            result = runner.run(q, [name])[name]
        assert result.error is None, (reply, result.error)
        assert result.trace is not None and result.calls
        assert MethodResult.model_validate_json(result.model_dump_json()) == result
        assert all(a.strip() for a in result.answers), (reply, result.answers)  # never a blank answer


# --- calls: steps and parents ------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_calls_carry_declared_steps_and_true_parents(name, case, datasets):
    ds = strip_truth(datasets[case])
    method = METHODS[name]
    assert method.steps, f"{name} declares no step names"
    result = _runner(ds).run(ds.questions[1], [name])[name]
    assert result.error is None and result.calls
    by_id = {c.id: c for c in result.calls}
    assert len(by_id) == len(result.calls)
    for call in result.calls:
        assert method.declares_step(call.step), (call.step, method.steps)
        assert call.task in TASKS and call.method == name and call.response is not None
        for parent in call.parents:
            assert parent in by_id, f"{call.id} names a parent {parent} that is not a call of this result"
            assert by_id[parent].ended_at <= call.started_at, f"{call.id} started before its parent {parent} ended"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_answers_rest_only_on_documents_the_method_read(name, case, datasets):
    """``support`` (the document x method map, ``inspect --json``) names only documents whose text was in one of
    the method's prompts: a method that read no document (closed book) rests on none."""
    ds = strip_truth(datasets[case])
    q = _remembering(ds.questions[1])
    result = _runner(ds).run(q, [name])[name]
    prompts = " ".join(" ".join(m["content"].split()) for c in result.calls for m in c.messages)
    texts = {d.id: " ".join(d.text.split()) for d in q.documents}
    read = {i for i, t in texts.items() if t in prompts}
    cited = {i for ids in result.support.values() for i in ids}
    assert cited <= read, f"{name} rests on documents it never read: {sorted(cited - read)}"
    if not read:
        assert not cited


@pytest.mark.parametrize("reading", ["tolerant", "paper"])
@pytest.mark.parametrize("name", NAMES)
def test_every_method_reads_its_replies_through_the_runs_reading(name, reading, datasets):
    """Each decision a method reads from a reply is counted, the result says which reading decided, and replies in
    the papers' own formats (the offline reader writes them) depend on no reading: both readings read them alike."""
    ds = datasets["ramdocs_dev"]
    runner = Runner(ds, llm=LLMConfig(model="offline/reader", cache_mode="off", concurrency=8), reading=reading)
    result = runner.run(ds.questions[1], [name])[name]
    assert result.error is None and result.reading == reading
    replied = [c for c in result.calls if c.response]
    assert result.decisions_read >= (1 if replied else 0), f"{name} read {len(replied)} replies, counted no decision"
    assert result.reading_differences == [], f"{name}: {result.reading_differences}"


def test_every_method_is_covered():
    """The registry is what the contract runs over: every spec names its class's method and a registered trace; the
    names users type are stable (CLI, JSON, URLs)."""
    assert sorted(SPECS) == NAMES
    for name, spec in SPECS.items():
        assert spec.name == name == spec.cls.name and Trace.kinds[spec.trace.model_fields["kind"].default] is spec.trace
        assert spec.title and spec.description and spec.color.startswith("#")
    assert {"ra_rag", "madam", "no_rag", "vanilla_rag"} <= set(NAMES)
