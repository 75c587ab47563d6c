"""``python -m backend serve-model``: the OpenAI-compatible offline server, driven through the real
litellm HTTP path (``openai/reader`` + ``api_base``) by ``LLMClient``: success, retries, timeouts,
garbage replies, task fields, API-key hygiene and concurrency."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from backend.llm.client import LLMClient, LLMConfig, LLMError, default_cache
from backend.llm.formats import IDK, Parsed, parse_short_answer
from backend.llm.server import ServerSettings, decide, garbage_text, is_loopback, running_server, serve, warm_up

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-not-a-real-key-123456"
SECRET = "sk-fake-SECRET-0123456789abcdef"


@pytest.fixture(scope="module", autouse=True)
def _warm_reader():
    """Load the reader's embedding model once, so timings below measure the server, not the load."""
    warm_up()


def client(srv, key: str = KEY, **cfg) -> LLMClient:
    base = dict(model="openai/reader", api_base=srv.base_url if srv else None, cache_mode="off", timeout_s=10,
                num_retries=0, backoff_s=0.01)
    return LLMClient(LLMConfig(**(base | cfg)), api_key=key, cache=cfg.pop("cache", None))


def ask(c: LLMClient, context: str, question: str, **kw):
    prompt = f"Context: {context}\nQuestion: {question}"
    return c.complete([{"role": "user", "content": prompt}], task="keyword_answer", step="answer",
                      question=question, **kw)


# -- 1. plain success -----------------------------------------------------------------------------------

def test_plain_success_extracts_the_answer():
    with running_server() as srv:
        c = client(srv)
        call = ask(c, "The Velmora Bridge was designed by Ingrid Haldane and opened in 1931.",
                   "Who designed the Velmora Bridge?")
        assert call.response == "Ingrid Haldane"
        assert call.error is None and call.attempts == 1 and not call.cache_hit
        assert call.prompt_tokens > 0 and call.completion_tokens == 2
        assert srv.stats["ok"] == 1
        # the other endpoints
        with httpx.Client(base_url=f"http://127.0.0.1:{srv.port}") as h:
            assert h.get("/health").json()["status"] == "ok"
            assert h.get("/v1/models").json()["data"][0]["id"] == "reader"
            r = h.post("/chat/completions", json={"model": "reader", "messages": [
                {"role": "user", "content": "Context: Tarn Ossel is in Norway.\nQuestion: Where is Tarn Ossel?"}]})
            body = r.json()
            assert r.status_code == 200 and body["object"] == "chat.completion"
            assert body["choices"][0]["message"] == {"role": "assistant", "content": "Norway"}
            assert body["choices"][0]["finish_reason"] == "stop"
            assert body["usage"] == {"prompt_tokens": 11, "completion_tokens": 1, "total_tokens": 12}
            assert h.post("/v1/chat/completions", content=b"{not json").status_code == 400
            assert h.post("/v1/chat/completions", json={"messages": []}).status_code == 400
            bad = h.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}],
                                                        "conflictlens_task": {"task": "closed_book", "question": "x",
                                                                              "gold_answers": ["y"]}})
            assert bad.status_code == 400 and "ground-truth" in bad.json()["error"]["message"]


# -- 2. retries then success --------------------------------------------------------------------------------

def test_retries_then_success_and_retries_exhausted():
    question = "Which river flows through Quenby Hollow?"
    context = "The river Asterlin flows through Quenby Hollow."
    with running_server(fail_first=2) as srv:  # 429, then 500, then fine
        c = client(srv, num_retries=2)
        call = ask(c, context, question)
        assert call.response == "Asterlin" and call.attempts == 3 and call.error is None
        assert srv.stats["requests"] == 3 and srv.stats["fail"] == 2
    with running_server(fail_first=2) as srv:
        c = client(srv, num_retries=1)
        with pytest.raises(LLMError) as info:
            ask(c, context, question)
        assert info.value.kind in ("rate_limit", "server")
        assert info.value.kind == "server"  # the second answer is the 500
        assert "injected by serve-model" in info.value.message
        (failed,) = c.calls
        assert failed.error and failed.error.startswith("server:") and failed.response is None
        assert failed.attempts == 2 and info.value.call is failed
        assert srv.stats["requests"] == 2
    with running_server(fail_first=1) as srv:  # a 429 with no retries left is a rate_limit error
        with pytest.raises(LLMError) as info:
            ask(client(srv, num_retries=0), context, question)
        assert info.value.kind == "rate_limit"


# -- 3. timeout ------------------------------------------------------------------------------------------

