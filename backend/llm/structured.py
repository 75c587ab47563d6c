"""Structured output: asking a model for its task's JSON schema instead of the paper's text format.

Off by default (``LLMConfig.structured_output``): the papers' formats are what the methods were published with. On,
each call of a task that declares a ``schema`` (``backend.llm.tasks.TaskSpec``; a pydantic model, kept beside the
task) sends ``response_format={"type": "json_schema", "json_schema": {"name": <task>, "schema": ..., "strict": true}}``
— but only to a model that can honour it (``supports_json_schema``); any other model gets the papers' formats and the
app and the CLI say so. The reply is read by the task's own reader, which reads the JSON object as well as the text
format. The request's ``response_format`` is part of the cache key, and the call record says ``structured``.

Which models support it (``supports_json_schema``):

* whatever litellm's model map says supports JSON-schema responses (``litellm.supports_response_schema``: GPT-4o,
  recent Gemini and others);
* an ``openai/<name>`` model with an ``api_base``: an OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, a
  LiteLLM proxy, and the project's own ``python -m backend serve-model``) accepts ``response_format`` with a
  ``json_schema`` — litellm's map cannot know what a self-hosted server runs, so the user's choice is honoured;
* ``local/<name>`` (llama.cpp's server, ``backend.llm.local``: the schema becomes a grammar that constrains decoding);
* ``scripted/<name>`` (tests script the JSON replies themselves).

The in-process offline model (``offline/<name>``) answers in the papers' formats only; ``serve-model`` (the same model
over HTTP) honours ``response_format``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import backend  # noqa: F401  (LITELLM_LOCAL_MODEL_COST_MAP before litellm is imported)
from backend.llm.tasks import TASKS

#: providers that take the setting as given (see the module docstring)
ALWAYS = ("scripted",)


@lru_cache(maxsize=64)
def supports_json_schema(model: str, api_base: str | None = None) -> bool:
    """Can ``model`` (at ``api_base``) be asked for a JSON-schema response? Never raises."""
    provider = model.split("/", 1)[0] if "/" in model else ""
    if provider in ALWAYS or (provider == "openai" and api_base) or provider == "local":
        return True  # local: llama.cpp's server turns the schema into a grammar (constrained decoding)
    if provider == "offline":
        return False
    import litellm  # imported on first use (~2 CPU-s); ``backend`` set its local cost map first

    try:
        name, custom_provider, *_ = litellm.get_llm_provider(model, api_base=api_base)
        return bool(litellm.supports_response_schema(model=name, custom_llm_provider=custom_provider))
    except Exception:  # noqa: BLE001 - litellm raises for a model it does not know: not supported, as far as we know
        return False


def unsupported_note(model: str) -> str:
    """What the app and the CLI say when the setting is on for a model that cannot honour it."""
    return (f"Structured output is on, but {model} does not support JSON-schema responses (litellm's model map, or an "
            "openai/ model with an api_base): the run uses the papers' reply formats.")


def response_format(task: str) -> dict[str, Any] | None:
    """The ``response_format`` asking for ``task``'s schema (strict, as litellm builds it from the pydantic model),
    named after the task so a server can tell which it is; None for a task without a schema."""
    spec = TASKS.get(task)
    if spec is None or spec.schema is None:
        return None
    from litellm.utils import type_to_response_format_param

    fmt = type_to_response_format_param(spec.schema)
    return {"type": "json_schema", "json_schema": {**fmt["json_schema"], "name": task}}
