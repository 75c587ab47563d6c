"""The summaries a batch run writes, typed: ``summary.json`` of an evaluation (``Summary``, written by
``backend.evaluate``) and of an attack (``AttackSummary``, ``backend.whatif.campaign``), and an attack's settings
(``attack.json``: ``AttackSettings``).

The files' keys are a machine-readable contract: a model dumped with ``as_dict()`` gives back the file's dict, key
for key and in the same order (``tests/test_outputs.py`` checks it on real runs), and the writers build the files
through these models. Unknown keys are kept (``extra="allow"``), so a file written by an older or newer version
still loads; a key an older version did not write takes its default.

Read folders with ``backend.outputs`` (``open_evaluation``, ``open_attack``), which returns these models.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, RootModel, model_serializer, model_validator

Rate = float | None  # a percentage; None where there was nothing to compute it from
#: the papers' metrics a ``Scores`` holds (``backend.scoring.PAPER_METRICS``'s keys; a test keeps the two alike)
PAPER_KEYS = ("squad_em", "squad_f1", "gold_in_response", "ramdocs_em")


class _Open(BaseModel):
    """Keeps the keys it does not know (a newer writer's), and dumps them back."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Scores(_Open):
    """The answer metrics of a group of rows (``backend.evaluate._scores``), in percent over ``scored`` rows."""

    n: int = 0                      # rows
    errors: int = 0                 # rows that ended in an error (scored as nothing)
    scored: int | None = None       # rows without error whose question has gold answers (or is unanswerable)
    #: the project's lenient match (``backend.scoring.accuracy``, "answer match (lenient)"): none of the papers' rules;
    #: a file written before the papers' metrics were kept calls it ``accuracy``
    lenient_match: Rate = Field(None, validation_alias=AliasChoices("lenient_match", "accuracy"))
    #: every gold answer and no wrong one, by the lenient match (``backend.scoring.strict_em``); formerly ``strict_em``
    lenient_all_gold: Rate = Field(None, validation_alias=AliasChoices("lenient_all_gold", "strict_em"))
    precision: Rate = None
    recall: Rate = None
    f1: Rate = None
    refusal_rate: Rate = None
    #: the papers' own metrics (``backend.scoring.PAPER_METRICS``), each under its key; None in a file written before
    squad_em: Rate = None
    squad_f1: Rate = None
    gold_in_response: Rate = None
    ramdocs_em: Rate = None

    def paper(self, key: str | None) -> Rate:
        """A paper's metric by its key (``PAPER_METRICS``); None for another key (RC-RAG's "risk": ``risk``)."""
        return getattr(self, key) if key in PAPER_KEYS else None

    @model_validator(mode="before")
    @classmethod
    def _scored_default(cls, data: Any) -> Any:
        """A file written before ``scored`` existed: every row was scored."""
        if isinstance(data, dict) and data.get("scored") is None and "n" in data:
            data = {**data, "scored": data["n"]}
        return data


class RiskSummary(_Open):
    """RC-RAG's folds and risk metrics of a method that abstains (``backend.scoring.risk_metrics``)."""

    AK: int = 0
    AD: int = 0
    UK: int = 0
    UD: int = 0
    risk: Rate = None
    carefulness: Rate = None
    alignment: Rate = None
    coverage: Rate = None
    overcaution: Rate = None
    recall: Rate = None
    unlabelled: int = 0


class OtherReading(_Open):
    """One method's rows run again with the other reading (``backend.evaluate``'s ``other_reading``): its metrics."""

    reading: str
    scores: Scores = Field(default_factory=Scores)
    risk: RiskSummary | None = None
    #: rows that could not be run again from the reply cache (the other reading asked for a reply never made)
    not_replayed: int = 0


class MethodSummary(Scores):
    """One method's entry of ``summary.json``: its answer metrics, the pairs without a row (``missing``), mean cost
    per row, ``risk`` (only for a method that abstains) and the same metrics per slice (``slices[family][name]``)."""

    missing: int = 0
    mean_calls: float | None = None
    cache_hits: int = 0
    mean_prompt_tokens: float | None = None
    mean_completion_tokens: float | None = None
    mean_wall_s: float | None = None
    #: percent of the replies (with a recorded read) the reader could not read: the method took its paper's default
    format_failures: Rate = None
    unreadable_calls: int = 0
    lenient_calls: int = 0
    #: US dollars its calls cost (``backend.cost.calls_cost``: known costs only; a cache hit costs $0), what its
    #: cache hits saved, and how many calls have no known cost (None: no call has one, the price is unknown)
    cost_usd: float | None = None
    saved_usd: float | None = None
    cost_unknown_calls: int = 0
    # (in ``summarize``'s order: the file's keys are the model's, in the model's order)
    #: how its replies were read (``backend.evaluate.reading_counts``): the reading, the decisions read, those the other
    #: reading would have read differently (and their share of the decisions), the rows with one
    reading: str | None = None
    decisions_read: int = 0
    reading_dependent: int = 0
    reading_dependent_pct: Rate = None
    rows_reading_dependent: int = 0
    #: the key of its own paper's metric (``MethodSpec.paper_metric``; "risk": RC-RAG's risk and coverage)
    own_metric: str | None = None
    risk: RiskSummary | None = None
    slices: dict[str, dict[str, Scores]] = Field(default_factory=dict)
    #: the same rows read the other way (``backend.evaluate``'s ``other_reading``): that reading and its metrics
    other_reading: OtherReading | None = None

    @property
    def mean_tokens(self) -> float | None:
        """Prompt + completion tokens per row; None before any row."""
        if self.mean_prompt_tokens is None:
            return None
        return (self.mean_prompt_tokens or 0) + (self.mean_completion_tokens or 0)

    @model_serializer(mode="wrap")
    def _without_absent_risk(self, handler) -> dict[str, Any]:
        data = handler(self)
        if data.get("risk") is None:  # the file has no "risk" key for a method that never abstains
            data.pop("risk", None)
        if data.get("other_reading") is None:  # nor "other_reading" when only one reading was run
            data.pop("other_reading", None)
        return data


class GoldSource(_Open):
    """Where the gold answers came from: the dataset, or analysts' labels (``backend.labels.gold``'s details)."""

    from_: str = Field(default="dataset", alias="from")


class Summary(_Open):
    """``summary.json`` of a batch evaluation (``backend.evaluate.summarize``)."""

    dataset: str
    model: str | None = None
    questions: int = 0
    methods: dict[str, MethodSummary] = Field(default_factory=dict)
    missing: dict[str, int] = Field(default_factory=dict)   # method -> pairs without a row
    errors: dict[str, int] = Field(default_factory=dict)    # method -> rows that are errors
    complete: bool = False
    notes: list[str] = Field(default_factory=list)
    gold: GoldSource = Field(default_factory=GoldSource)
    cost_usd: float | None = None   # every method's calls, in US dollars (None: no cost known)
    stopped: str | None = None      # why the run stopped before every pair had a row (a cost limit), else None

    @property
    def method_names(self) -> list[str]:
        return list(self.methods)

    def slice_families(self) -> set[str]:
        return {f for m in self.methods.values() for f in m.slices}

    def as_dict(self) -> dict[str, Any]:
        """The file's content (``summary.json``'s keys, in its order)."""
        return self.model_dump(mode="json", by_alias=True)


# --- attacks -------------------------------------------------------------------------------------------------

class AttackRates(_Open):
    """Rates in percent over the rows without error (``n``) of one group of attacked rows."""

    attack_success_rate: Rate = None
    accuracy: Rate = None
    abstention: Rate = None
    n: int = 0
    errors: int = 0
    #: percent of the replies (with a recorded read) the reader could not read (``backend.evaluate.format_counts``)
    format_failures: Rate = None
    unreadable_calls: int = 0
    lenient_calls: int = 0


class AttackCell(AttackRates):
    """One method at one k: its rates, the rows not run yet, and the rates per number of clean documents."""

    missing: int = 0
    by_clean_documents: dict[str, AttackRates] = Field(default_factory=dict)


class AttackSummary(RootModel[dict[str, dict[str, AttackCell]]]):
    """``summary.json`` of an attack: ``{method: {k: AttackCell}}`` (k as a string, as JSON keys are)."""

    root: dict[str, dict[str, AttackCell]] = Field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.root

    @property
    def method_names(self) -> list[str]:
        return list(self.root)

    def ks(self) -> list[int]:
        """Every k, numerically (the file's keys are strings: "10" sorts before "3")."""
        return sorted({int(k) for per_k in self.root.values() for k in per_k})

    def cells(self, methods: list[str] | None = None) -> Iterator[tuple[str, int, AttackCell]]:
        """(method, k, cell) for ``methods`` (default: the file's order), k numerically."""
        for method in self.root if methods is None else methods:
            for k in sorted(self.root.get(method, {}), key=int):
                yield method, int(k), self.root[method][k]

    def complete(self) -> bool:
        return all(c.missing == 0 for _, _, c in self.cells())

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class AttackSettings(_Open):
    """``attack.json``: what the attack was (``backend.whatif.campaign``); a resume must match it."""

    dataset: str | None = None
    model: str | None = None
    ks: list[int] = Field(default_factory=list)
    placement: str | None = None
    source: str | None = None
    questions: int = 0
    not_attacked: list[str] = Field(default_factory=list)   # question ids with no target answer
    plans: dict[str, dict[str, Any]] = Field(default_factory=dict)  # question id -> its AttackPlan

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


__all__ = ["AttackCell", "AttackRates", "AttackSettings", "AttackSummary", "GoldSource", "MethodSummary",
           "RiskSummary", "Scores", "Summary"]
