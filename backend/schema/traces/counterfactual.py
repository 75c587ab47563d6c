"""Counterfactual prompting's trace (``backend/methods/counterfactual``): the RAG answer, one branch per
counterfactual (quality, usage) with its judgments, the fusion step and the keep / discard decision."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schema.base import StrictModel
from backend.schema.trace import Trace

Decision = Literal["keep", "discard"]
Scenario = Literal["quality", "usage"]


class CFPassage(StrictModel):
    number: int                    # the id the prompt gives it: Passage-{number}, 0-based as in the paper
    document_id: str
    text: str


class CFReply(StrictModel):
    """One answer-bearing reply, parsed as the released code parses it (docs/methods/counterfactual.md §3.2)."""

    raw: str
    answer: str = ""               # the answer part, ``##...##`` spans removed
    evidence: str = ""             # the evidence part (the last ``##...##`` group, or Passage-N mentions)
    passages: list[int] = Field(default_factory=list)   # Passage ids named in the evidence that exist
    internal: bool = False         # the evidence names no passage (internal knowledge)
    reject: bool = False           # a refusal phrase occurs (the whole reply, or the answer only)
    reject_phrase: str | None = None
    call_id: str | None = None


class CFMatch(StrictModel):
    """Is the regenerated answer the same as the RAG answer (docs/methods/counterfactual.md §3.4)? Every score, and which
    test fired."""

    compared: Literal["answer", "evidence", "nothing"]
    exact: bool = False
    substring: bool = False
    f1: float = 0.0
    rouge_l: float = 0.0           # ROUGE-L recall, the RAG answer as the reference
    threshold: float = 0.7
    fired: Literal["exact", "substring", "f1", "rouge_l"] | None = None
    same: bool = False


class CFRound(StrictModel):
    round: int
    reply: CFReply
    match: CFMatch
    decision: Decision             # same -> keep, changed -> discard


class CFBranch(StrictModel):
    scenario: Scenario
    rounds: list[CFRound] = Field(default_factory=list)
    decision: Decision = "discard"


class CFFusion(StrictModel):
    """How disagreeing branches were settled (docs/methods/counterfactual.md §3.6); absent when the branches agree."""

    strategy: Literal["direct", "probability", "safety"]
    branch: Scenario | None = None     # direct selection: the branch that said discard, asked to keep or discard
    raw: str | None = None
    choice: Decision | None = None     # what the model chose (direct selection)
    probabilities: dict[str, float] = Field(default_factory=dict)   # probability comparison, per branch
    raw_probabilities: dict[str, str] = Field(default_factory=dict)
    winner: Scenario | None = None     # the more confident branch; None on a tie (-> discard)
    decision: Decision
    notes: list[str] = Field(default_factory=list)   # parse fallbacks
    call_ids: list[str] = Field(default_factory=list)


class CounterfactualTrace(Trace):
    kind: Literal["counterfactual"] = "counterfactual"
    k: int
    iterations: int                # T
    fusion_strategy: Literal["direct", "probability", "safety"]
    threshold: float
    substring: Literal["faithful", "strict"]
    refusal_scope: Literal["output", "answer"]
    passages: list[CFPassage] = Field(default_factory=list)
    rag: CFReply | None = None
    branches: list[CFBranch] = Field(default_factory=list)   # quality, usage
    agree: bool = False
    fusion: CFFusion | None = None
    fused: Decision | None = None  # the decision before the override
    override: bool = False         # a kept refusal ("unknown") became a discard (docs/methods/counterfactual.md §3.7)
    decision: Decision = "discard"
    reason: str = ""               # the decision path in one line
    notes: list[str] = Field(default_factory=list)

    def key_facts(self) -> dict[str, str]:
        """The few facts a what-if comparison shows side by side: the decision and how it was reached
        (``backend.whatif.compare``)."""
        return {"decision": self.decision,
                "branches": ", ".join(f"{b.scenario}: {b.decision}" for b in self.branches) or "none",
                "rag answer": (self.rag.answer if self.rag else "") or "none"}

    def candidate_answers(self) -> list[str] | None:
        """The RAG answer, kept or discarded: RC-RAG labels a question by whether it is right (§5.1)."""
        if self.rag is None:
            return None
        return [self.rag.answer] if self.rag.answer else []
