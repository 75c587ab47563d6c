"""Issue 36, bounded replies: one long reply from an endpoint an analyst names cannot take the server down.

* A 600 KB reply, served by a real loopback OpenAI-compatible endpoint, runs through RC-RAG (whose ROUGE-L took
  17.9 GB on it) in a child process limited to 1.5 GB of address space; each call is recorded as cut off at the reply
  limit (``client.MAX_REPLY_CHARS``) with its note, and the method gets no reply.
* A body past ``http_limit.MAX_RESPONSE_BYTES`` is refused unread: by its ``Content-Length`` (5 MB), or, streamed
  with none, as soon as the bytes read pass the limit (a 100 MB body stops after a few MB: the endpoint records how
  much it could send); not retried; the limit is scoped to model calls.
* ROUGE-L's two-row LCS gives rouge_score's scores on ordinary inputs, and compares a bounded part of any text.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from backend.answers import MAX_COMPARED_TOKENS, lcs_length, rouge_l_recall, rouge_scorer, rouge_tokens
from backend.llm.cache import CachedReply, CallCache
from backend.llm.client import MAX_REPLY_CHARS, LLMClient, LLMConfig, LLMError
from backend.llm.failures import classify_failure
from backend.llm.http_limit import MAX_RESPONSE_BYTES, ResponseTooLarge, limited
from backend.llm.providers import scripted
from components.calls import cut_off_text, progress_text
from tests.conftest import ROOT
from tests.security.listener import Listener

TYPED = "sk-typed-bounded-replies-0001"
MESSAGES = [{"role": "user", "content": "Reply with the single word: ready"}]

#: RC-RAG on one question against the endpoint in argv[1], in a process that may not map more than 1.5 GB.
RC_RAG_CHILD = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))
    from backend.llm.client import LLMClient, LLMConfig
    from backend.methods.base import RunContext
    from backend.methods.counterfactual import CounterfactualRAG
    from backend.schema import Document, Question

    q = Question(id="q", question="Which team did Jordan play for in 1991?",
                 documents=[Document(id=f"d{i}", text=f"Jordan played for the Bulls ({i}).") for i in range(3)])
    client = LLMClient(LLMConfig(model="openai/m", api_base=sys.argv[1], cache_mode="off", num_retries=0,
                                 timeout_s=60), api_key="sk-typed-bounded-replies-0001")
    result = CounterfactualRAG().run(q, RunContext(client=client.for_method("counterfactual")))
    print(json.dumps({"error": result.error, "calls": [[c.cut_off is not None, len(c.response or ""), c.read_note]
                                                       for c in result.calls]}))
""")


