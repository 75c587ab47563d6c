"""BRIDGE's trace (``backend/methods/bridge``): the soft bias, the sub-queries and where each went, the four
knowledge sets with their pairwise scores, S1-S4, every decision-tree node visited with the values compared,
the reflection cycles, the leaf and the response."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schema.base import StrictModel
from backend.schema.trace import Trace

Leaf = Literal["FA", "FI", "FE", "RA"]


class PairScore(StrictModel):
    """The Knowledge Scorer on one pair (or the mean of ``pairs`` scored pairs): three components and their weighted
    total, each in [0, 1]."""

    sparse: float = Field(default=0.0, ge=0.0, le=1.0)
    dense: float = Field(default=0.0, ge=0.0, le=1.0)
    colbert: float = Field(default=0.0, ge=0.0, le=1.0)
    total: float = Field(default=0.0, ge=0.0, le=1.0)
    pairs: int = Field(default=1, ge=0)


class BridgeDemo(StrictModel):
    """An in-context demonstration of the Soft Bias Allocator: a question with its pseudo soft label."""

    question: str
    similarity: float
    retrieve: int                 # percent shown in the demonstration (90 or 10)


class BridgeSubQuery(StrictModel):
    rank: int                     # 1-based, as the model ranked it
    text: str
    to_retriever: bool            # among the first s_r
    to_generator: bool            # among the first s_g


class BridgeKnowledge(StrictModel):
    """One item of K_gen (an answer to a sub-query) or K_ret (the top passage for a sub-query)."""

    sub_query: str
    text: str
    idk: bool = False             # K_gen: the model said it does not know
    document_id: str | None = None  # K_ret: the passage retrieved
    retrieval_score: float | None = None
    score: PairScore | None = None  # against K_int (K_gen) or K_ext (K_ret)


class BridgeNode(StrictModel):
    """One decision-tree node visited: its condition, with the numbers, and the branch taken."""

    node: str                     # N0, N2, N3, N4, N5
    condition: str                # e.g. "S1 + S4 > (1 − S1) + (1 − S4)"
    left: float
    op: str                       # ">", "<", ">="
    right: float
    result: bool
    filled: str                   # e.g. "S1 + S4 = 0.85 > 1.15 ? no"


class BridgeCycle(StrictModel):
    """One pass of knowledge collection, scoring and the tree: cycle 0, then one per reflection."""

    cycle: int
    analysis: str = ""            # reflection cycles: the model's contradiction analysis
    sub_queries: list[BridgeSubQuery] = Field(default_factory=list)
    k_gen: list[BridgeKnowledge] = Field(default_factory=list)
    k_ret: list[BridgeKnowledge] = Field(default_factory=list)
    s1: PairScore = Field(default_factory=lambda: PairScore(pairs=0))   # K_int ↔ K_ext
    s2: PairScore = Field(default_factory=lambda: PairScore(pairs=0))   # K_int ↔ K_gen (mean)
    s3: PairScore = Field(default_factory=lambda: PairScore(pairs=0))   # K_ext ↔ K_ret (mean)
    s4: PairScore = Field(default_factory=lambda: PairScore(pairs=0))   # K_gen ↔ K_ret (mean over pairs)
    t_ret: float | None = None    # r_p·[S3 + (1 − S2)] (None when N0 went to FA)
    t_llm: float | None = None    # g_p·[S2 + (1 − S3)]
    path: list[BridgeNode] = Field(default_factory=list)
    outcome: Literal["FA", "FI", "FE", "RA", "REFLECT"] = "RA"
    call_ids: list[str] = Field(default_factory=list)


class BridgeTrace(Trace):
    kind: Literal["bridge"] = "bridge"
    n: int
    alpha: float
    beta: float
    max_reflections: int
    weights: dict[str, float]     # sparse, dense, colbert
    allocator: str                # "icl" (k demonstrations) or "fixed" (the paper's w/o-Allocator ablation)
    r_p: float = 0.5
    g_p: float = 0.5
    bias_raw: str = ""
    bias_analysis: str = ""
    bias_note: str | None = None  # how the reply was read, when not as asked
    demos: list[BridgeDemo] = Field(default_factory=list)
    s_r: int = 0
    s_g: int = 0
    k_int: str = ""
    k_int_idk: bool = False       # the model had no internal knowledge ("None")
    k_ext: str = ""
    k_ext_ids: list[str] = Field(default_factory=list)
    cycles: list[BridgeCycle] = Field(default_factory=list)
    texts_embedded: int = 0       # the scorer's cost: distinct texts embedded (once each, across cycles)
    embedding_passes: int = 0     # batched model passes (sentence + token) that embedded them
    leaf: Leaf = "RA"
    defaulted_to_ra: bool = False  # reflection ran out (max cycles), so RA
    knowledge_used: list[str] = Field(default_factory=list)   # which sets the responder read
    response_raw: str = ""
    option: str | None = None     # the chosen letter, when the question has options
    answer: str | None = None     # None: "I don't know" (or, with ``invalid``, no readable option)
    invalid: bool = False         # the responder's reply named no readable option: wrong, not a refusal (spec P17)
    notes: list[str] = Field(default_factory=list)

    def key_facts(self) -> dict[str, str]:
        """The few facts a what-if comparison shows side by side: the leaf and the tree path that reached it
        (``backend.whatif.compare``)."""
        path = self.cycles[-1].path if self.cycles else []
        return {"leaf": self.leaf, "cycles": str(len(self.cycles)),
                "path": " → ".join(f"{n.node} {'yes' if n.result else 'no'}" for n in path) or "none",
                "answer": self.answer or "I don't know"}

    def invalid_answer(self) -> bool:
        """The responder's reply named no readable option: scored wrong, not as a refusal (spec P17)."""
        return self.invalid
