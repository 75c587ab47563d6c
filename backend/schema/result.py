"""What running a method on a question returns: ``MethodResult`` (answers, trace, calls, error)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, SerializeAsAny

from backend.schema.base import StrictModel
from backend.schema.call import LLMCall
from backend.schema.trace import Trace, as_trace


class Preparation(StrictModel):
    """What a method's dataset-level preparation (``Method.prepare``, e.g. RA-RAG's stage 1) cost, reported apart
    from the question's own calls."""

    label: str                     # e.g. "RA-RAG stage 1 (source reliability estimation)"
    calls: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    computed_at: float = 0.0       # time.time() when it finished
    reused: bool = False           # True: computed before this run (kept in memory or on disk), so this run paid 0


class ReadingDifference(StrictModel):
    """One decision the other reading of the same reply would have made differently (``backend.methods.reading``)."""

    step: str                      # the step of the call whose reply was read, e.g. "responder", "debate_round_2"
    call_id: str | None = None     # that call (None: a decision over several replies)
    what: str = ""                 # the decision in a few words: "option", "keep or discard", "agent 2's answer"
    used: str                      # what this run's reading read
    other: str                     # what the other reading would have read


class MethodResult(StrictModel):
    method: str
    question_id: str
    answers: list[str] = Field(default_factory=list)
    abstained: bool = False
    error: str | None = None
    #: any registered trace model, read back from JSON by its ``kind`` (``backend.schema.trace``)
    trace: Annotated[SerializeAsAny[Trace] | None, BeforeValidator(as_trace)] = None
    calls: list[LLMCall] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    wall_s: float = 0.0
    #: a run that read replies from the cache: the wall time of the run that made them (``wall_s`` is then mostly a
    #: cache read); None: not such a run, or not recorded
    first_run_s: float | None = None
    #: answer -> ids of the documents it rests on, among those the method read (the document x method map)
    support: dict[str, list[str]] = Field(default_factory=dict)
    #: the dataset-level preparation this run relied on (None: the method needs none)
    preparation: Preparation | None = None
    #: how the replies were read (``backend.methods.reading``): the project's tolerant readers or the papers' rules
    reading: Literal["tolerant", "paper"] = "tolerant"
    #: decisions read from replies, and those the other reading would have read differently
    decisions_read: int = 0
    reading_differences: list[ReadingDifference] = Field(default_factory=list)


TIMING_FIELDS = ("wall_s", "latency_s", "started_at", "ended_at", "recorded_latency_s")


def without_timings(result: MethodResult) -> dict[str, Any]:
    """A result as plain data minus wall-clock fields: equal for equal runs (tests, replay checks)."""
    data = result.model_dump(mode="json", exclude={"wall_s", "first_run_s"})
    for call in data["calls"]:
        for name in TIMING_FIELDS:
            call.pop(name, None)
    data["calls"].sort(key=lambda c: c["id"])  # concurrent calls finish in any order
    if data.get("preparation"):  # what it cost and whether this run or an earlier one paid it: timings too
        for name in ("seconds", "computed_at", "reused", "cache_hits"):
            data["preparation"].pop(name, None)
    return data


