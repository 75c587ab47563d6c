"""The runner: concurrency, containment, equality with sequential runs, call graph and critical path."""

import asyncio

import pytest

from backend import methods as registry
from backend.callgraph import critical_path, critical_path_length, edges
from backend.data import load_dataset
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.methods.base import Method, Outcome, RunContext
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import BaselineTrace, Question, without_timings


class Diamond(Method):
    """a and b in parallel, c needs both, d needs c: critical path a|b -> c -> d (3 calls)."""

    name = "diamond"

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        def call(step, parents=()):
            return ctx.client.acomplete([{"role": "user", "content": step}], task="closed_book", step=step,
                                        question=question.question, parents=[p.id for p in parents])
        a, b = await asyncio.gather(call("a"), call("b"))
        c = await call("c", (a, b))
        d = await call("d", (c,))
        return Outcome([d.response], False, BaselineTrace(evidence_mode="none"))


class Broken(Method):
    name = "broken"

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        raise RuntimeError("parser exploded")


@pytest.fixture
def extra_methods(monkeypatch):
    monkeypatch.setitem(registry.METHODS, "diamond", Diamond)
    monkeypatch.setitem(registry.METHODS, "broken", Broken)


def test_call_graph_edges_and_critical_path(extra_methods, ramdocs):
    with scripted({"closed_book": "x"}):
        results = Runner(ramdocs, llm=LLMConfig(model="scripted/t", cache_mode="off")).run(
            ramdocs.question("@1"), ["diamond"])
    calls = results["diamond"].calls
    ids = {c.step: c.id for c in calls}
    assert sorted(edges(calls)) == sorted([(ids["a"], ids["c"]), (ids["b"], ids["c"]), (ids["c"], ids["d"])])
    path = critical_path(calls)
    assert len(path) == 3 and path[1:] == [ids["c"], ids["d"]] and path[0] in (ids["a"], ids["b"])
    assert critical_path_length(calls) == 3


def test_failing_method_is_contained(extra_methods, ramdocs):
    with scripted({"closed_book": "x", "keyword_answer": "y"}):
        results = Runner(ramdocs, llm=LLMConfig(model="scripted/t", cache_mode="off")).run(
            ramdocs.question("@1"), ["broken", "vanilla_rag", "diamond"])
    assert list(results) == ["broken", "vanilla_rag", "diamond"]
    assert "parser exploded" in results["broken"].error and results["broken"].answers == []
    assert results["vanilla_rag"].answers == ["y"] and results["diamond"].answers == ["x"]


def test_concurrent_equals_sequential_with_the_offline_model(ramdocs, tmp_path):
    q = ramdocs.question("@3")
    names = ["no_rag", "vanilla_rag"]
    together = Runner(ramdocs, llm=LLMConfig(cache_mode="off")).run(q, names)
    one_by_one = Runner(ramdocs, llm=LLMConfig(cache_mode="off")).run(q, names, sequential=True)
    assert [without_timings(together[m]) for m in names] == [without_timings(one_by_one[m]) for m in names]


def test_results_arrive_as_methods_finish(extra_methods, ramdocs):
    with scripted({"closed_book": "x", "keyword_answer": "y"}):
        runner = Runner(ramdocs, llm=LLMConfig(model="scripted/t", cache_mode="off"))
        seen = [r.method for r in runner.run_iter(ramdocs.question("@1"), ["vanilla_rag", "diamond", "broken"])]
    assert sorted(seen) == ["broken", "diamond", "vanilla_rag"]


def test_support_defaults_to_documents_stating_the_answer(ramdocs):
    result = Runner(ramdocs, llm=LLMConfig(cache_mode="off")).run(ramdocs.question("@1"), ["vanilla_rag"])
    assert result["vanilla_rag"].support == {"3,559": ["ramdocs-0001-d1", "ramdocs-0001-d2"]}


def test_structured_methods_report_the_documents_their_answer_rests_on(ramdocs):
    q = ramdocs.question("@7")  # Death at a Funeral: correct, misinformation and noise documents
    results = Runner(ramdocs, llm=LLMConfig(cache_mode="off")).run(q, ["ra_rag", "madam"])
    madam = results["madam"]
    assert madam.support == {s.answer: s.documents for s in madam.trace.support}
    ra = results["ra_rag"]
    voters = [s for s in ra.trace.sources if s.filtered_answer and ra.answers
              and s.cluster == next(x.cluster for x in ra.trace.sources if x.filtered_answer == ra.answers[0])]
    assert ra.support == {ra.answers[0]: [d for s in voters for d in s.documents]}
    assert all(ids for ids in ra.support.values())


def test_stage1_cache_key_tells_endpoints_apart_without_storing_them():
    ds = load_dataset(SAMPLE_DATA / "multisource")
    key = lambda base: Runner(ds, llm=LLMConfig(model="openai/m", api_base=base, cache_mode="off")).prepare_key("ra_rag")  # noqa: E731
    a, b, none = key("http://a:8000/v1"), key("http://b:8000/v1"), key(None)
    assert len({a, b, none}) == 3 and "http://" not in a
