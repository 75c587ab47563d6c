"""The runner: concurrency, containment, equality with sequential runs, call graph and critical path."""

import asyncio
import uuid

import pytest

from backend.methods import MethodSpec, register, unregister
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


def registered(*classes: type[Method]):
    """Register test methods (one ``MethodSpec`` each, as a real method does) for one test, then remove them."""
    for cls in classes:
        register(MethodSpec(cls, BaselineTrace, title=cls.name, description="a test method", color="#000000"))
    return [cls.name for cls in classes]


@pytest.fixture
def extra_methods():
    yield registered(Diamond, Broken)
    for name in ("diamond", "broken"):
        unregister(name)


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


# --- dataset-level preparation through the Method hooks (the runner names no method) ----------------------------

from pydantic import BaseModel  # noqa: E402


class ToyArtefact(BaseModel):
    questions: int
    key: str = ""


class Prepared(Method):
    """Answers with the number of questions its preparation counted; preparing makes one model call."""

    name = "prepared_toy"
    steps = ("answer", "prepare")
    prepared_type = ToyArtefact
    prepared_folder = "toy"
    prepare_label = "toy preparation"
    computed = 0
    fail = False

    def prepare_key(self, dataset, ctx):
        return "k-" + "-".join(q.id for q in dataset.questions)[:40]

    async def prepare(self, dataset, ctx, on_progress=None):
        type(self).computed += 1
        await asyncio.sleep(0.05)  # long enough for concurrent questions to ask at the same time
        if type(self).fail:
            raise RuntimeError("no luck")
        await ctx.client.acomplete([{"role": "user", "content": "prepare"}], task="ping", step="prepare",
                                   question="-")
        if on_progress:
            on_progress(1, 1)
        return ToyArtefact(questions=len(dataset.questions), key=self.prepare_key(dataset, ctx))

    async def _run(self, question, ctx):
        assert isinstance(ctx.prepared, ToyArtefact)
        return Outcome([str(ctx.prepared.questions)], False, BaselineTrace(evidence_mode="none"))


@pytest.fixture
def toy(monkeypatch):
    registered(Prepared)
    monkeypatch.setattr(Prepared, "computed", 0)
    monkeypatch.setattr(Prepared, "fail", False)
    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    # a name of its own per test: an id() is reused once its object is freed, and a later test would then find the
    # artefact an earlier one left on disk (seen in CI: computed 0 times)
    yield ds.model_copy(update={"name": f"toy-{uuid.uuid4().hex}", "questions": ds.questions[:3]})
    unregister(Prepared.name)


def test_preparation_runs_once_is_cached_on_disk_and_reported_apart(toy):
    runner = Runner(toy, llm=LLMConfig(cache_mode="off"))
    first = runner.run(toy.questions[0], [Prepared.name, "no_rag"])
    assert first[Prepared.name].answers == ["3"] and Prepared.computed == 1
    prep = first[Prepared.name].preparation
    assert (prep.label, prep.calls, prep.reused) == ("toy preparation", 1, False)
    assert first["no_rag"].preparation is None
    assert all(c.question_id == toy.questions[0].id for c in first[Prepared.name].calls)  # stage calls apart
    again = runner.run(toy.questions[1], [Prepared.name])[Prepared.name]
    assert Prepared.computed == 1 and again.preparation.reused and again.preparation.calls == 1
    fresh = Runner(toy, llm=LLMConfig(cache_mode="off"))  # a new process: the artefact comes from disk
    assert fresh.prepared(Prepared.name) == ToyArtefact(questions=3, key=fresh.prepare_key(Prepared.name))
    assert fresh.run(toy.questions[2], [Prepared.name])[Prepared.name].answers == ["3"] and Prepared.computed == 1


def test_concurrent_questions_share_one_preparation(toy):
    runner = Runner(toy, llm=LLMConfig(cache_mode="off"))

    async def all_three():
        return await asyncio.gather(*(runner.arun(q, [Prepared.name]) for q in toy.questions))

    results = asyncio.run(all_three())
    assert Prepared.computed == 1 and all(r[Prepared.name].answers == ["3"] for r in results)


def test_a_failing_preparation_is_that_methods_error_only(toy, monkeypatch):
    monkeypatch.setattr(Prepared, "fail", True)
    results = Runner(toy, llm=LLMConfig(cache_mode="off")).run(toy.questions[0], [Prepared.name, "no_rag"])
    assert results[Prepared.name].error == "toy preparation failed: no luck"
    assert results["no_rag"].error is None


def test_an_index_that_cannot_be_opened_is_that_methods_error_only(ramdocs, monkeypatch):
    """BRIDGE searches the index in every evidence mode: when the index cannot be opened, BRIDGE reports it and the
    methods that need no index still answer."""
    from backend.retrieval import RetrievalError

    def broken(self):
        raise RetrievalError("/x/index: cannot open the retrieval index: boom")

    monkeypatch.setattr(Runner, "retriever", broken)
    runner = Runner(ramdocs, llm=LLMConfig(cache_mode="off"))
    results = runner.run(ramdocs.question("@1"), ["bridge", "vanilla_rag"])
    assert results["bridge"].error == "/x/index: cannot open the retrieval index: boom"
    assert results["vanilla_rag"].error is None and results["vanilla_rag"].answers == ["3,559"]


