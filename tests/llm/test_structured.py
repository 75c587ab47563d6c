"""Structured output (issue 25 §4): every task has a JSON schema beside it; a JSON reply per schema reads as the text
reply it stands for, and as exact; the setting reaches the request (``response_format``), the cache key and the call
record only for a model that supports it; ``serve-model`` honours ``response_format``, so a structured run over HTTP
gives the same final answers as the plain run, method by method."""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest
from pydantic import BaseModel

import backend.llm.client as client_mod
from backend.cli import main
from backend.data import load_dataset
from backend.llm.cache import request_key
from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.llm.server import running_server, warm_up
from backend.llm.structured import response_format, supports_json_schema
from backend.llm.tasks import TASKS, read_reply
from backend.methods import METHODS, SPECS
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import Dataset

MSG = [{"role": "user", "content": "Question: who?\nAnswer:"}]
#: settings under which the methods make the calls their defaults do not (entailment, probability, consolidation)
OTHER_SETTINGS = {"ra_rag": {"clustering": "entailment"}, "counterfactual": {"fusion": "probability"},
                  "astute": {"iterations": 2}}


def _project_tasks() -> list[str]:
    """Every task the project declares (a test's toy method, loaded as a plugin, may declare one without a schema)."""
    return sorted(name for name, spec in TASKS.items() if getattr(spec.reader, "__module__", "").startswith("backend."))


@pytest.fixture(scope="module")
def datasets() -> dict[str, Dataset]:
    out = {}
    for name in ("ramdocs_dev", "scenarios"):
        ds = load_dataset(SAMPLE_DATA / name)
        out[name] = ds.model_copy(update={"questions": ds.questions[:2]})
    return out


# -- the schemas --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("task", _project_tasks())
def test_every_task_has_a_strict_schema_named_after_it(task):
    spec = TASKS[task]
    assert spec.schema is not None and spec.as_schema is not None, f"{task} declares no JSON schema"
    fmt = response_format(task)
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == task and fmt["json_schema"]["strict"]
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])


#: what a JSON reply and a text reply may differ in, by design: the raw reply itself; CF-usage's evidence (its prompt
#: asks for none: the released code takes the whole text reply as evidence, a JSON reply has none, and the judgment
#: compares evidence only when an answer is empty)
DIFFER = {"raw"}
DIFFER_BY_TASK = {"cf_usage": {"raw", "evidence"}}


def _comparable(value, task: str = ""):
    """A reader's value without what may differ (``DIFFER``)."""
    if isinstance(value, BaseModel):
        return value.model_dump(exclude=DIFFER_BY_TASK.get(task, DIFFER))
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return tuple(_comparable(v, task) for v in value)
    return value


@pytest.fixture(scope="module")
def offline_reads(datasets) -> dict[str, list[tuple[str, dict]]]:
    """(offline reply, the call's fields) per task, as every method sends them on real questions (recorded where
    the client reads each reply)."""
    seen: dict[str, list[tuple[str, dict]]] = {}
    real = client_mod.read_reply

    def record(task, reply, fields, structured=False):
        seen.setdefault(task, []).append((reply, fields))
        return real(task, reply, fields, structured)

    client_mod.read_reply = record
    try:
        for ds in datasets.values():
            for params, methods in (({}, list(METHODS)), (OTHER_SETTINGS, list(OTHER_SETTINGS))):
                runner = Runner(ds, llm=LLMConfig(cache_mode="off", concurrency=8), method_params=params)
                for q in ds.questions:
                    runner.run(q, methods)
    finally:
        client_mod.read_reply = real
    seen.setdefault("ping", [("ready", {"task": "ping", "question": "connection test"})])
    # a reflection happens only between the thresholds (T_Ret in [α, β)): a reply in its paper's format
    seen.setdefault("reflect", [("Analysis: The passages disagree on the year of birth.\nNew questions:\n"
                                 "1. In which year was Horace Rumbold born?\n2. What is Horace Rumbold's birth date?",
                                 {"task": "reflect", "question": "When was Horace Rumbold born?", "n": 2,
                                  "sub_queries": ["When was Horace Rumbold born?"], "answers": ["1869"],
                                  "passages": []})])
    return seen


def test_a_json_reply_per_schema_reads_as_exact_and_as_its_text_reply(offline_reads):
    """The offline model's text reply, read and dumped to the task's schema (what serve-model answers), read again
    by the same reader: the same value, and exact where the text reply was (the JSON is the format asked for)."""
    assert set(_project_tasks()) <= set(offline_reads), "every task was exercised"
    for task in _project_tasks():
        spec = TASKS[task]
        for reply, fields in offline_reads[task][:4]:
            plain = spec.reader(reply, **fields)
            as_json = spec.as_schema(plain.value, reply=reply, fields=fields).model_dump_json()
            spec.schema.model_validate_json(as_json)
            read = read_reply(task, as_json, fields, structured=True)
            # exact wherever the text reply was (a text reply read leniently for its content, e.g. a passage quoted
            # with an unclosed parenthesis, may read leniently as JSON too)
            assert read.status == "exact" or (plain.status == "lenient" and read.status == "lenient"), \
                (task, as_json, read.note)
            assert _comparable(read.value, task) == _comparable(plain.value, task), (task, reply, as_json)
            # the same JSON without having asked for it: a lenient read of the text format, never unreadable
            assert read_reply(task, as_json, fields).status in ("exact", "lenient")