def test_hanging_server_times_out_within_bound():
    with running_server(hang_rate=1.0) as srv:
        c = client(srv, timeout_s=1, num_retries=1)
        start = time.perf_counter()
        with pytest.raises(LLMError) as info:
            ask(c, "Mirefield lies north of Dunlow.", "What lies north of Dunlow?")
        elapsed = time.perf_counter() - start
        assert info.value.kind == "timeout"
        assert 2.0 <= elapsed < 1 * 2 + 0.01 * 2 + 3, elapsed
        assert c.calls[0].attempts == 2 and c.calls[0].error.startswith("timeout:")
        assert srv.stats["hang"] == 2

        async def one():
            c2 = client(srv, timeout_s=1, num_retries=0)
            return await c2.acomplete([{"role": "user", "content": "Question: Where is Brask Fen?"}],
                                      task="keyword_answer", step="answer", question="Where is Brask Fen?")

        start = time.perf_counter()
        with pytest.raises(LLMError) as info:
            asyncio.run(one())
        assert info.value.kind == "timeout" and time.perf_counter() - start < 1 + 3
        stop_start = time.perf_counter()
    # the hung requests end when their clients go away, so shutdown is quick
    assert time.perf_counter() - stop_start < 3


# -- 4. garbage ------------------------------------------------------------------------------------------

def test_garbage_reply_reaches_the_caller():
    with running_server(garbage_rate=1.0, seed=7) as srv:
        c = client(srv)
        call = ask(c, "Olvar Penn wrote The Salt Ledger.", "Who wrote The Salt Ledger?")
        assert isinstance(call.response, str) and call.response == garbage_text(7, 0)
        assert call.response != "Olvar Penn" and call.error is None
        parsed = parse_short_answer(call.response)
        assert isinstance(parsed, Parsed)
        assert srv.stats["garbage"] == 1


# -- 5. task fields ---------------------------------------------------------------------------------------

def test_task_fields_reach_the_offline_model():
    question = "Who founded the Brindlewick Observatory?"
    memory = "The Brindlewick Observatory was founded by Tamsin Greaves in 1872."
    messages = [{"role": "user", "content": f"Answer from memory.\nQuestion: {question}"}]
    with running_server() as srv:
        plain = client(srv).complete(messages, task="closed_book", step="answer", question=question,
                                     fields={"memory": memory})
        assert plain.response == IDK  # the bare prompt has no context
        with_fields = client(srv, send_task_fields=True).complete(messages, task="closed_book", step="answer",
                                                                  question=question, fields={"memory": memory})
        assert with_fields.response == "Tamsin Greaves"


# -- 6. API keys are never written -----------------------------------------------------------------------

def test_api_key_never_written(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    cache = default_cache(tmp_path / "cache")
    with running_server(fail_first=1) as srv:
        c = client(srv, key=SECRET, cache_mode="live", num_retries=1, cache=cache)
        first = ask(c, "The Corvane Lighthouse stands on Hesk Island.", "Where does the Corvane Lighthouse stand?")
        again = ask(c, "The Corvane Lighthouse stands on Hesk Island.", "Where does the Corvane Lighthouse stand?")
        assert first.response == "Hesk Island" and first.attempts == 2 and again.cache_hit
        env_only = client(srv, key=None, cache_mode="live", cache=cache)  # key from the environment
        assert ask(env_only, "Pell Rowan painted Grey Harbour.", "Who painted Grey Harbour?").response == "Pell Rowan"

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    dead = LLMClient(LLMConfig(model="openai/reader", api_base=f"http://127.0.0.1:{closed}/v1", cache_mode="live",
                               timeout_s=2, num_retries=1, backoff_s=0.01), cache=cache, api_key=SECRET)
    with pytest.raises(LLMError) as info:
        ask(dead, "Nothing here.", "Is anyone listening on the closed port?")
    err = info.value
    assert err.kind == "connection"
    for text in (str(err), err.message, repr(err), err.call.error, err.call.model_dump_json()):
        assert SECRET not in text and "SECRET" not in text

    calls = c.calls + env_only.calls + dead.calls
    (tmp_path / "calls.json").write_text("[" + ",".join(call.model_dump_json() for call in calls) + "]")
    cache.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in files) and any(p.name == "calls.json" for p in files)
    for path in files:
        data = path.read_bytes()
        assert SECRET.encode() not in data, path
        assert b"SECRET-0123456789" not in data, path


# -- 7. concurrency ---------------------------------------------------------------------------------------