def test_prepare_all_in_two_threads_computes_once_and_reports_its_stage(toy):
    """Two threads (two app sessions, two runs) preparing the same artefact on one runner, and a second runner of
    the same settings: one computation; each caller that computed sees the stage's progress."""
    import threading

    runner = Runner(toy, llm=LLMConfig(cache_mode="off"))
    seen: list[tuple[str, int, int, str]] = []
    failures: list[dict] = []
    start = threading.Barrier(3)

    def prepare(run):
        start.wait()
        failures.append(run.prepare_all([Prepared.name, "no_rag", Prepared.name], on_progress=lambda *a: seen.append(a)))

    threads = [threading.Thread(target=prepare, args=(r,))
               for r in (runner, runner, Runner(toy, llm=LLMConfig(cache_mode="off")))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert Prepared.computed == 1 and failures == [{}, {}, {}]
    assert seen == [("toy preparation", 1, 1, "call")]  # only the computing caller reports progress
    assert runner.prepared(Prepared.name) == ToyArtefact(questions=3, key=runner.prepare_key(Prepared.name))
    assert runner.prepare_all([Prepared.name], on_progress=lambda *a: seen.append(a)) == {}
    assert Prepared.computed == 1 and len(seen) == 1  # done: nothing to report


def test_prepare_all_returns_each_failure_and_leaves_the_run_to_report_it(toy, monkeypatch):
    monkeypatch.setattr(Prepared, "fail", True)
    runner = Runner(toy, llm=LLMConfig(cache_mode="off"))
    assert runner.prepare_all([Prepared.name, "no_rag"]) == {Prepared.name: "no luck"}
    assert runner.run(toy.questions[0], [Prepared.name])[Prepared.name].error == "toy preparation failed: no luck"
    for q in toy.questions:  # a batch after its failed preparation: each question reports it, none tries again
        assert runner.run(q, [Prepared.name])[Prepared.name].error == "toy preparation failed: no luck"
    assert Prepared.computed == 1
    monkeypatch.setattr(Prepared, "fail", False)
    assert runner.prepare_all([Prepared.name]) == {} and Prepared.computed == 2  # the next batch tries again
    assert runner.run(toy.questions[0], [Prepared.name])[Prepared.name].answers == ["3"]


def test_a_replay_never_waits_on_a_live_preparation(toy, tmp_path, monkeypatch):
    """A page's replay (reply cache only) while a live stage 1 of the same artefact runs: the replay fails on its own
    cache miss at once instead of waiting for the live computation, and the live one is not handed the miss."""
    import threading

    from backend.llm.cache import CallCache

    gate, started = threading.Event(), threading.Event()
    real = Prepared.prepare

    async def slow(self, dataset, ctx, on_progress=None):
        if ctx.client.config.cache_mode == "live":  # the live stage 1 holds until the replay is done
            started.set()
            await asyncio.get_running_loop().run_in_executor(None, gate.wait, 60)
        return await real(self, dataset, ctx, on_progress)

    monkeypatch.setattr(Prepared, "prepare", slow)
    cache = CallCache(tmp_path / "cache")
    live = Runner(toy, llm=LLMConfig(cache_mode="live"), cache=cache)
    replay = Runner(toy, llm=LLMConfig(cache_mode="replay"), cache=cache)
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(live.prepare_all([Prepared.name])))
    worker.start()
    assert started.wait(30)
    assert replay.prepare_all([Prepared.name]) != {}  # its own miss, not a wait
    assert worker.is_alive()  # the live computation still runs, untouched
    gate.set()
    worker.join(30)
    assert outcome == [{}] and live.prepared(Prepared.name) is not None


def test_closed_book_never_waits_for_the_index_it_does_not_read(ramdocs):
    """In retrieve mode every method that reads evidence searches the index, and waits for its build; closed book
    reads none, so it is ready at once (it was listed as waiting for the build)."""
    runner = Runner(ramdocs, llm=LLMConfig(cache_mode="off"), evidence_mode="retrieve")
    assert not runner.needs_index("no_rag") and runner.needs_index("vanilla_rag") and runner.needs_index("bridge")
    assert runner.pending(["no_rag", "vanilla_rag"]) == ["vanilla_rag"]  # no index opened or built yet
    given = Runner(ramdocs, llm=LLMConfig(cache_mode="off"))
    assert not given.needs_index("no_rag") and not given.needs_index("vanilla_rag") and given.needs_index("bridge")


def test_an_index_build_is_published_and_a_second_builder_waits_for_the_first(monkeypatch):
    """``build_published`` (the Dataset page's build and every run's): the build shows as a step under the index's key
    while it runs, with its progress; a second caller while it runs waits for it and builds nothing itself."""
    import threading

    from backend import steps
    from backend.runner import build_published, index_step

    class Index:
        location, collection_name = "/tmp/fake-index", "docs"

        def __init__(self):
            self.builds, self.started, self.release, self.seen = 0, threading.Event(), threading.Event(), []

        def build(self, on_progress=None):
            self.builds += 1
            stage = steps.current(index_step(self))
            self.seen.append(stage.label if stage else None)
            on_progress(1, 2)
            self.started.set()
            assert self.release.wait(30)
            on_progress(2, 2)

    index, bars = Index(), []
    first = threading.Thread(target=build_published, args=(index, "Embedding documents", lambda: index.builds > 0,
                                                           lambda done, total: bars.append((done, total))))
    first.start()
    assert index.started.wait(30)
    assert steps.current(index_step(Index())).fraction == 0.5  # another object over the same index sees it
    looked, look = threading.Event(), steps.current

    def current(key):  # the second caller has seen the build in progress (then it waits for its end)
        found = look(key)
        if threading.current_thread() is second and found is not None:
            looked.set()
        return found

    monkeypatch.setattr(steps, "current", current)
    second = threading.Thread(target=build_published, args=(index, "Embedding documents", lambda: True))
    second.start()
    assert looked.wait(30)
    index.release.set()
    first.join(30)
    second.join(30)
    assert (index.builds, index.seen, bars) == (1, ["Embedding documents"], [(1, 2), (2, 2)])
    assert steps.current(index_step(index)) is None  # over: unpublished
