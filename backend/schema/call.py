"""One model call as it was made and recorded (the Model calls page, the call graph, the cache)."""

from __future__ import annotations

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
