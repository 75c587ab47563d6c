"""Cost before and after a run (issue 25 §6): each method's estimate follows its call pattern (MADAM-RAG's grows with
the square of the documents; a scripted debate sends exactly what its estimate says), estimates are priced from
litellm's map, the CLI's gate asks or refuses, and ``evaluate(max_cost=...)`` stops cleanly at a real spending limit
(a priced model registered here, served by serve-model over HTTP) and resumes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import litellm
import pytest

from backend.cost import Budget, estimate_run, gate
from backend.evaluate import EvaluationError, evaluate, load_results
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.llm.server import running_server
from backend.methods import SPECS
from backend.methods.estimate import Sizes
from backend.methods.madam import EXAMPLE_AGGREGATION, EXAMPLE_TURNS, MadamRAG
from backend.methods.madam import estimate as madam_estimate
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import Dataset, Document, Question
from tests.conftest import ROOT

PRICED = "openai/test-priced"
PER_PROMPT, PER_COMPLETION = 1e-6, 2e-6


@pytest.fixture(scope="module", autouse=True)
def priced_model():
    litellm.register_model({PRICED: {"input_cost_per_token": PER_PROMPT, "output_cost_per_token": PER_COMPLETION,
                                     "litellm_provider": "openai", "mode": "chat"}})


def _question(n: int, words: int = 100) -> Question:
    return Question(id="q", question="What is the population of Broken Bow?",
                    documents=[Document(id=f"d{i}", text=" ".join(["census"] * words)) for i in range(n)])


# --- MADAM-RAG: the square of the documents ------------------------------------------------------------------------

def test_madam_on_2000_documents_shows_4001_to_6003_calls_and_a_quadratic_number_of_tokens():
    est = madam_estimate(MadamRAG(), _question(2000), Sizes())
    assert (est.calls_min, est.calls, est.upper_bound) == (4001, 6003, True)  # stop at round 2 .. all 3 rounds
    sure = sum(s.prompt_tokens + s.completion_tokens for s in est.steps if not s.conditional)
    # round 2 alone: 2,000 prompts, each carrying the other 1,999 agents' replies
    assert sure > 100_000_000 and est.prompt_tokens + est.completion_tokens > 2 * 100_000_000
    half = madam_estimate(MadamRAG(), _question(1000), Sizes())
    round2 = {n: next(s.prompt_tokens for s in e.steps if s.step == "debate_round_2") for n, e in ((2000, est),
                                                                                                     (1000, half))}
    assert 3.9 < round2[2000] / round2[1000] < 4.1
    assert any("4,001 calls" in note for note in est.notes)


def test_a_scripted_debate_sends_exactly_what_its_estimate_says():
    """Replies as long as the estimate assumes (the paper's App. E examples): every agent keeps its answer, so the
    debate stops at round 2, and the calls and tokens sent are the estimate's steps that always happen."""
    turn_words = round(sum(len(t.split()) for t in EXAMPLE_TURNS) / len(EXAMPLE_TURNS))
    turn = "Answer: Haldane. Explanation:" + " because" * (turn_words - 3)
    aggregation = 'All Correct Answers: ["Haldane"]. Explanation:' + " because" * (len(EXAMPLE_AGGREGATION.split()) - 5)
    question = _question(4, words=30)
    dataset = Dataset(name="toy", path="toy.jsonl", questions=[question])
    runner = Runner(dataset, llm=LLMConfig(model="scripted/debater", cache_mode="off"))
    est = estimate_run(runner, [question], ["madam"]).methods["madam"]
    with scripted({"debate_turn": turn, "aggregate": aggregation}):
        result = runner.run(question, ["madam"])["madam"]
    assert result.error is None and result.trace.stop_reason == "converged"
    sure = [s for s in est.steps if not s.conditional]
    assert len(result.calls) == est.calls_min == sum(s.calls for s in sure) == 9
    assert sum(c.prompt_tokens for c in result.calls) == sum(s.prompt_tokens for s in sure)
    assert sum(c.completion_tokens for c in result.calls) == sum(s.completion_tokens for s in sure)


# --- priced, free, unknown; the gate ------------------------------------------------------------------------------

def _estimate(dataset: Dataset, model: str, api_base: str | None = None, methods=None):
    runner = Runner(dataset, llm=LLMConfig(model=model, api_base=api_base))
    return estimate_run(runner, dataset.questions[:1], methods or list(SPECS))


def test_an_estimate_is_priced_from_litellms_map_free_offline_and_unknown_otherwise(ramdocs):
    priced = _estimate(ramdocs, PRICED, "http://127.0.0.1:9/v1")
    assert set(priced.methods) == set(SPECS) and all(m.estimated and m.calls for m in priced.methods.values())
    for m in priced.methods.values():
        assert m.cost_usd == pytest.approx(m.prompt_tokens * PER_PROMPT + m.completion_tokens * PER_COMPLETION)
        assert m.ceiling_usd >= m.cost_usd and m.calls_min <= m.calls
    assert priced.cost_usd == pytest.approx(sum(m.cost_usd for m in priced.methods.values())) and priced.priced
    offline = _estimate(ramdocs, "offline/reader")
    assert offline.free and offline.cost_usd == 0 and "$0" in offline.headline() and "offline" in offline.price_note
    assert offline.calls == priced.calls and not offline.needs_confirmation(0.0)
    unknown = _estimate(ramdocs, "openai/reader", "http://127.0.0.1:9/v1")
    assert unknown.cost_usd is None and "price unknown" in unknown.headline() and unknown.needs_confirmation(100.0)
    assert priced.needs_confirmation(0.0) and not priced.needs_confirmation(priced.cost_usd + 0.01)


def test_the_gate_asks_at_a_terminal_refuses_a_script_over_the_threshold_and_keeps_a_max_cost(ramdocs):
    priced = _estimate(ramdocs, PRICED, "http://127.0.0.1:9/v1")
    cost = priced.cost_usd
    assert gate(priced, threshold_usd=cost / 2, interactive=True)[0] == "ask"
    assert gate(priced, threshold_usd=cost / 2)[0] == "refuse"
    assert gate(priced, threshold_usd=cost / 2, yes=True)[0] == "go"
    assert gate(priced, threshold_usd=cost * 2)[0] == "go"
    assert gate(priced, max_cost=cost / 2)[0] == "refuse"                       # one question cannot stop midway
    assert gate(priced, max_cost=cost / 2, stops_at_limit=True)[0] == "go"      # a batch stops at the limit
    unknown = _estimate(ramdocs, "openai/reader", "http://127.0.0.1:9/v1")
    assert gate(unknown, max_cost=1.0)[0] == "refuse" and gate(unknown, interactive=True)[0] == "ask"
    assert gate(_estimate(ramdocs, "offline/reader"), threshold_usd=0.0)[0] == "go"


# --- evaluate --max-cost: a real limit, over HTTP ---------------------------------------------------------------

def test_evaluate_stops_cleanly_at_the_cost_limit_and_resume_continues(ramdocs, tmp_path):
    questions, methods = ramdocs.questions[:5], ["no_rag", "vanilla_rag"]
    with running_server(model_name="test-priced") as srv:
        runner = Runner(ramdocs, llm=LLMConfig(model=PRICED, api_base=srv.base_url, cache_mode="off", timeout_s=30),
                        api_key="sk-test-0123456789")
        first = evaluate(runner, questions[:1], methods, tmp_path / "probe")
        per_question = first["cost_usd"]
        assert per_question > 0 and first["stopped"] is None
        out = tmp_path / "run"
        # one question at a time: the limit is reached during the second, so the third never starts
        stopped = evaluate(runner, questions, methods, out, concurrency=1, max_cost=per_question * 1.5)
        rows, _ = load_results(out / "results.jsonl")
        assert not stopped["complete"] and "cost limit" in stopped["stopped"] and "3 questions not started" in \
            stopped["stopped"]
        assert {q for q, _ in rows} == {q.id for q in questions[:2]} and len(rows) == 4
        assert stopped["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in stopped["methods"].values()))
        assert stopped["cost_usd"] >= per_question * 1.5
        written = json.loads((out / "summary.json").read_text())
        assert written["stopped"] == stopped["stopped"] and written["cost_usd"] == stopped["cost_usd"]
        before = srv.stats["requests"]
        resumed = evaluate(runner, questions, methods, out, resume=True)
        assert resumed["complete"] and resumed["stopped"] is None
        assert srv.stats["requests"] - before == 3 * len(methods)      # only the pairs without a row
    assert resumed["cost_usd"] == pytest.approx(per_question * 5, rel=0.5)
    unknown = Runner(ramdocs, llm=LLMConfig(model="openai/reader", api_base="http://127.0.0.1:9/v1"))
    with pytest.raises(EvaluationError, match="price of openai/reader is unknown"):
        evaluate(unknown, questions, methods, tmp_path / "never", max_cost=1.0)
    with pytest.raises(ValueError):
        Budget(-1)


# --- the command line: the estimate before anything is sent ------------------------------------------------------

def _cli(*args: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "backend", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "OPENAI_API_KEY": "sk-cli-FAKE-0123456789", **env}, timeout=600)


def test_the_cli_prints_the_estimate_first_and_max_cost_governs(tmp_path):
    """gpt-4o-mini (priced in litellm's bundled map) served by serve-model under that name: real prices, no network."""
    common = ["--dataset", str(SAMPLE_DATA / "ramdocs_dev"), "--methods", "no_rag,vanilla_rag",
              "--model", "openai/gpt-4o-mini", "--cache-dir", str(tmp_path / "cache")]
    with running_server(model_name="gpt-4o-mini") as srv:
        refused = _cli("inspect", "--question", "@1", *common, "--api-base", srv.base_url, "--max-cost", "0.000001")
        assert refused.returncode == 2 and srv.stats["requests"] == 0, refused.stderr
        assert "Estimate: 2 model calls" in refused.stderr and "above --max-cost" in refused.stderr
        assert "$0.15 per million prompt tokens" in refused.stderr
        sent = _cli("inspect", "--question", "@1", *common, "--api-base", srv.base_url, "--yes", "--json")
        assert sent.returncode == 0 and srv.stats["requests"] == 2, sent.stderr
        costs = [c["cost_usd"] for r in json.loads(sent.stdout)["results"].values() for c in r["calls"]]
        assert len(costs) == 2 and all(c > 0 for c in costs)
        out = tmp_path / "eval"
        stopped = _cli("evaluate", *common, "--api-base", srv.base_url, "--out", str(out), "--limit", "4",
                       "--concurrency", "1", "--cache-mode", "off", "--max-cost", "0.00001")
        summary = json.loads((out / "summary.json").read_text())
        assert stopped.returncode == 1 and "cost limit" in summary["stopped"] and summary["cost_usd"] > 0
        rows = (out / "results.jsonl").read_text().splitlines()
        assert "cost limit" in stopped.stderr and 0 < len(rows) < 4 * 2       # rows kept; --resume runs the rest


# --- a local model (llama.cpp on this CPU): $0, and the time at the speeds measured on this machine ---------------

#: One llama.cpp reply's ``timings``: 100 prompt tokens/s, 10 generated tokens/s (enough tokens to count as a sample).
TIMINGS = {"prompt_n": 200, "prompt_per_second": 100.0, "predicted_n": 40, "predicted_per_second": 10.0}


@pytest.fixture
def local_model(tmp_path, monkeypatch):
    """``local/tiny``: a file that starts like a GGUF in a models folder of its own, and a cache folder of its own
    (no speeds measured yet). Nothing is served: an estimate needs only the weights' hash."""
    from backend.llm.local.weights import MODELS_DIR_ENV

    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.gguf").write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setenv(MODELS_DIR_ENV, str(models))
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return "local/tiny"


def test_a_local_models_estimate_is_free_and_gives_its_time_at_the_measured_speeds(ramdocs, local_model):
    from backend.cost import NOT_MEASURED
    from backend.llm.local import throughput
    from backend.llm.pricing import LOCAL_NOTE

    methods = ["no_rag", "vanilla_rag", "madam"]
    before = _estimate(ramdocs, local_model, methods=methods)
    assert before.local and before.free and before.cost_usd == 0 and not before.needs_confirmation(0.0)
    assert before.price_note == LOCAL_NOTE and "this CPU" in before.price_note and "offline" not in before.price_note
    assert before.speed is None and before.seconds is None and before.unavailable is None
    assert NOT_MEASURED in before.headline() and "not measured yet" in before.time_note()
    assert all(m.seconds is None for m in before.methods.values())
    assert gate(before, threshold_usd=0.0)[0] == "go"

    digest = LLMConfig(model=local_model).identity.rpartition("#")[2]  # what the client records the speeds under
    throughput.record(digest, TIMINGS)
    after = _estimate(ramdocs, local_model, methods=methods)
    assert after.speed.startswith("100 prompt and 10 generated tokens/s, measured on this machine")
    for m in after.methods.values():  # prompt tokens / prompt speed + completion tokens / generation speed
        assert m.seconds == pytest.approx(m.prompt_tokens / 100 + m.completion_tokens / 10)
        assert m.seconds_max >= m.seconds
    assert after.seconds == pytest.approx(sum(m.seconds for m in after.methods.values()))
    assert after.seconds_max > after.seconds  # MADAM-RAG's debate may run its every round, at every token limit
    assert "at measured speeds" in after.headline() and NOT_MEASURED not in after.headline()
    text = "\n".join(after.lines())
    assert "100 prompt and 10 generated tokens/s" in text and "this CPU" in text
    assert all(f"{name}: " in text and ", ~" in text for name in methods)

    # counted with a real tokenizer (litellm's default), not the offline reader's word count: SmolLM2 reports tokens
    offline = _estimate(ramdocs, "offline/reader", methods=methods)
    assert after.methods["vanilla_rag"].prompt_tokens > offline.methods["vanilla_rag"].prompt_tokens


def test_a_local_model_without_its_weights_says_so_in_its_estimate(ramdocs, local_model):
    missing = _estimate(ramdocs, "local/absent", methods=["no_rag"])
    assert missing.local and missing.seconds is None and "no GGUF named 'absent'" in missing.unavailable
    assert "cannot run: no GGUF named 'absent'" in missing.headline() and not missing.time_note()


def test_estimated_durations_read_as_precisely_as_an_estimate_is():
    from backend.cost import seconds_text

    assert [seconds_text(s) for s in (0.2, 3.4, 23, 61, 250, 4000)] == ["< 1 s", "3 s", "25 s", "1 min", "4 min",
                                                                         "1 h 07 min"]
