"""One endpoint's replies never answer for another (issue 25 §7): the reply cache is keyed by the model's name *and*
its endpoint (scheme, host, port, path, as a hash), tested with two real serve-model servers on loopback that reply
differently under the same model name."""

from __future__ import annotations

import pytest

from backend.llm.client import LLMClient, LLMConfig, default_cache, endpoint_hash
from backend.llm.urls import BadURL
from backend.llm.reader_version import reader_version
from backend.llm.server import running_server

QUESTION = "Who designed the Velmora Bridge?"
MESSAGES = [{"role": "user", "content": f"Context: The Velmora Bridge was designed by Ingrid Haldane.\n"
                                        f"Question: {QUESTION}"}]


def ask(cache, api_base: str):
    client = LLMClient(LLMConfig(model="openai/reader", api_base=api_base, timeout_s=10, num_retries=0),
                       api_key="sk-test-not-a-real-key-123456", cache=cache)
    return client.complete(MESSAGES, task="keyword_answer", step="answer", question=QUESTION)


def test_a_second_server_under_the_same_model_name_is_asked_not_answered_from_the_first_ones_cache(tmp_path):
    cache = default_cache(tmp_path)
    with running_server(reply_text="POISONED") as bad, running_server(reply_text="HONEST") as good:
        first = ask(cache, bad.base_url)
        second = ask(cache, good.base_url)
        assert (first.response, first.cache_hit) == ("POISONED", False)
        assert (second.response, second.cache_hit) == ("HONEST", False)
        assert good.stats["requests"] == 1  # the honest server was asked
        # each endpoint's own entry still answers for it, and a trailing slash names the same endpoint
        again = ask(cache, good.base_url + "/")
        assert (again.response, again.cache_hit) == ("HONEST", True) and good.stats["requests"] == 1
        assert ask(cache, bad.base_url).response == "POISONED"
    assert bad.base_url.encode() not in cache.path.read_bytes()  # the URL is never stored, only its hash
    cache.close()


def test_the_endpoint_is_scheme_host_port_and_path_normalised_and_credentials_or_a_query_are_refused():
    base = endpoint_hash("http://127.0.0.1:8701/v1")
    assert endpoint_hash("http://127.0.0.1:8701/v1/") == base
    assert endpoint_hash("HTTP://127.0.0.1:8701/x/../v1/.") == base  # dot segments resolved, as httpx sends it
    for refused in ("HTTP://user:secret@127.0.0.1:8701/v1", "http://127.0.0.1:8701/v1?key=abc#x"):  # issue 36
        with pytest.raises(BadURL, match="is refused"):
            endpoint_hash(refused)
    assert endpoint_hash("http://127.0.0.1:8702/v1") != base      # another port
    assert endpoint_hash("http://127.0.0.1:8701/v2") != base      # another path
    assert endpoint_hash("https://127.0.0.1:8701/v1") != base     # another scheme
    assert endpoint_hash("http://localhost:8701/v1") != base      # another host name
    assert endpoint_hash("https://API.example.com/v1") == endpoint_hash("https://api.example.com:443/v1")
    assert "8701" not in base and "127.0.0.1" not in base
    config = LLMConfig(model="openai/reader", api_base="http://127.0.0.1:8701/v1/")
    assert config.identity == f"openai/reader@{base}"
    assert LLMConfig(model="openai/reader").identity == "openai/reader"  # no endpoint: the name alone


def test_an_endpoint_set_in_the_environment_is_part_of_the_identity(monkeypatch):
    """litellm sends an ``openai/`` model to ``OPENAI_API_BASE`` when no api_base is given: the key names it too."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:8701/v1")
    one = LLMConfig(model="openai/reader").identity
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:8702/v1")
    assert LLMConfig(model="openai/reader").identity != one
    assert one == LLMConfig(model="openai/reader", api_base="http://127.0.0.1:8701/v1").identity
    assert LLMConfig(model="offline/reader").identity == f"offline/reader#{reader_version()}"  # no endpoint in it


def test_the_offline_readers_replies_are_keyed_by_its_code(tmp_path, monkeypatch):
    """An edit of the reader's code (an upgrade) changes its identity, so a reply the older reader gave is a miss."""
    import backend.llm.reader_version as version

    before = LLMConfig(model="offline/reader").identity
    assert before.startswith("offline/reader#") and len(before.split("#")[1]) == 12
    code = tmp_path / "llm"
    for folder in ("offline", "reader"):
        (code / folder).mkdir(parents=True)
        (code / folder / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(version, "LLM", code)
    monkeypatch.setattr(version, "READER_CODE", (code / "offline", code / "reader"))
    version.reader_version.cache_clear()
    one = LLMConfig(model="offline/reader").identity
    (code / "reader" / "a.py").write_text("x = 2\n")
    version.reader_version.cache_clear()
    assert LLMConfig(model="offline/reader").identity not in (one, before)
    version.reader_version.cache_clear()
