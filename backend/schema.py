"""Typed data model shared by the library, the CLI and the dashboard.

Ground truth lives in a few named fields only (``TRUTH_FIELDS``): gold/wrong answers, each document's
``label``, a source's ``true_reliability``/``coverage`` and the free-form ``meta``. They exist for evaluation
and for the dashboard's truth overlays; ``strip_truth`` removes all of them, and methods and models only
ever receive stripped questions.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

DocType = Literal["correct", "misinfo", "noise"]

#: Every field that carries ground truth, by model. Kept next to the models so a new truth field is
#: hard to forget in ``strip_truth``.
TRUTH_FIELDS = {
    "Question": ("gold_answers", "wrong_answers", "meta"),
    "Document": ("label",),
    "Source": ("true_reliability", "coverage"),
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocLabel(_Model):
    """Truth about one document: what kind it is and which answer it supports (``None`` for noise)."""

    type: DocType
    answer: str | None = None


class Document(_Model):
    id: str
    source: str | None = None  # None: the document is its own source (RAMDocs)
    text: str
    label: DocLabel | None = None

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is empty")
        return v

    @property
    def source_name(self) -> str:
        """The source this document counts under; a source-less document stands for itself."""
        return self.source or self.id


class Question(_Model):
    id: str
    question: str
    documents: list[Document]
    gold_answers: list[str] = Field(default_factory=list)
    wrong_answers: list[str] = Field(default_factory=list)
    #: What the simulated offline model "remembers" about this question (model input, not truth).
    internal_knowledge: str | None = None
    #: Answer options for multiple-choice settings (BRIDGE/TRD); an input, not truth.
    options: list[str] = Field(default_factory=list)
    #: Free-form annotations (scenario, provenance...). Treated as truth: never shown to a method.
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("question is empty")
        return v

    @property
    def has_truth(self) -> bool:
        return bool(self.gold_answers or self.wrong_answers or self.meta
                    or any(d.label for d in self.documents))


class Source(_Model):
    name: str
    true_reliability: float | None = Field(default=None, ge=0.0, le=1.0)
    coverage: float | None = Field(default=None, ge=0.0, le=1.0)


class Dataset(_Model):
    name: str
    path: str
    questions: list[Question]
    sources: list[Source] = Field(default_factory=list)
    format: Literal["project", "ramdocs"] = "project"
    #: Non-fatal observations made while loading (e.g. a very long document kept whole).
    notes: list[str] = Field(default_factory=list, exclude=True)

    def question(self, ref: str) -> Question:
        """A question by id, or by 1-based position written ``@N``."""
        if ref.startswith("@"):
            try:
                n = int(ref[1:])
            except ValueError:
                raise KeyError(f"{ref!r}: expected @N with N a number") from None
            if not 1 <= n <= len(self.questions):
                raise KeyError(f"{ref}: the dataset has {len(self.questions)} questions")
            return self.questions[n - 1]
        for q in self.questions:
            if q.id == ref:
                return q
        raise KeyError(f"no question with id {ref!r} in {self.name}")

    @property
    def multi_source(self) -> bool:
        """True when documents name sources shared across questions (RA-RAG's setting)."""
        return any(d.source for q in self.questions for d in q.documents)

    def source_names(self) -> list[str]:
        if self.sources:
            return [s.name for s in self.sources]
        seen: dict[str, None] = {}
        for q in self.questions:
            for d in q.documents:
                if d.source:
                    seen.setdefault(d.source)
        return list(seen)

    def documents(self) -> list[tuple[Question, Document]]:
        return [(q, d) for q in self.questions for d in q.documents]


def strip_truth(obj: Question | Dataset | Source | Document):
    """A deep copy of ``obj`` with every ground-truth field emptied (see ``TRUTH_FIELDS``)."""
    if isinstance(obj, Document):
        return obj.model_copy(update={"label": None})
    if isinstance(obj, Source):
        return obj.model_copy(update={"true_reliability": None, "coverage": None})
    if isinstance(obj, Question):
        return obj.model_copy(update={
            "gold_answers": [], "wrong_answers": [], "meta": {},
            "documents": [strip_truth(d) for d in obj.documents],
        })
    if isinstance(obj, Dataset):
        return obj.model_copy(update={
            "questions": [strip_truth(q) for q in obj.questions],
            "sources": [strip_truth(s) for s in obj.sources],
        })
    raise TypeError(f"strip_truth: unsupported type {type(obj).__name__}")


# --- model calls and method results -------------------------------------------------------------

class LLMCall(_Model):
    """One model call as the dashboard shows it. Never holds an API key or an api_base URL."""

    id: str
    step: str                      # the method's step name, e.g. "answer", "debate_round_2"
    task: str                      # the offline model's task name (backend.llm.tasks)
    method: str | None = None
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


class BaselineTrace(_Model):
    """What a baseline read and said: the evidence it was given and how its reply was parsed."""

    kind: Literal["baseline"] = "baseline"
    evidence_mode: Literal["none", "given", "retrieve"]
    documents: list[str] = Field(default_factory=list)   # document ids, in prompt order
    raw_answer: str | None = None
    parsed_answer: str | None = None
    parse_note: str | None = None


#: Every method's trace, told apart by ``kind``; the per-method models are defined at the end of the file.
Trace = Annotated[Union[BaselineTrace, "RARAGTrace", "MadamTrace"], Field(discriminator="kind")]


class MethodResult(_Model):
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


# --- ra_rag trace ---

class SourceReliability(_Model):
    """Stage-1 result for one source (RA-RAG §3.3, eq. 4): ŵ_i = agreed / answered, v_i = N·ŵ_i − 1."""

    name: str
    estimated: float | None = None   # ŵ_i; None when the source never answered (no evidence)
    weight: float = 0.0              # v_i (0 when ŵ_i is None: neutral)
    answered: int = 0                # non-IDK filtered answers: the denominator of eq. 4
    agreed: int = 0                  # answers equal to the pseudo-label: the numerator
    idk: int = 0                     # IDK answers (model said so, f_align filtered, or no documents)
    no_documents: int = 0            # of which: no documents of this source, so no model call


class ReliabilityIteration(_Model):
    iteration: int
    weights: list[float]               # v after this iteration, in ``ReliabilityEstimate.sources`` order
    estimated: list[float | None]      # ŵ after this iteration
    changed: int                       # pseudo-labels that differ from the previous iteration (1st: all M)


class ReliabilityEstimate(_Model):
    """RA-RAG stage 1 (Algorithm 1) over a dataset's calibration questions, run without labels.

    Not ground truth: weights are what the method estimated from unlabelled answers; the true
    reliabilities are only ever joined in by evaluation code."""

    sources: list[SourceReliability]
    questions: int                     # calibration questions used (M1)
    iterations: int
    converged: bool
    cycle: bool = False                # stopped because the pseudo-labels repeated an earlier state
    history: list[ReliabilityIteration] = Field(default_factory=list)
    dataset: str = ""
    model: str = ""
    evidence_mode: str = "given"
    params: dict[str, Any] = Field(default_factory=dict)
    calls: int = 0                     # model calls made (cache hits included)
    cache_hits: int = 0
    seconds: float = 0.0
    key: str = ""                      # the on-disk cache key

    def weights(self) -> dict[str, float]:
        return {s.name: s.weight for s in self.sources}

    def estimated(self) -> dict[str, float | None]:
        return {s.name: s.estimated for s in self.sources}


class RASourceAnswer(_Model):
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


class RAWalkStep(_Model):
    rank: int
    source: str
    weight: float
    status: Literal["selected", "skipped", "not_queried"]


class RAVote(_Model):
    """One answer cluster and its score under each aggregation (None: not computable in this run)."""

    answer: str                        # display form: the highest-ranked member's wording
    cluster: str
    sources: list[str]                 # every queried source whose filtered answer is in this cluster
    mv: float | None = None
    wmv: float | None = None
    rrss: float | None = None
    oracle_wmv: float | None = None


class RAEntailment(_Model):
    premise: str
    hypothesis: str
    entails: bool | None
    call_id: str
    parse_note: str | None = None


class RARAGTrace(_Model):
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



# --- madam trace ---------------------------------------------------------------------------------
# MADAM-RAG (backend/methods/madam.py): one agent per document, debate rounds, an aggregator per round.

class MadamAgent(_Model):
    number: int                    # the stable label "Agent {number}" (1-based document position)
    document_id: str


class MadamTurn(_Model):
    """One agent's response in one round, as it was parsed."""

    agent: int
    round: int
    raw: str                       # the reply (reconstructed for released traces: see MadamTrace.origin)
    answer: str | None             # parsed answer; None = unknown (or no 'Answer:' in the reply)
    explanation: str = ""
    parse_ok: bool = True
    parse_note: str | None = None
    history: str | None = None     # the exact {history} text the agent read (None in round 1)
    changed: bool | None = None    # vs its previous round's answer (None in round 1), madam-rag.md §8.4
    previous_answer: str | None = None
    call_id: str | None = None


class MadamAggregation(_Model):
    round: int
    order: list[int]               # agent numbers in the order the aggregator read them (the shuffle)
    raw: str
    answers: list[str]             # "All Correct Answers", unknowns removed
    explanation: str = ""
    parse_ok: bool = True
    parse_note: str | None = None
    call_id: str | None = None


class MadamRound(_Model):
    round: int
    turns: list[MadamTurn]
    n_changed: int | None = None   # agents whose answer changed (None in round 1: nothing to compare)
    converged: bool = False        # the stop test passed: no agent changed its answer
    aggregation: MadamAggregation | None = None
    no_aggregation_reason: str | None = None


class MadamAnswerSupport(_Model):
    """A final (or rejected) answer and the agents/documents behind it."""

    answer: str
    agents: list[int]
    documents: list[str]
    rounds: list[int] = Field(default_factory=list)   # rejected answers: the rounds they were proposed in


class MadamTrace(_Model):
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



MethodResult.model_rebuild()  # resolve the per-method traces named in ``Trace``
