"""Astute RAG's trace (``backend/methods/astute``): the internal passages it generated, the numbered passages
it consolidated (D0 with sources), the consolidation groups of every round, and the final pick."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schema.base import StrictModel
from backend.schema.trace import Trace

PassageOrigin = Literal["external", "internal"]
#: A group's source derived from the passages it cites: all internal, all external, both, or no citation.
GroupSource = Literal["internal", "external", "mixed", "unknown"]


class AstuteDropped(StrictModel):
    """A generated passage that was not kept (an "I don't know" statement, or one past m̂)."""

    text: str
    reason: str


class AstuteGeneration(StrictModel):
    """Call 1 (docs/methods/astute.md §3.3): the model writes at most m̂ passages from memory, or says it does
    not know."""

    raw: str
    kept: list[str] = Field(default_factory=list)        # the internal passages that join D0
    dropped: list[AstuteDropped] = Field(default_factory=list)
    hedged: list[int] = Field(default_factory=list)      # indices into ``kept`` that still contain "I don't know"
    call_id: str | None = None


class AstutePassage(StrictModel):
    """One passage of D0 = E ⊕ I, numbered as the prompt numbers it."""

    number: int                    # 1-based position in the prompt (the number the model cites)
    origin: PassageOrigin
    text: str
    document_id: str | None = None  # external: the dataset document; internal: None
    source: str | None = None      # external: the document's source name
    rank: int | None = None        # external: 1-based position in the evidence list before reordering


class AstuteGroup(StrictModel):
    """One consolidated document: consistent passages summarised together, with the answer proposed for it."""

    id: str                        # as the model named it ("1", "G2", "A")
    summary: str = ""
    documents: list[int] = Field(default_factory=list)   # cited D0 numbers that exist
    invalid_citations: list[int] = Field(default_factory=list)  # cited numbers with no such passage
    stated_source: str | None = None   # the model's own label (memory / external / both / ...)
    source: GroupSource = "unknown"    # derived from the cited passages' origins
    answer: str | None = None          # the Step 2 candidate answer for this group
    confidence: float | None = None    # normalised to [0, 1]; None when missing or unreadable
    confidence_raw: str | None = None  # as written ("0.67", "85%", "high")
    confidence_heuristic: bool = False  # a word (high / medium / low) mapped to a number


class AstuteRound(StrictModel):
    """One consolidation: rounds 1..t-1 are p_con calls; round t is Step 1 of the final p_ans call."""

    round: int
    step: str                      # the call's step name
    final: bool = False            # the p_ans call (consolidation + answers + pick)
    raw: str = ""
    groups: list[AstuteGroup] = Field(default_factory=list)
    excluded: list[int] = Field(default_factory=list)    # D0 numbers no group cites (irrelevant), or <EXCLUDED>
    split: list[int] = Field(default_factory=list)       # D0 numbers cited by more than one group
    conflict: bool = False         # two or more groups propose different answers
    parse: Literal["structured", "lenient", "failed"] = "failed"
    notes: list[str] = Field(default_factory=list)
    call_id: str | None = None


class AstuteTrace(Trace):
    kind: Literal["astute"] = "astute"
    m_hat: int
    iterations: int                # t
    order: str
    answer_mode: Literal["single", "multi"]
    prompt_mode: Literal["paper", "structured"]
    drop_idk: bool
    source_detail: bool
    max_tokens: int
    generation: AstuteGeneration | None = None
    passages: list[AstutePassage] = Field(default_factory=list)   # D0 in prompt order
    rounds: list[AstuteRound] = Field(default_factory=list)
    final_answers: list[str] = Field(default_factory=list)        # empty: abstained (or nothing parsed)
    #: how the final answer was read (``parse.parse_answer`` / ``parse_answer_paper``); "top_candidate" (the most
    #: confident candidate, picked by the reader) is no longer produced and is kept for older saved traces
    answer_parse: Literal["tag", "label", "top_candidate", "last_line", "failed", "skipped"] = "failed"
    final_groups: list[str | None] = Field(default_factory=list)  # per final answer: the group it came from
    rationale: str = ""            # the model's Step 3 text (why it picked that answer)
    truncated: bool = False        # a reply used its whole token budget, so it may be cut off
    no_context: bool = False       # no external and no internal passage: nothing to consolidate, no answer call
    notes: list[str] = Field(default_factory=list)   # parse fallbacks and other observations

    def key_facts(self) -> dict[str, str]:
        """The few facts a what-if comparison shows side by side: the last consolidation's groups and the final
        answers (``backend.whatif.compare``)."""
        groups = self.rounds[-1].groups if self.rounds else []
        return {"groups": " · ".join(f"{g.id} ({g.source}, {len(g.documents)} passages): {g.answer or '—'}"
                                     for g in groups) or "none",
                "answers": ", ".join(self.final_answers) or "none"}
