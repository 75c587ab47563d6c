"""Which API key a model call may carry (issue 26).

The server's keys (its environment, and the ``*_API_KEY`` entries of .streamlit/secrets.toml the app copies into it)
go only to their provider's own endpoint (no api_base: litellm's default, or the one the server's own environment
names, e.g. ``OPENAI_API_BASE``) or to an api_base the deployment allows (``key_endpoints``,
``backend.deployment.Deployment.allows_keys_to``). Anyone may still type another api_base: the call then carries the
key typed for it (the app's sidebar, ``$CONFLICTLENS_API_KEY`` for the command line) or ``PLACEHOLDER_KEY``, never
nothing, since litellm reads the environment's key whenever it is given none.

That holds only for providers whose request carries no credential but the ``api_key`` litellm is given
(``KEY_ONLY_PROVIDERS``, checked against litellm with every key variable it reads set: tests/security/test_keys.py).
Any other provider is refused at an api_base that is not allowed: some sign with the server's cloud credentials
(bedrock, sagemaker, vertex_ai, watsonx), others read a token of their own (gigachat).
"""

from __future__ import annotations

#: What a call to an api_base that may not receive the server's keys carries when no key was typed for it: any
#: value keeps litellm from reading the environment's key, and a local server (vLLM, Ollama, serve-model) takes it.
PLACEHOLDER_KEY = "no-key"

#: The command line's key for ``--api-base`` (an environment variable: an argument would sit in the shell's history
#: and in ``ps``).
ENV_API_KEY = "CONFLICTLENS_API_KEY"

#: The setting an admin changes to let an api_base receive the server's keys, as messages name it.
SETTING = "the deployment setting key_endpoints"

#: litellm providers whose request carries the given ``api_key`` and no other credential from the environment.
KEY_ONLY_PROVIDERS = frozenset({
    # OpenAI-compatible servers: vLLM, llama.cpp, LM Studio, Xinference, a LiteLLM proxy, serve-model
    "openai", "text-completion-openai", "custom_openai", "hosted_vllm", "lm_studio", "llamafile", "xinference",
    "docker_model_runner", "litellm_proxy", "ollama", "ollama_chat",
    # hosted APIs, reached through a proxy or gateway of one's own
    "anthropic", "azure", "azure_ai", "gemini", "mistral", "groq", "together_ai", "openrouter", "deepseek",
    "deepinfra", "fireworks_ai",
})


class KeyRefused(ValueError):
    """A call that could carry the server's credentials to an api_base that may not receive them (one line)."""


def refusal(provider: str) -> str:
    """Why a provider outside ``KEY_ONLY_PROVIDERS`` cannot be sent to an api_base that is not allowed."""
    return (f"{provider} models may not use an api_base this server does not allow ({SETTING}): their requests "
            "would carry the server's own credentials; use an openai/ model for an OpenAI-compatible server")


SUBSTITUTED = (f"litellm would send the server's key for this provider to this api_base, which this server does not "
               f"allow ({SETTING}); leave api_base empty to use the provider's own endpoint")


def api_key_for(provider: str | None, typed_key: str | None, *, keys_allowed: bool,
                in_process: bool = False) -> str | None:
    """The ``api_key`` a call hands litellm; None lets litellm take the server's key from the environment.

    ``provider``: litellm's provider for the model (None: litellm cannot tell, and fails the call before sending
    anything); ``typed_key``: a key the caller gave for this call (blank counts as none); ``keys_allowed``: the call
    has no api_base, or one the deployment allows; ``in_process``: a provider registered in this process (offline/,
    scripted/), which sends nothing anywhere.

    * keys allowed, or an in-process provider: the typed key if any, else None (the server's key);
    * otherwise, a provider in ``KEY_ONLY_PROVIDERS`` (or an unknown one): the typed key, else ``PLACEHOLDER_KEY``;
    * otherwise ``KeyRefused``, typed key or not: such a provider adds credentials of the server's own.
    """
    typed = (typed_key or "").strip() or None
    if keys_allowed or in_process:
        return typed
    if provider is not None and provider not in KEY_ONLY_PROVIDERS:
        raise KeyRefused(refusal(provider))
    return typed or PLACEHOLDER_KEY
