"""The client over litellm: cache modes, call records, truth guard, errors (scripted provider; offline)."""

import asyncio
import json

import pytest

from backend.llm.client import LLMClient, LLMConfig, LLMError, default_cache
from backend.llm.providers import scripted

MSG = [{"role": "user", "content": "Question: who?\nAnswer:"}]


def _client(tmp_path, mode="live", **cfg):
    return LLMClient(LLMConfig(model="scripted/test", cache_mode=mode, **cfg), cache=default_cache(tmp_path))


def test_second_identical_call_is_a_cache_hit_with_zero_provider_calls(tmp_path):
    with scripted({"closed_book": "Ann"}) as model:
        client = _client(tmp_path)
        first = client.complete(MSG, task="closed_book", step="answer", question="who?")
        second = client.complete(MSG, task="closed_book", step="answer", question="who?")
        assert len(model.received) == 1
    assert (first.response, first.cache_hit, first.attempts) == ("Ann", False, 1)
    assert (second.response, second.cache_hit, second.attempts) == ("Ann", True, 0)
    assert second.id == first.id + "#2" and client.calls == [first, second]
    # a new client on the same cache folder (a new process) also hits
    with scripted({"closed_book": "Bob"}) as model:
        again = _client(tmp_path).complete(MSG, task="closed_book", step="answer", question="who?")
        assert again.response == "Ann" and again.cache_hit and not model.received


def test_cache_key_depends_on_messages_and_fields(tmp_path):
    with scripted({"closed_book": "Ann"}) as model:
        client = _client(tmp_path)
        client.complete(MSG, task="closed_book", step="a", question="who?")
        client.complete(MSG, task="closed_book", step="a", question="who?", fields={"memory": "x"})
        client.complete([{"role": "user", "content": "other"}], task="closed_book", step="a", question="who?")
        assert len(model.received) == 3


def test_replay_miss_fails_loudly_and_is_recorded(tmp_path):
    with scripted({"closed_book": "Ann"}) as model:
        client = _client(tmp_path, mode="replay")
        with pytest.raises(LLMError) as err:
            client.complete(MSG, task="closed_book", step="answer", question="who?")
        assert not model.received
    assert err.value.kind == "replay_miss" and "no cached reply" in err.value.message
    assert client.calls[0].error.startswith("replay_miss")


def test_record_mode_always_calls_and_overwrites(tmp_path):
    with scripted({"closed_book": ["Ann", "Bob"]}) as model:
        _client(tmp_path, mode="record").complete(MSG, task="closed_book", step="a", question="who?")
        _client(tmp_path, mode="record").complete(MSG, task="closed_book", step="a", question="who?")
        assert len(model.received) == 2
        replay = _client(tmp_path, mode="replay").complete(MSG, task="closed_book", step="a", question="who?")
    assert replay.response == "Bob" and replay.cache_hit


def test_truth_fields_are_refused_before_any_call(tmp_path):
    with scripted({"closed_book": "Ann"}) as model:
        with pytest.raises(LLMError) as err:
            _client(tmp_path).complete(MSG, task="closed_book", step="a", question="who?",
                                       fields={"gold_answers": ["Ann"]})
        assert not model.received
    assert err.value.kind == "truth_leak"


def test_unknown_task_is_a_programming_error(tmp_path):
    with pytest.raises(ValueError, match="unknown task"):
        _client(tmp_path).complete(MSG, task="nope", step="a", question="who?")


def test_provider_error_becomes_one_exception_type_with_the_provider_message(tmp_path):
    with scripted({}):
        client = _client(tmp_path, num_retries=0)
        with pytest.raises(LLMError) as err:
            client.complete(MSG, task="closed_book", step="a", question="who?")
    assert err.value.kind == "bad_request" and "no reply for task" in err.value.message
    assert "Traceback" not in err.value.message


