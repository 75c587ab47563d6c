"""Failures a person can read: real litellm errors produced offline (missing keys, an unknown provider, a refused
connection, and serve-model's 429 / 500 / hang) classified into one short message per cause with what to do,
never a key; stored error texts read back the same way; failed results grouped by cause."""

from __future__ import annotations

import pytest

from backend.llm.client import LLMClient, LLMConfig, LLMError, endpoint
from backend.llm.failures import classify_failure, group_failures
from backend.llm.server import running_server
from backend.schema import MethodResult

SECRET = "sk-failures-FAKE-0123456789abcdef"
MSG = [{"role": "user", "content": "Reply with the single word: ready"}]
REFUSED = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback, so the connection is refused
SECRETS = "(environment or .streamlit/secrets.toml)"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    """No provider key in the environment, and one fake key of another provider that must never show up."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MISTRAL_API_KEY", SECRET)


def _fail(model: str, api_base: str | None = None, api_key: str | None = None, **cfg) -> LLMError:
    config = LLMConfig(**({"model": model, "api_base": api_base, "cache_mode": "off", "timeout_s": 5, "num_retries": 0}
                          | cfg))
    client = LLMClient(config, api_key=api_key)
    with pytest.raises(LLMError) as info:
        client.complete(MSG, task="ping", step="test", question="ping", max_tokens=8)
    assert client.calls[0].error  # the failed call is recorded too
    return info.value


def _every_form(err: LLMError):
    """The same failure as an LLMError, as MethodResult.error stores it, and as LLMCall.error stores it."""
    forms = [classify_failure(err), classify_failure(f"model call failed: {err}"),
             classify_failure(err.call.error, model=err.model)]
    assert len({(f.cause, f.message) for f in forms}) == 1, forms
    for f in forms:
        assert SECRET not in f"{f.problem} {f.advice} {f.message} {f.raw}"
    return forms[0]


CASES = {
    "openai without key": (
        dict(model="openai/gpt-4o-mini"), "missing_key",
        f"No API key for openai: set OPENAI_API_KEY {SECRETS}, or choose the offline model"),
    "bare openai name without key": (
        dict(model="gpt-4o-mini"), "missing_key",
        f"No API key for openai: set OPENAI_API_KEY {SECRETS}, or choose the offline model"),
    "anthropic without key": (
        dict(model="anthropic/claude-3-5-haiku-latest"), "missing_key",
        f"No API key for anthropic: set ANTHROPIC_API_KEY {SECRETS}, or choose the offline model"),
    "ollama, connection refused": (
        dict(model="ollama/llama3", api_base=REFUSED), "unreachable",
        "Cannot reach http://127.0.0.1:9: is the server running?"),
    "openai-compatible server, connection refused": (
        dict(model="openai/reader", api_base=REFUSED + "/v1", api_key=SECRET), "unreachable",
        "Cannot reach http://127.0.0.1:9/v1: is the server running?"),
    "unknown provider": (
        dict(model="nosuchprovider/x"), "unknown_provider",
        "litellm does not know the provider 'nosuchprovider': check the model name (provider/model)"),
    "no provider at all": (
        dict(model="justamodel"), "unknown_provider",
        ("litellm does not know which provider serves 'justamodel': check the model name (provider/model, "
         "e.g. openai/gpt-4o-mini)")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_real_offline_litellm_errors_map_to_their_cause_and_advice(case):
    kwargs, cause, message = CASES[case]
    failure = _every_form(_fail(**kwargs))
    assert (failure.cause, failure.message) == (cause, message)
    assert failure.problem == message.split(": ")[0] and len(failure.problem) < 60  # short enough for a column
    assert "litellm." in failure.raw  # the provider's own words are kept for the expander


def test_the_key_passed_in_never_reaches_the_failure():
    err = _fail("openai/gpt-4o-mini", api_base=REFUSED, api_key=SECRET)
    failure = _every_form(err)
    assert failure.cause == "unreachable" and SECRET not in str(err)


def test_serve_model_rate_limit_server_error_and_timeout():
    with running_server(fail_first=2) as srv:  # a 429, then a 500
        rate = _every_form(_fail("openai/reader", api_base=srv.base_url, api_key=SECRET))
        server = _every_form(_fail("openai/reader", api_base=srv.base_url, api_key=SECRET))
        where = srv.base_url
    assert (rate.cause, rate.message) == (
        "rate_limit", ("openai is rate-limiting requests: wait a minute and run again (replies already received "
                       "are cached)"))
    assert (server.cause, server.message) == (
        "server", f"The server at {where} reported a server error: try again later, or check the server's log")
    with running_server(hang_rate=1.0) as srv:
        timeout = _every_form(_fail("openai/reader", api_base=srv.base_url, api_key=SECRET, timeout_s=1))
        where = srv.base_url
    assert (timeout.cause, timeout.message) == (
        "timeout", f"No answer from {where} in time: try again, or check that the server is not overloaded")


def test_stored_texts_in_other_shapes():
    # an Ollama tag has a colon in the model name; a prepare hook's failure has its own prefix
    tagged = classify_failure("model call failed: ollama/llama3:8b: connection: litellm.APIConnectionError: "
                              "OllamaException - [Errno 111] Connection refused")
    assert (tagged.cause, tagged.model, tagged.problem) == ("unreachable", "ollama/llama3:8b",
                                                           "Cannot reach http://localhost:11434")
    stage1 = classify_failure("RA-RAG stage 1 (source reliability estimation) failed: openai/gpt-4o-mini: auth: "
                              "litellm.InternalServerError: OpenAIException - Missing credentials. Please pass an "
                              "`api_key`, or set the `OPENAI_API_KEY` environment variable.")
    assert stage1.cause == "missing_key" and stage1.problem == "No API key for openai"
    rejected = classify_failure("auth: litellm.AuthenticationError: OpenAIException - Incorrect API key provided",
                                model="openai/gpt-4o")
    assert rejected.message == f"openai rejected the API key: check OPENAI_API_KEY {SECRETS}"
    dns = classify_failure("groq/llama3-8b-8192: server: litellm.InternalServerError: GroqException - "
                           "[Errno -2] Name or service not known")
    assert dns.message == "Cannot reach the groq API: check the network connection (or proxy)"
    replay = classify_failure("model call failed: offline/reader: replay_miss: no cached reply for request abc")
    assert replay.message == ("No recorded reply for this request (replay mode): run once in live or record mode "
                              "first")
    # not a model call's failure (a method's bug): its own first line, nothing invented
    bug = classify_failure("KeyError: 'answers'\nmore lines")
    assert (bug.cause, bug.message, bug.raw) == ("error", "KeyError: 'answers'", "KeyError: 'answers'\nmore lines")


def test_a_key_echoed_by_a_provider_is_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    failure = classify_failure(f"model call failed: openai/gpt-4o: auth: Incorrect API key provided: {SECRET}")
    assert failure.cause == "auth" and SECRET not in failure.raw and "***" in failure.raw


def test_the_endpoint_in_a_message_drops_user_password_and_query():
    assert endpoint("http://user:pw@10.0.0.5:8000/v1?token=x") == "http://10.0.0.5:8000/v1"
    assert endpoint("http://localhost:11434") == "http://localhost:11434"
    assert endpoint("http://[::1]:8000/v1") == "http://[::1]:8000/v1" and endpoint("localhost:8000") == "localhost:8000"


def test_failed_results_are_grouped_by_cause():
    missing = f"model call failed: {_fail('openai/gpt-4o-mini')}"
    refused = f"model call failed: {_fail('ollama/llama3', api_base=REFUSED)}"
    results = {m: MethodResult(method=m, question_id="q", error=missing) for m in ("no_rag", "vanilla_rag", "madam")}
    results["ra_rag"] = MethodResult(method="ra_rag", question_id="q", error=refused)
    results["astute"] = MethodResult(method="astute", question_id="q", answers=["fine"])
    groups = group_failures(results)
    assert [(g.failure.cause, g.methods) for g in groups] == [
        ("missing_key", ("no_rag", "vanilla_rag", "madam")), ("unreachable", ("ra_rag",))]
    assert groups[0].raws == ((missing, ("no_rag", "vanilla_rag", "madam")),)  # one raw text, said once
    assert group_failures(results.values()) == groups and group_failures([results["astute"]]) == []