# -- the setting --------------------------------------------------------------------------------------------------

def test_which_models_take_a_json_schema():
    assert not supports_json_schema("offline/reader")            # the in-process offline model: text only
    assert supports_json_schema("scripted/x")                     # tests script the JSON themselves
    assert supports_json_schema("openai/reader", "http://127.0.0.1:9/v1")  # an OpenAI-compatible server
    assert not supports_json_schema("openai/reader")             # no such OpenAI model
    assert supports_json_schema("gpt-4o-mini")                    # litellm's model map
    assert not LLMConfig(model="offline/reader", structured_output=True).structured
    assert not LLMConfig(model="scripted/x").structured           # off by default


def test_the_request_the_key_and_the_record_carry_the_schema(tmp_path):
    from backend.llm.client import default_cache

    cache = default_cache(tmp_path)
    reply = json.dumps({"answer": "Ann"})
    with scripted({"closed_book": reply}) as model:
        on = LLMClient(LLMConfig(model="scripted/s", structured_output=True), cache=cache)
        off = LLMClient(LLMConfig(model="scripted/s"), cache=cache)
        structured = on.complete(MSG, task="closed_book", step="a", question="who?")
        plain = off.complete(MSG, task="closed_book", step="a", question="who?")  # not answered by the JSON one
        again = on.complete(MSG, task="closed_book", step="a", question="who?")
        assert len(model.received) == 2
    assert (structured.structured, plain.structured, again.cache_hit) == (True, False, True)
    assert (structured.read_status, structured.read_note) == ("exact", None)
    assert plain.read_status == "lenient" and "JSON" in plain.read_note   # JSON where the text format was asked
    fields = {"task": "closed_book", "question": "who?"}
    keys = {request_key("m", MSG, 0.0, 9, fields, fmt) for fmt in (None, response_format("closed_book"),
                                                                     response_format("keyword_answer"))}
    assert len(keys) == 3


def test_the_cli_says_when_the_model_cannot_and_runs_in_the_papers_formats(capsys):
    code = main(["inspect", "--dataset", str(SAMPLE_DATA / "scenarios"), "--question", "@1", "--methods",
                 "vanilla_rag", "--structured-output", "--cache-mode", "off", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and "does not support JSON-schema responses" in err and "papers' reply formats" in err
    calls = json.loads(out)["results"]["vanilla_rag"]["calls"]
    assert calls and not any(c["structured"] for c in calls)


# -- serve-model honours response_format ----------------------------------------------------------------------

def test_serve_model_answers_in_the_schema_and_refuses_one_it_cannot():
    warm_up()
    with running_server() as srv, httpx.Client(base_url=srv.base_url, timeout=30) as http:
        body = {"model": "reader", "messages": [{"role": "user", "content": "Context: The Velmora Bridge was designed "
                                                "by Ingrid Haldane.\nQuestion: Who designed the Velmora Bridge?"}]}
        fmt = response_format("keyword_answer")
        reply = http.post("/chat/completions", json=body | {"response_format": fmt}).json()
        assert json.loads(reply["choices"][0]["message"]["content"]) == {"answer": "Ingrid Haldane"}
        text = http.post("/chat/completions", json=body | {"response_format": {"type": "text"}}).json()
        assert text["choices"][0]["message"]["content"] == "Ingrid Haldane"
        unknown = {"type": "json_schema", "json_schema": {"name": "weather", "schema": {"type": "object"}}}
        for bad in (unknown, {"type": "json_object"}):
            refused = http.post("/chat/completions", json=body | {"response_format": bad})
            assert refused.status_code == 400 and "response_format" in refused.json()["error"]["message"]


@pytest.mark.parametrize("send_task_fields", [True, False], ids=["with task fields", "prompt only"])
def test_a_structured_run_over_http_gives_the_plain_runs_answers(datasets, send_task_fields, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-structured-FAKE-0123456789")  # serve-model reads no key; litellm wants one
    warm_up()
    with running_server() as srv:
        def run(structured: bool) -> dict:
            cfg = LLMConfig(model="openai/reader", api_base=srv.base_url, cache_mode="off", concurrency=8,
                            structured_output=structured, send_task_fields=send_task_fields, num_retries=0)
            out = {}
            for ds in datasets.values():
                runner = Runner(ds, llm=cfg)
                for q in ds.questions:
                    out |= {(ds.name, q.id, m): r for m, r in runner.run(q, list(METHODS)).items()}
            return out

        plain, structured = run(False), run(True)
    for key, result in structured.items():
        assert result.error is None and plain[key].error is None, (key, result.error, plain[key].error)
        assert (result.answers, result.abstained) == (plain[key].answers, plain[key].abstained), key
        assert result.trace.key_facts() == plain[key].trace.key_facts(), key  # the same decisions on the way
        assert result.calls and all(c.structured for c in result.calls), key
        assert all(c.response.lstrip().startswith("{") for c in result.calls), key
        assert [c.read_status for c in result.calls] == ["exact"] * len(result.calls), key  # the JSON asked for
        assert not any(c.structured for c in plain[key].calls)
    assert {m for _, _, m in structured} == set(SPECS) & set(METHODS)
    assert sum(bool(r.answers) for r in structured.values()) > len(structured) * 3 / 4  # answers to compare