def test_missing_credentials_fail_fast_without_retries(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = LLMClient(LLMConfig(model="gpt-4o-mini", cache_mode="off", num_retries=3, backoff_s=1))
    with pytest.raises(LLMError) as err:
        client.complete(MSG, task="closed_book", step="a", question="who?")
    assert err.value.kind == "auth" and client.calls[0].attempts == 1


def test_async_calls_and_session_log(tmp_path):
    from backend.llm.client import CallLog

    log = CallLog()
    with scripted({"closed_book": lambda f: f["question"].upper()}):
        client = LLMClient(LLMConfig(model="scripted/t", cache_mode="off"), log=log).for_method("m")

        async def main():
            return await asyncio.gather(*(client.acomplete(MSG, task="closed_book", step=f"s{i}", question=f"q{i}")
                                          for i in range(5)))
        calls = asyncio.run(main())
    assert [c.response for c in calls] == [f"Q{i}" for i in range(5)]
    assert {c.method for c in log.all()} == {"m"} and len(log.all()) == 5


def test_api_key_never_reaches_cache_or_call_records(tmp_path):
    secret = "sk-conflictlens-FAKE-0123456789"
    with scripted({"closed_book": "Ann"}):
        client = LLMClient(LLMConfig(model="scripted/t"), cache=default_cache(tmp_path), api_key=secret)
        call = client.complete(MSG, task="closed_book", step="a", question="who?")
    (tmp_path / "calls.json").write_text(json.dumps([call.model_dump(mode="json")]))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_keys_from_the_environment_are_redacted_from_provider_errors(tmp_path, monkeypatch):
    secret = "sk-env-SECRET-abcdef0123456789"
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", secret)
    with scripted({"closed_book": lambda f: (_ for _ in ()).throw(RuntimeError(f"bad key {secret}"))}):
        client = LLMClient(LLMConfig(model="scripted/t", cache_mode="off", num_retries=0))
        with pytest.raises(LLMError) as err:
            client.complete(MSG, task="closed_book", step="a", question="who?")
    assert secret not in err.value.message and secret not in client.calls[0].error and "***" in err.value.message


def test_an_attempt_never_outlives_its_timeout_even_when_the_executor_is_stalled(tmp_path):
    """litellm's ``acompletion`` hops through the loop's default executor before its HTTP timeout starts; the
    client bounds the whole attempt, so a call whose hop cannot start still fails at its timeout (and retries)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    release = threading.Event()

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        blocker = loop.run_in_executor(None, release.wait, 60)   # the executor's one thread is busy
        client = _client(tmp_path, mode="off", timeout_s=0.3, num_retries=1, backoff_s=0.01)
        try:
            with pytest.raises(LLMError) as info:
                await client.acomplete(MSG, task="closed_book", step="answer", question="who?")
        finally:
            release.set()
            await blocker
        return info.value, client.calls

    with scripted({"closed_book": "Ann"}) as model:
        err, calls = asyncio.run(main())
        assert not model.received
    assert err.kind == "timeout" and "no reply within the call's timeout of 0.3 s" in err.message
    assert len(calls) == 1 and calls[0].attempts == 2 and calls[0].error.startswith("timeout: ")


def test_a_failed_call_lets_its_siblings_finish_and_be_recorded_first(tmp_path):
    """``gather_all`` (what methods use for concurrent calls) raises the first failure only once every sibling has
    ended, so the method's result lists every call it made; ``asyncio.gather`` would leave the slow one running."""
    import time

    from backend.methods.base import gather_all

    def broken(fields):
        raise ValueError("no reply")

    def slow(fields):
        time.sleep(0.3)
        return "Ann"

    async def main():
        client = _client(tmp_path, mode="off", num_retries=0)
        ask = lambda task: client.acomplete(MSG, task=task, step=task, question="who?")  # noqa: E731
        with pytest.raises(LLMError):
            await gather_all(ask("closed_book"), ask("keyword_answer"))
        return client.calls   # read at once, as Method.arun does when it builds the result

    with scripted({"closed_book": broken, "keyword_answer": slow}):
        calls = asyncio.run(main())
    assert sorted((c.task, c.response, bool(c.error)) for c in calls) == [("closed_book", None, True),
                                                                          ("keyword_answer", "Ann", False)]
