"""One model call as it was made and recorded (the Model calls page, the call graph, the cache)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from backend.schema.base import StrictModel


class LLMCall(StrictModel):
    """One model call as the dashboard shows it. Never holds an API key or an api_base URL."""

    id: str
    step: str                      # the method's step name, e.g. "answer", "debate_round_2"
    task: str                      # the offline model's task name (backend.llm.tasks)
    method: str | None = None
    dataset: str | None = None
    question_id: str | None = None  # None: dataset-level work (a method's ``prepare``, e.g. RA-RAG's stage 1)
    model: str
    messages: list[dict[str, str]]
    response: str | None = None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    started_at: float = 0.0        # time.time() when the request was issued (before waiting for a slot)
    ended_at: float = 0.0          # time.time() when the reply (or the failure) was recorded
    cache_hit: bool = False
    parents: list[str] = Field(default_factory=list)  # ids of the calls whose output this call used
    attempts: int = 1
    #: how the task's reader read the reply (``backend.llm.formats``): exact, lenient (``read_note`` says what was
    #: assumed) or unreadable (``read_note`` names the default the method used); None: no reply, or a record
    #: written before reads were recorded
    read_status: Literal["exact", "lenient", "unreadable"] | None = None
    read_note: str | None = None
    #: the request asked for the task's JSON schema (``LLMConfig.structured_output`` on a model that supports it)
    structured: bool = False
    #: why the model stopped ("stop", "length": it ran into max_tokens), when the provider said
    finish_reason: str | None = None
    #: the reply ran into max_tokens repeating itself (``backend.llm.local.runaway``): its text, clipped; the call's
    #: ``response`` is then "" (no answer was read from it) and ``read_note`` says so
    cut_off: str | None = None
    #: what was cut from the prompt to fit the model's context (``backend.llm.local.context.PromptCut`` as a dict)
    prompt_cut: dict[str, Any] | None = None
    #: the server's own time for the reply (llama.cpp's prompt + generation time), when it reports it
    server_s: float | None = None
    #: prompt tokens the server's prompt cache answered (llama.cpp's ``cache_n``)
    cached_tokens: int | None = None
    #: seconds the request waited for a free server slot before it was sent (the local model's queue)
    queued_s: float | None = None
    #: what this call cost in US dollars (``backend.llm.pricing``): litellm's completion cost of the reply; $0 for
    #: the offline model and for a cache hit (nothing was paid); None when the price is unknown (a model litellm's
    #: price map does not list, or a failed call of a priced model: the provider reported no usage)
    cost_usd: float | None = None
    #: a cache hit: what the call cost when the model was called (None: not a hit, or unknown)
    saved_usd: float | None = None
    #: a cache hit: how long the call took when the model was called (its ``latency_s`` is the cache read); None:
    #: not a hit, or a reply cached before latencies were recorded
    recorded_latency_s: float | None = None
