"""MADAM-RAG's trace (``backend/methods/madam.py``): one agent per document, debate rounds, an aggregator
per round."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schema.base import StrictModel
from backend.schema.trace import Trace


class MadamAgent(StrictModel):
    number: int                    # the stable label "Agent {number}" (1-based document position)
    document_id: str


class MadamTurn(StrictModel):
    """One agent's response in one round, as it was parsed."""

    agent: int
    round: int
    raw: str                       # the reply (reconstructed for released traces: see MadamTrace.origin)
    answer: str | None             # parsed answer; None = unknown (or no 'Answer:' in the reply)
    explanation: str = ""
    parse_ok: bool = True
    parse_note: str | None = None
    history: str | None = None     # the exact {history} text the agent read (None in round 1)
    changed: bool | None = None    # vs its previous round's answer (None in round 1), docs/methods/madam.md §8.4
    previous_answer: str | None = None
    call_id: str | None = None
    #: the answer as the released code slices it out of the reply, verbatim ("3,559."): what the paper reading's stop
    #: test compares (``madam.released_slice``; None in traces recorded before the two readings)
    released_answer: str | None = None


class MadamAggregation(StrictModel):
    round: int
    order: list[int]               # agent numbers in the order the aggregator read them (the shuffle)
    raw: str
    answers: list[str]             # "All Correct Answers", unknowns removed
    explanation: str = ""
    parse_ok: bool = True
    parse_note: str | None = None
    call_id: str | None = None


class MadamRound(StrictModel):
    round: int
    turns: list[MadamTurn]
    n_changed: int | None = None   # agents whose answer changed (None in round 1: nothing to compare)
    converged: bool = False        # the stop test passed: no agent changed its answer
    aggregation: MadamAggregation | None = None
    no_aggregation_reason: str | None = None


class MadamAnswerSupport(StrictModel):
    """A final (or rejected) answer and the agents/documents behind it."""

    answer: str
    agents: list[int]
    documents: list[str]
    rounds: list[int] = Field(default_factory=list)   # rejected answers: the rounds they were proposed in


class MadamTrace(Trace):
    kind: Literal["madam"] = "madam"
    origin: Literal["run", "released"] = "run"
    origin_note: str | None = None
    max_rounds: int
    history_mode: str
    shuffle: bool
    seed: int
    early_stop: bool
    agents: list[MadamAgent] = Field(default_factory=list)
    rounds: list[MadamRound] = Field(default_factory=list)
    stopped_at: int = 0            # t_end: the last round run
    stop_reason: Literal["converged", "max_rounds", "no_documents"] = "max_rounds"
    final_round: int | None = None  # whose aggregation gave the final answers
    final_note: str = ""           # why that aggregation is the final one
    final_answers: list[str] = Field(default_factory=list)
    final_explanation: str = ""
    support: list[MadamAnswerSupport] = Field(default_factory=list)
    rejected: list[MadamAnswerSupport] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)   # parse fallbacks and other observations

    def key_facts(self) -> dict[str, str]:
        """The few facts a what-if comparison shows side by side: the agents' answers in the last round and the
        final answers (``backend.whatif.compare``)."""
        last = self.rounds[-1].turns if self.rounds else []
        return {"final agents": "; ".join(f"Agent {t.agent}: {t.answer or 'unknown'}" for t in last) or "none",
                "rounds": f"{self.stopped_at} ({self.stop_reason.replace('_', ' ')})",
                "answers": ", ".join(self.final_answers) or "none"}