def _gather(srv, concurrency: int, n: int, tag: str) -> float:
    c = client(srv, concurrency=concurrency)

    async def main() -> float:
        await c.acomplete([{"role": "user", "content": f"Context: Warm {tag} is warm.\nQuestion: What is warm?"}],
                          task="keyword_answer", step="warm", question="What is warm?")
        start = time.perf_counter()
        calls = await asyncio.gather(*[
            c.acomplete([{"role": "user", "content": f"Context: Station {tag}{i} is run by Ada Quill{i}.\n"
                                                     f"Question: Who runs Station {tag}{i}?"}],
                        task="keyword_answer", step=f"q{i}", question=f"Who runs Station {tag}{i}?")
            for i in range(n)])
        elapsed = time.perf_counter() - start
        assert all(call.error is None and call.response for call in calls)
        return elapsed

    return asyncio.run(main())


def test_concurrency_limit_and_overlap():
    latency = 0.3
    with running_server(latency_ms=latency * 1000) as srv:
        parallel = _gather(srv, 4, 8, "p")
        sequential = _gather(srv, 1, 8, "s")
    assert parallel < 5 * latency, parallel
    assert sequential >= 8 * latency, sequential


# -- faults are deterministic; CLI ------------------------------------------------------------------------

def test_fault_decisions_are_deterministic():
    s = ServerSettings(fail_rate=0.3, hang_rate=0.1, garbage_rate=0.2, seed=3)
    first = [decide(s, n) for n in range(2000)]
    assert first == [decide(s, n) for n in range(2000)]
    assert first != [decide(ServerSettings(fail_rate=0.3, hang_rate=0.1, garbage_rate=0.2, seed=4), n)
                     for n in range(2000)]
    kinds = [f.kind for f in first]
    assert 0.25 < kinds.count("fail") / 2000 < 0.35
    assert {f.status for f in first if f.kind == "fail"} == {429, 500}
    assert [decide(ServerSettings(fail_first=3), n).status for n in range(4)] == [429, 500, 429, 200]
    assert garbage_text(1, 5) == garbage_text(1, 5) != garbage_text(1, 6)
    with pytest.raises(ValueError):
        ServerSettings(fail_rate=1.5)


def test_non_loopback_refused_without_explicit_host():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")
    with pytest.raises(ValueError, match="non-loopback"):
        serve(ServerSettings(host="0.0.0.0", port=0), warmup=False)


def test_cli_serve_model_starts_and_stops():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "backend", "serve-model", "--port", "0", "--no-warmup",
                             "--log-level", "warning", "--fail-first", "1"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "serving offline model as 'reader' at http://127.0.0.1:" in line, line + proc.stderr.read()
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as h:
            assert h.get("/health").json()["settings"]["fail_first"] == 1
            r = h.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]},
                       headers={"Authorization": f"Bearer {SECRET}"})
            assert r.status_code == 429 and r.json()["error"]["type"] == "rate_limit_error"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    assert SECRET not in out + err
    bad = subprocess.run([sys.executable, "-m", "backend", "serve-model", "--port", "0", "--fail-rate", "2"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "fail_rate" in bad.stderr


@pytest.mark.slow
def test_cli_inspect_through_serve_model_by_api_base():
    """The README's worked example for an OpenAI-compatible server (vLLM, Ollama, a LiteLLM proxy): serve-model in one
    process, ``inspect --model openai/reader --api-base http://127.0.0.1:PORT/v1`` in another."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENAI_API_KEY=SECRET)  # the openai client wants a key; any will do
    server = subprocess.Popen([sys.executable, "-m", "backend", "serve-model", "--port", "0", "--log-level", "warning"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert "serving offline model as 'reader' at http://127.0.0.1:" in line, line + server.stderr.read()
        base = line.split(" at ")[1].split()[0].rstrip(".,")
        assert base.endswith("/v1")
        done = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", "sample_data/ramdocs_dev",
                               "--question", "@1", "--methods", "no_rag,vanilla_rag", "--model", "openai/reader",
                               "--api-base", base, "--cache-mode", "off", "--json"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)["results"]
        assert results["vanilla_rag"]["error"] is None and any("3,559" in a for a in results["vanilla_rag"]["answers"])
        calls = [c for r in results.values() for c in r["calls"]]
        assert len(calls) == 2 and {c["model"] for c in calls} == {"openai/reader"}
        with httpx.Client(base_url=base.removesuffix("/v1"), timeout=10) as h:
            assert h.get("/health").json()["stats"]["ok"] == 2  # both calls went over HTTP to the server
    finally:
        server.terminate()
        out, err = server.communicate(timeout=10)
    assert SECRET not in out + err + done.stdout + done.stderr
