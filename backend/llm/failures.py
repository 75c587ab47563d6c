"""Failures a person can read: a failed model call, as an ``LLMError`` or as the text a ``MethodResult.error`` /
``LLMCall.error`` stores, turned into one short message per cause with what to do, and the failed results of
a run grouped by that message (so a page says it once, not once per method).

The client already names the model, the error kind and (when set) the endpoint in every failure
(``<model>: <kind>: <provider message> [api_base URL]``, ``backend.llm.client``); this module reads that text
back, so it works the same on a live error, a stored result or a results file. Messages name providers,
models, endpoints and the *names* of key variables, never a key: the raw text is redacted again.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from backend import deployment
from backend.llm import keys, urls
from backend.llm.client import LLMError, classify, redact
from backend.schema import MethodResult

KINDS = ("timeout", "rate_limit", "server", "connection", "auth", "bad_request", "replay_miss", "truth_leak",
         "unavailable", "context", "too_large", "other")
#: Every cause a failure is classified into; ``error`` is a failure that is not a model call's (a method's bug,
#: a retrieval error): its message is its own first line.
CAUSES = ("missing_key", "auth", "unknown_provider", "unreachable", "timeout", "rate_limit", "server",
          "bad_request", "replay_miss", "truth_leak", "unavailable", "context", "too_large", "other", "error")

_KIND = "|".join(KINDS)
_WITH_MODEL = re.compile(rf"(?P<model>\S+?): (?P<kind>{_KIND}): (?P<message>.*)", re.DOTALL)  # MethodResult.error
_WITHOUT_MODEL = re.compile(rf"(?P<kind>{_KIND}): (?P<message>.*)", re.DOTALL)                 # LLMCall.error
_API_BASE = re.compile(r" \[api_base (?P<url>\S+)\]\s*$")
_KEY_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_API_KEY\b")
_MISSING_KEY = re.compile(r"missing credentials|missing (?:\w+ )?api[ _-]?key|no api[ _-]?key"
                          r"|api[ _-]?key\b.{0,60}\b(?:missing|not (?:set|provided|found))", re.DOTALL)
_UNREACHABLE = ("connection refused", "name or service not known", "network is unreachable", "connection error",
                "nodename nor servname", "temporary failure in name resolution", "failed to resolve",
                "no route to host", "all connection attempts failed", "cannot connect", "connect call failed",
                "errno 111", "errno 101", "errno -2", "errno -3")
_DEFAULT_BASES = {"ollama": "http://localhost:11434", "ollama_chat": "http://localhost:11434"}


@dataclass(frozen=True)
class Failure:
    """One failure, as a person reads it: ``problem`` is short enough for a column, ``advice`` says what to do,
    ``raw`` is the full (redacted) text behind it."""

    cause: str
    problem: str
    advice: str
    raw: str
    model: str | None = None

    @property
    def message(self) -> str:
        """The one line a page shows once per cause: the problem and what to do."""
        return f"{self.problem}: {self.advice}" if self.advice else self.problem


@dataclass(frozen=True)
class FailureGroup:
    """Failed results that share one message: the methods it hit and the distinct raw texts (method names each)."""

    failure: Failure
    methods: tuple[str, ...]
    raws: tuple[tuple[str, tuple[str, ...]], ...]   # (raw text, the methods that reported it)


def provider_of(model: str) -> str:
    """The provider part of a litellm model string (``openai/gpt-4o-mini`` -> ``openai``; litellm's own guess
    for a bare name like ``gpt-4o-mini``; the name itself when litellm knows none)."""
    if "/" in model:
        return model.split("/", 1)[0]
    import litellm

    try:
        return litellm.get_llm_provider(model)[1] or model
    except Exception:  # noqa: BLE001 - an unknown bare name is the failure being explained
        return model


def _is_openai_error(error: object) -> bool:
    """An openai (so litellm) exception? Only possible once openai is imported: asking never imports it (~1 s)."""
    openai = sys.modules.get("openai")
    return openai is not None and isinstance(error, openai.OpenAIError)


def classify_failure(error: LLMError | BaseException | str, model: str | None = None) -> Failure:
    """The failure behind ``error``: an ``LLMError``, a litellm exception, or an error text in either stored form
    (``... <model>: <kind>: <message>`` as in ``MethodResult.error``, or ``<kind>: <message>`` as in
    ``LLMCall.error``, then pass ``model``)."""
    if isinstance(error, LLMError):
        kind, message, model, raw = error.kind, error.message, error.model, str(error)
    elif _is_openai_error(error):  # litellm's own exception, not passed through the client
        kind, message, raw = classify(error), str(error), str(error)
    else:
        raw = str(error)
        found = _WITHOUT_MODEL.match(raw) if model else None
        found = found or _WITH_MODEL.search(raw)
        if found is None:
            text = redact(raw)
            first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
            return Failure("error", first if len(first) <= 300 else first[:300] + " …", "", text, model)
        kind, message = found["kind"], found["message"]
        model = found.groupdict().get("model") or model
    raw = redact(raw)
    api_base = m["url"] if (m := _API_BASE.search(message)) else None
    cause, problem, advice = _explain(kind, message, model or "the model", api_base)
    return Failure(cause, redact(problem), redact(advice), raw, model)


def _explain(kind: str, message: str, model: str, api_base: str | None) -> tuple[str, str, str]:
    """(cause, problem, advice) for an error of ``kind`` with the provider's ``message``."""
    text, provider = message.lower(), provider_of(model)
    names = " or ".join(dict.fromkeys(_KEY_NAME.findall(message))) or f"{provider.upper()}_API_KEY"
    where = api_base or _DEFAULT_BASES.get(provider)
    if "llm provider not provided" in text:
        if "/" in model:
            return ("unknown_provider", f"litellm does not know the provider '{provider}'",
                    "check the model name (provider/model)")
        return ("unknown_provider", f"litellm does not know which provider serves '{model}'",
                "check the model name (provider/model, e.g. openai/gpt-4o-mini)")
    if kind == "unavailable":  # the local model cannot serve: its one line says what to install or do
        return "unavailable", _API_BASE.sub("", message).strip(), ""
    if kind == "too_large":  # refused unread (backend.llm.http_limit): its own words say why
        return ("too_large", _API_BASE.sub("", message).strip(),
                "check the endpoint serves chat completions and honours max_tokens")
    if kind == "context":
        return "context", "The prompt does not fit the model's context", _API_BASE.sub("", message).strip()
    if keys.SETTING in message:  # refused before sending (backend.llm.keys): its own words say what to do
        return "auth", _API_BASE.sub("", message).strip(), ""
    if urls.REFUSED in message:  # an address refused before sending (backend.llm.urls): its own words too
        return "bad_request", _API_BASE.sub("", message).strip(), "give the endpoint as a plain http(s) URL"
    if api_base and (kind == "auth" or _MISSING_KEY.search(text)) and not deployment.current().allows_keys_to(api_base):
        return ("auth", f"{api_base} did not accept the key",  # it got no key of the server's, by design
                f"this server sends its own keys to no such api_base ({keys.SETTING}); type a key for it in the "
                f"sidebar's Model box (command line: ${keys.ENV_API_KEY}), or leave api_base empty")
    if _MISSING_KEY.search(text):
        where_set = "environment or .streamlit/secrets.toml" + (
            "; any value works for a local OpenAI-compatible server" if api_base else "")
        return "missing_key", f"No API key for {provider}", f"set {names} ({where_set}), or choose the offline model"
    if kind == "auth":
        return "auth", f"{provider} rejected the API key", f"check {names} (environment or .streamlit/secrets.toml)"
    if kind == "connection" or (kind in ("server", "other") and any(m in text for m in _UNREACHABLE)):
        if where:
            return "unreachable", f"Cannot reach {where}", "is the server running?"
        return "unreachable", f"Cannot reach the {provider} API", "check the network connection (or proxy)"
    if kind == "timeout":
        return ("timeout", f"No answer from {where or 'the ' + provider + ' API'} in time",
                "try again, or check that the server is not overloaded")
    if kind == "rate_limit":
        return ("rate_limit", f"{provider} is rate-limiting requests",
                "wait a minute and run again (replies already received are cached)")
    if kind == "server":
        return ("server", f"{'The server at ' + where if where else provider} reported a server error",
                "try again later" + (", or check the server's log" if where else ""))
    if kind == "bad_request":
        return ("bad_request", f"{provider} rejected the request for '{model}'",
                "check the model name and that the provider serves it")
    if kind == "replay_miss":
        return ("replay_miss", "No recorded reply for this request (replay mode)",
                "run once in live or record mode first")
    if kind == "truth_leak":
        return ("truth_leak", "A method tried to send ground truth to the model",
                "the call was blocked; this is a bug in the method, please report it")
    return "other", f"The call to {model} failed", "see the provider's message"


def group_failures(results: Mapping[str, MethodResult] | Iterable[MethodResult]) -> list[FailureGroup]:
    """The failed results grouped by message (one group per cause and endpoint), in the order they first occur."""
    items = results.values() if isinstance(results, Mapping) else results
    groups: dict[str, tuple[Failure, list[str], dict[str, list[str]]]] = {}
    for result in items:
        if not result.error:
            continue
        failure = classify_failure(result.error)
        _, methods, raws = groups.setdefault(failure.message, (failure, [], {}))
        methods.append(result.method)
        raws.setdefault(failure.raw, []).append(result.method)
    return [FailureGroup(f, tuple(ms), tuple((raw, tuple(by)) for raw, by in raws.items()))
            for f, ms, raws in groups.values()]