def _long_reply(chars: int) -> str:
    """Short words, as a looping model writes them: the most ROUGE-L tokens per character."""
    words = "to be or no it is so we go up at on by".split()
    return " ".join(words[(i * 7) % len(words)] for i in range(chars // 3 + 1))[:chars]


def test_a_600_kb_reply_runs_rc_rag_under_a_memory_limit_and_is_recorded_cut_off():
    with Listener(reply=_long_reply(600_000)) as srv:
        done = subprocess.run([sys.executable, "-c", RC_RAG_CHILD, srv.base], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["error"] is None and len(out["calls"]) == 3
    for cut, kept, note in out["calls"]:
        assert cut and kept == 0  # the method got no reply
        assert note.startswith(f"cut off at the reply limit of {MAX_REPLY_CHARS:,} characters (600,000 characters "
                               "received): read as no reply")


def test_a_reply_past_the_limit_from_an_in_process_provider_is_cut_off_too_and_a_cached_one_on_its_hit(tmp_path):
    long = "the Chicago Bulls " * (MAX_REPLY_CHARS // 10)
    with scripted({"ping": long}):
        call = LLMClient(LLMConfig(model="scripted/long", cache_mode="off")).complete(
            MESSAGES, task="ping", step="s", question="q")
    assert call.response == "" and call.cut_off == long[:2000] and call.read_status == "unreadable"
    assert call.read_note.startswith(f"cut off at the reply limit of {MAX_REPLY_CHARS:,} characters")
    assert cut_off_text(call).startswith(f"cut off at the reply limit of {MAX_REPLY_CHARS:,} characters (")
    assert progress_text([call]) == "Model calls: 1 done · 1 longer than the reply limit (cut off)"  # not "looping"

    class CachedWhole(CallCache):  # a reply cached whole, before replies were capped
        def get(self, key):
            return CachedReply(long, 3, 1, 0.0)

    hit = LLMClient(LLMConfig(model="scripted/long"), cache=CachedWhole(tmp_path / "c.sqlite")).complete(
        MESSAGES, task="ping", step="s", question="q")
    assert hit.cache_hit and hit.response == "" and hit.cut_off == long[:2000]
    assert hit.read_note.startswith("cut off at the reply limit")


class _Streamer:
    """A loopback endpoint sending an endless chat completion (no Content-Length, ``Connection: close``) in 64 KB
    pieces up to ``total`` bytes; ``sent`` is how many bytes it could write before the client hung up."""

    def __init__(self, total: int) -> None:
        self.sent = 0
        self.finished = threading.Event()
        streamer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("connection", "close")
                self.end_headers()
                head = b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": ' \
                       b'0, "finish_reason": "stop", "message": {"role": "assistant", "content": "'
                piece = b"a" * 65536
                try:
                    self.wfile.write(head)
                    while streamer.sent < total:
                        self.wfile.write(piece)
                        streamer.sent += len(piece)
                    self.wfile.write(b'"}}]}')
                except OSError:  # the client closed the connection: what was sent is recorded
                    pass
                finally:
                    streamer.finished.set()

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_port}/v1"

    def __enter__(self) -> _Streamer:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _client(base: str, retries: int = 2) -> LLMClient:
    return LLMClient(LLMConfig(model="openai/m", api_base=base, cache_mode="off", num_retries=retries, backoff_s=0,
                               timeout_s=60), api_key=TYPED)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_5_mb_body_is_refused_by_its_length_and_not_retried(mode):
    with Listener(reply="x" * 5_000_000) as srv:
        client = _client(srv.base)
        with pytest.raises(LLMError) as err:
            if mode == "sync":
                client.complete(MESSAGES, task="ping", step="s", question="q")
            else:
                asyncio.run(client.acomplete(MESSAGES, task="ping", step="s", question="q"))
        assert len(srv.received()) == 1  # not retried: the same request would only send it again
    assert err.value.kind == "too_large" and err.value.call.attempts == 1
    assert f"larger than the {MAX_RESPONSE_BYTES:,}-byte limit (declared 5,000," in err.value.message
    assert err.value.call.error.startswith("too_large: ")
    failure = classify_failure(str(err.value))  # as a page reads a method's stored error
    assert failure.cause == "too_large" and failure.problem.startswith("the endpoint's response was larger")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_100_mb_body_streamed_without_a_length_is_cut_where_it_passes_the_limit(mode):
    total = 100 * 2**20
    with _Streamer(total) as srv:
        client = _client(srv.base, retries=0)
        with pytest.raises(LLMError) as err:
            if mode == "sync":
                client.complete(MESSAGES, task="ping", step="s", question="q")
            else:
                asyncio.run(client.acomplete(MESSAGES, task="ping", step="s", question="q"))
        assert srv.finished.wait(30)
    assert err.value.kind == "too_large" and "sent more" in err.value.message
    # the limit plus what loopback's socket buffers hold: nowhere near the whole body
    assert srv.sent < total // 4, f"{srv.sent:,} of {total:,} bytes were sent before the client hung up"


def test_the_limit_applies_to_model_calls_only():
    with Listener(reply="x" * (2 * MAX_RESPONSE_BYTES)) as srv:
        assert len(httpx.post(f"{srv.base}/chat/completions", json={}).content) > 2 * MAX_RESPONSE_BYTES
        with limited(), pytest.raises(ResponseTooLarge, match="larger than the"):
            httpx.post(f"{srv.base}/chat/completions", json={})


# --- the scorers: ROUGE-L on a linear-memory LCS and bounded text -------------------------------------------------

ORDINARY = [("Chicago Bulls", "Chicago Bulls"), ("playing for the Chicago Bulls team", "played for Chicago Bulls"),
            ("Bulls", "Chicago Bulls"), ("the 1991 NBA champions, the Chicago Bulls", "Chicago Bulls"),
            ("Los Angeles Lakers", "Chicago Bulls"), ("3,559 people", "3,559"), ("December 21, 1906", "21 December 1906"),
            ("Wolfgang Amadeus Mozart", "Mozart"), ("It was written by George Washington Irving.", "Washington Irving")]


def _reference_lcs(a: list[str], b: list[str]) -> int:
    from rouge_score.rouge_scorer import _lcs_table

    return _lcs_table(a, b)[-1][-1] if a and b else 0


def test_the_two_row_lcs_is_rouge_scores_lcs():
    rnd = random.Random(36)
    for _ in range(300):
        a = [rnd.choice("abcde") for _ in range(rnd.randint(0, 30))]
        b = [rnd.choice("abcde") for _ in range(rnd.randint(0, 30))]
        assert lcs_length(a, b) == lcs_length(b, a) == _reference_lcs(a, b)


@pytest.mark.parametrize("prediction,reference", ORDINARY + [(b, a) for a, b in ORDINARY])
def test_rouge_l_recall_is_rouge_scores_on_ordinary_answers(prediction, reference):
    assert rouge_l_recall(prediction, reference) == rouge_scorer().score(reference, prediction)["rougeL"].recall


def test_rouge_l_compares_a_bounded_part_of_any_text():
    long = _long_reply(600_000)
    assert len(rouge_tokens(long)) == MAX_COMPARED_TOKENS
    assert rouge_l_recall(long, long) == 1.0  # 512 x 512 steps, not 200,000 x 200,000
