"""RA-RAG's trace (``backend/methods/ra_rag``) and its dataset-level artefact, the stage-1 estimate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_serializer

from backend.schema.base import StrictModel
from backend.schema.result import ReadingDifference
from backend.schema.trace import Trace


class SourceReliability(StrictModel):
    """Stage-1 result for one source (RA-RAG paper §3.3, eq. 4; docs/methods/ra_rag.md §3.3): ŵ_i = agreed / answered,
    v_i = N·ŵ_i − 1."""

    name: str
    estimated: float | None = None   # ŵ_i; None when the source never answered (no evidence)
    weight: float = 0.0              # v_i (0 when ŵ_i is None: neutral)
    answered: int = 0                # non-IDK filtered answers: the denominator of eq. 4
    agreed: int = 0                  # answers equal to the pseudo-label: the numerator
    idk: int = 0                     # IDK answers (model said so, f_align filtered, or no documents)
    no_documents: int = 0            # of which: no documents of this source, so no model call


class ReliabilityIteration(StrictModel):
    iteration: int
    weights: list[float]               # v after this iteration, in ``ReliabilityEstimate.sources`` order
    estimated: list[float | None]      # ŵ after this iteration
    changed: int                       # pseudo-labels that differ from the previous iteration (1st: all M)


class StageReadings(StrictModel):
    """How stage 1 read its calibration replies (``backend.methods.reading``): the estimate serves every question,
    so the calibration answers the other reading would read differently are counted here, not on a question's
    result (``MethodResult.reading_differences`` holds the question's own decisions only)."""

    reading: Literal["tolerant", "paper"]
    decisions: int                     # calibration replies read (one decision each: a source's answer, or a judgement)
    differences: int                   # of which the other reading would have read differently
    examples: list[ReadingDifference] = Field(default_factory=list)  # the first ones, in calibration order


class ReliabilityEstimate(StrictModel):
    """RA-RAG stage 1 (Algorithm 1) over a dataset's calibration questions, run without labels.

    Not ground truth: weights are what the method estimated from unlabelled answers; the true
    reliabilities are only ever joined in by evaluation code."""

    sources: list[SourceReliability]
    questions: int                     # calibration questions used (M1)
    iterations: int
    converged: bool
    cycle: bool = False                # stopped because the pseudo-labels repeated an earlier state
    #: questions with answers but no pseudo-label in the last iteration (a tie, see ``stage1`` ``ties``)
    unlabelled: int = 0
    history: list[ReliabilityIteration] = Field(default_factory=list)
    dataset: str = ""
    model: str = ""
    evidence_mode: str = "given"
    params: dict[str, Any] = Field(default_factory=dict)
    calls: int = 0                     # model calls made (cache hits included)
    cache_hits: int = 0
    seconds: float = 0.0
    key: str = ""                      # the on-disk cache key
    #: the calibration answers the other reading would read differently; None when there are none (and in
    #: estimates made before readings were recorded). The estimate's own reading is ``params["reading"]`` (absent:
    #: tolerant). Left out of the serialised form when None, so estimates without differences (the shipped ones)
    #: are stored as before.
    readings: StageReadings | None = None

    @model_serializer(mode="wrap")
    def _without_empty_readings(self, handler):
        data = handler(self)
        if self.readings is None and isinstance(data, dict):
            data.pop("readings", None)
        return data

    def weights(self) -> dict[str, float]:
        return {s.name: s.weight for s in self.sources}

    def estimated(self) -> dict[str, float | None]:
        return {s.name: s.estimated for s in self.sources}


class RASourceAnswer(StrictModel):
    """One source's per-question answer: evidence, raw reply, f_align verdict, weight."""

    source: str
    rank: int                          # 1-based position when sources are sorted by weight (walk order)
    weight: float
    estimated: float | None = None
    queried: bool = False              # evidence gathered and (if any) the model asked
    called: bool = False               # a model call was made (False: no documents, or never queried)
    step: str | None = None            # "source_answer" (the κ-RRSS walk) or "compare_answer" (MV/WMV only)
    call_id: str | None = None
    documents: list[str] = Field(default_factory=list)
    raw_answer: str | None = None
    parsed_answer: str | None = None   # None: the model said "I don't know"
    parse_note: str | None = None
    rouge1_precision: float | None = None
    matched_tokens: list[str] = Field(default_factory=list)
    unmatched_tokens: list[str] = Field(default_factory=list)
    filtered_answer: str | None = None  # a_i: None = IDK
    filter_reason: str | None = None    # why a_i is IDK
    cluster: str | None = None          # the answer cluster key a_i votes for


class RAWalkStep(StrictModel):
    rank: int
    source: str
    weight: float
    status: Literal["selected", "skipped", "not_queried"]


class RAVote(StrictModel):
    """One answer cluster and its score under each aggregation (None: not computable in this run)."""

    answer: str                        # display form: the highest-ranked member's wording
    cluster: str
    sources: list[str]                 # every queried source whose filtered answer is in this cluster
    mv: float | None = None
    wmv: float | None = None
    rrss: float | None = None
    oracle_wmv: float | None = None


class RAEntailment(StrictModel):
    premise: str
    hypothesis: str
    entails: bool | None
    call_id: str
    parse_note: str | None = None


class RARAGTrace(Trace):
    kind: Literal["ra_rag"] = "ra_rag"
    variant: str
    evidence_mode: str
    per_document: bool = False          # documents name no source: each document is its own source
    kappa: int
    top_k: int
    align_threshold: float
    clustering: str
    weights_note: str                   # where the weights came from
    sources: list[RASourceAnswer]       # in walk order (descending weight, ties by source order)
    walk: list[RAWalkStep] = Field(default_factory=list)
    walk_calls: int = 0                 # model calls the lazy κ-RRSS walk needed
    compare_calls: int = 0              # model calls made only to show MV/WMV beside κ-RRSS
    votes: list[RAVote] = Field(default_factory=list)
    answers: dict[str, str | None] = Field(default_factory=dict)  # variant -> winner (None = IDK)
    final_answer: str | None = None
    entailments: list[RAEntailment] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def key_facts(self) -> dict[str, str]:
        """The few facts a what-if comparison shows side by side: the votes of the run's aggregation and the
        κ-RRSS walk (``backend.whatif.compare``)."""
        votes = [(v.answer, getattr(v, self.variant, None)) for v in self.votes]
        walk = {"selected": "✓", "skipped": "✗", "not_queried": "·"}
        return {"votes": " · ".join(f"{a}: {s:g}" for a, s in votes if s is not None) or "none",
                "walk": ", ".join(f"{w.source} {walk[w.status]}" for w in self.walk) or "no walk (majority vote)",
                "answer": self.final_answer or "I don't know"}
