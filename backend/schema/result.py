"""What running a method on a question returns: ``MethodResult`` (answers, trace, calls, error)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from backend.schema.base import StrictModel
from backend.schema.call import LLMCall
from backend.schema.traces import Trace


class MethodResult(StrictModel):
    method: str
    question_id: str
    answers: list[str] = Field(default_factory=list)
    abstained: bool = False
    error: str | None = None
    trace: Trace | None = None
    calls: list[LLMCall] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    wall_s: float = 0.0
    #: answer -> ids of the documents it rests on (the Inspect page's document x method map)
    support: dict[str, list[str]] = Field(default_factory=dict)


TIMING_FIELDS = ("wall_s", "latency_s", "started_at", "ended_at")


def without_timings(result: MethodResult) -> dict[str, Any]:
    """A result as plain data minus wall-clock fields: equal for equal runs (tests, replay checks)."""
    data = result.model_dump(mode="json", exclude={"wall_s"})
    for call in data["calls"]:
        for name in TIMING_FIELDS:
            call.pop(name, None)
    data["calls"].sort(key=lambda c: c["id"])  # concurrent calls finish in any order
    return data


