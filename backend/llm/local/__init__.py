"""The real local model: llama.cpp's server (the ``xllamacpp`` wheel) with a small instruct model on this CPU.

``--model local/smollm2`` (or ``local/<name>`` for a GGUF of one's own, ``backend.llm.local.weights``) is served by a
server this process starts on first use and stops at exit (``backend.llm.local.server``), or one already running
(``python -m backend serve-local``). Calls go through litellm's OpenAI-compatible path to it (``route``); the model's
identity in cache keys is its name and a hash of its weights (``identity``), so a replay needs no server and a reply
cached from one port answers the same weights on another.

What a real small model needs that no hosted one does, each in its module: the prompt cut to the context
(``context``), runaway replies read as cut off (``runaway``), the speed measured for the time estimate
(``throughput``), one queue for the server's slots so a request's timeout counts from when a slot takes it
(``server.slots``), and requests that never retry a timeout (a retry only doubles the load of a busy CPU).
"""

from __future__ import annotations

from backend.llm.local.weights import BUNDLED, BUNDLED_TITLE, PREFIX, WeightsError, is_local, local_name

#: The model string of the bundled SmolLM2.
SMOLLM2 = PREFIX + BUNDLED

#: The litellm key a local server gets: it checks none (never a real key: the server's keys never go there).
NO_KEY = "sk-no-key-local-llama-cpp"


def identity(model: str) -> str:
    """``local/smollm2#<weights digest>``: what cache keys call the model. ``LocalModelError`` when its weights
    cannot be found."""
    from backend.llm.local.server import gguf_for
    from backend.llm.local.weights import digest

    return f"{model}#{digest(gguf_for(local_name(model)))}"


def route(server) -> dict[str, str]:
    """The litellm arguments that send a call to ``server``: its OpenAI-compatible endpoint, under its name."""
    return {"model": f"openai/{server.name}", "api_base": server.api_base, "api_key": NO_KEY}


__all__ = ["BUNDLED_TITLE", "NO_KEY", "SMOLLM2", "WeightsError", "identity", "is_local", "local_name", "route"]
