"""Baselines through the real offline model: answers, traces, truth isolation, the inspect CLI."""

import json
import subprocess
import sys

import pytest

from backend.llm.client import LLMClient, LLMConfig
from backend.methods import METHODS, resolve
from backend.methods.base import RunContext
from backend.methods.baselines import NoRAG, VanillaRAG
from backend.schema import strip_truth, without_timings
from tests.conftest import ROOT


def _ctx():
    return RunContext(client=LLMClient(LLMConfig(cache_mode="off")).for_method("t"))


def _comparable(result):
    """Everything but wall-clock timings."""
    return json.dumps(without_timings(result), sort_keys=True)


def test_vanilla_rag_reads_the_given_documents(ramdocs):
    q = ramdocs.question("@1")
    r = VanillaRAG().run(strip_truth(q), _ctx())
    assert r.error is None and r.answers == ["3,559"] and not r.abstained
    assert r.trace.documents == [d.id for d in q.documents] and r.trace.evidence_mode == "given"
    assert len(r.calls) == 1 and r.calls[0].task == "keyword_answer"
    assert all(d.text in r.calls[0].messages[-1]["content"] for d in q.documents)


def test_no_rag_abstains_without_memory_and_answers_from_memory(ramdocs):
    q = ramdocs.question("@1")
    assert NoRAG().run(strip_truth(q), _ctx()).abstained
    remembered = q.model_copy(update={"internal_knowledge": "Broken Bow had a population of 3,559 in 2010."})
    r = NoRAG().run(strip_truth(remembered), _ctx())
    assert r.answers and "3,559" in r.answers[0]


def test_resolve_method_names():
    assert resolve("no_rag, vanilla_rag") == ["no_rag", "vanilla_rag"]
    assert resolve("all") == list(METHODS) and "no_rag" in METHODS
    with pytest.raises(ValueError, match="unknown method"):
        resolve("nope")


def _inspect(cache_dir, *extra):
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", "sample_data/ramdocs_dev",
                           "--question", "@1", "--methods", "no_rag,vanilla_rag", "--json",
                           "--cache-dir", str(cache_dir), *extra], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_inspect_json_contract_and_second_run_is_fully_cached(tmp_path):
    first = _inspect(tmp_path)
    assert first["question"] == {"id": "ramdocs-0001", "question": "What is the population of Broken Bow?"}
    assert set(first["results"]) == {"no_rag", "vanilla_rag"}
    for name, r in first["results"].items():
        assert {"method", "answers", "abstained", "error", "trace", "calls", "wall_s"} <= set(r)
        for call in r["calls"]:
            assert {"step", "cache_hit", "latency_s", "prompt_tokens", "completion_tokens"} <= set(call)
    assert first["results"]["vanilla_rag"]["answers"] == ["3,559"]
    assert not any(c["cache_hit"] for r in first["results"].values() for c in r["calls"])
    second = _inspect(tmp_path, "--cache-mode", "replay")  # replay fails loudly on any miss
    assert all(c["cache_hit"] for r in second["results"].values() for c in r["calls"])
    assert second["results"]["vanilla_rag"]["answers"] == ["3,559"]


def test_inspect_errors_are_clear(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", "sample_data/ramdocs_dev",
                           "--question", "@999", "--cache-dir", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "has 100 questions" in proc.stderr and "Traceback" not in proc.stderr


def test_baselines_read_their_reply_by_one_rule_under_both_readings():
    """No paper of their own: the answer is one decision (``Readings.same``), counted, never a difference; a
    chat-style reply is read alike under the paper reading."""
    from backend.llm.providers import scripted
    from backend.methods.reading import Readings
    from backend.schema import Document, Question

    q = Question(id="b", question="Whose company designed the Eiffel Tower?",
                 documents=[Document(id="d1", text="The company of Gustave Eiffel designed the tower.")])
    for reading in ("tolerant", "paper"):
        for cls in (NoRAG, VanillaRAG):
            ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/x", cache_mode="off")).for_method(cls.name),
                             readings=Readings(reading))
            with scripted({"keyword_answer": "The answer is Gustave Eiffel.",
                           "closed_book": "The answer is Gustave Eiffel."}):
                r = cls().run(q, ctx)
            assert r.error is None and r.answers == ["Gustave Eiffel"] and r.reading == reading
            assert r.decisions_read == 1 and r.reading_differences == []
