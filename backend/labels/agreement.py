"""Inter-annotator agreement: how far the analysts who labelled the same cases agree, field by field.

Compared are the analysts' own labels of each case as they count (``team.CaseLabels.counted``: each analyst's
newest label saved blind, never one saved after seeing the others'), never the adjudicated label: it settles
disagreement and is not an independent judgement. Each field of a label is turned into one
**nominal** value, because none of them has an order or a distance: a set of accepted answers, yes/no, a conflict
type, a set of documents, a method. Two sets that differ by one member disagree as much as two with none in common.

Per field, Krippendorff's α (``krippendorff.alpha``, nominal) over analysts × cases — it allows any number of
analysts and missing values — and, per pair of analysts, Cohen's κ (``sklearn.metrics.cohen_kappa_score``) over the
cases both of them judged. Both are computed by those libraries, never here.

**[ours]** choices:

* accepted answers compare as a set, case and surrounding spaces ignored (as gold agreement does,
  ``team.answer_key``); an unanswerable label's answers are the empty set, a value of its own;
* ``wrong_documents`` compare as a set of ids, exactly as spelled; none judged wrong (``[]``) is a value, not missing;
* a conflict type or best method left empty is missing (the analyst did not judge it), not a value;
* a case counts for a field when at least 2 analysts gave it a value (``cases``); ``observed`` is the share of those
  cases where every value is the same, and ``disagreements`` the others;
* α is None, with ``why``, where the library cannot compute it (no such case; one value in every label); κ of a
  pair is None where sklearn calls it undefined (both gave one same value throughout) or they share no case.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from backend.labels.model import Label
from backend.labels.team import CaseLabels, by_case

#: The compared fields, with the words the page and the CLI show.
FIELDS: dict[str, str] = {"answers": "accepted answers", "unanswerable": "unanswerable",
                          "conflict_type": "conflict type", "wrong_documents": "wrong documents",
                          "best_method": "best method"}


def value(label: Label, field: str) -> str | None:
    """The canonical nominal value of one field of a label; None: missing (the analyst did not judge it)."""
    if field == "answers":
        answers = [] if label.unanswerable else label.answers
        return json.dumps(sorted({a.strip().casefold() for a in answers}), ensure_ascii=False)
    if field == "unanswerable":
        return "true" if label.unanswerable else "false"
    if field == "conflict_type":
        return label.conflict_type
    if field == "wrong_documents":
        return json.dumps(sorted(set(label.wrong_documents)), ensure_ascii=False)
    if field == "best_method":
        return label.best_method
    raise ValueError(f"unknown field {field!r} (one of {', '.join(FIELDS)})")


@dataclass(frozen=True)
class PairAgreement:
    kappa: float | None  # Cohen's κ; None: undefined, or no shared case
    cases: int           # cases both analysts gave this field a value


@dataclass
class FieldAgreement:
    field: str
    alpha: float | None      # Krippendorff's α (nominal); None: see ``why``
    cases: int               # cases with values from at least 2 analysts
    observed: float | None   # share of those cases where every value is the same (None: no such case)
    pairs: dict[tuple[str, str], PairAgreement] = field(default_factory=dict)  # (a, b) with a < b
    disagreements: list[str] = field(default_factory=list)  # question ids, sorted
    why: str | None = None   # why α is None, in words


@dataclass
class Agreement:
    analysts: list[str]
    cases: int  # cases with at least 2 analysts' labels
    fields: dict[str, FieldAgreement]

    def as_json(self) -> dict:
        return {"analysts": list(self.analysts), "cases": self.cases, "fields": {
            name: {"alpha": f.alpha, "cases": f.cases, "observed": f.observed, "why": f.why,
                   "disagreements": list(f.disagreements),
                   "pairs": {f"{a}|{b}": {"kappa": p.kappa, "cases": p.cases} for (a, b), p in f.pairs.items()}}
            for name, f in self.fields.items()}}


def agreement(cases: Mapping[str, CaseLabels]) -> Agreement:
    """Agreement of the analysts' counted labels (never the adjudicated one, nor one saved after seeing the others')
    of ``cases`` (question id → its labels)."""
    analysts = sorted({who for case in cases.values() for who in case.counted()})
    shared = sum(len(case.counted()) >= 2 for case in cases.values())
    return Agreement(analysts, shared, {name: field_agreement(cases, name, analysts) for name in FIELDS})


def from_versions(versions: Iterable[Label], dataset: str | None = None) -> Agreement:
    """Agreement from label versions (an export, ``store.versions``): those of ``dataset`` (an identity), which may
    be left out when the versions hold one dataset only."""
    versions = [lab for lab in versions if dataset is None or lab.dataset == dataset]
    if len(found := sorted({lab.dataset for lab in versions})) > 1:
        raise ValueError(f"labels of {len(found)} datasets ({', '.join(found)}): say which one")
    return agreement(by_case(versions))


def field_agreement(cases: Mapping[str, CaseLabels], name: str, analysts: list[str]) -> FieldAgreement:
    """One field: α over analysts × the cases with at least 2 values, κ per pair, observed agreement."""
    values = {qid: {who: v for who, lab in case.counted().items() if (v := value(lab, name)) is not None}
              for qid, case in cases.items()}
    pairable = sorted(qid for qid, given in values.items() if len(given) >= 2)
    disagreements = [qid for qid in pairable if len(set(values[qid].values())) > 1]
    alpha, why = _alpha([[values[qid].get(who) for qid in pairable] for who in analysts])
    pairs = {(a, b): _kappa([(values[qid][a], values[qid][b]) for qid in pairable
                             if a in values[qid] and b in values[qid]])
             for a, b in combinations(analysts, 2)}
    observed = (len(pairable) - len(disagreements)) / len(pairable) if pairable else None
    return FieldAgreement(name, alpha, len(pairable), observed, pairs, disagreements, why)


def _alpha(rows: list[list[str | None]]) -> tuple[float | None, str | None]:
    """Krippendorff's α (nominal) of analysts × cases (None: missing), values coded as ints; or None and why."""
    if not rows or not rows[0]:
        return None, "no case has values from 2 analysts: α needs at least one"
    import krippendorff
    import numpy as np

    code = {v: i for i, v in enumerate(sorted({v for row in rows for v in row if v is not None}))}
    data = np.array([[np.nan if v is None else code[v] for v in row] for row in rows], dtype=float)
    try:
        alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError as err:
        if len(code) == 1:  # "There has to be more than one value in the domain."
            return None, "every label gives the same value: α is undefined"
        return None, f"α cannot be computed: {err}"
    if np.isnan(alpha):
        return None, "α is undefined here (the library gives NaN)"
    return alpha, None


def _kappa(pairs: list[tuple[str, str]]) -> PairAgreement:
    """Cohen's κ of two analysts over the cases both judged; None where sklearn calls it undefined (no warning)."""
    if not pairs:
        return PairAgreement(None, 0)
    import math

    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one shared label: sklearn warns, then returns NaN
        kappa = float(cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs], replace_undefined_by=math.nan))
    return PairAgreement(None if math.isnan(kappa) else kappa, len(pairs))


__all__ = ["FIELDS", "value", "PairAgreement", "FieldAgreement", "Agreement", "agreement", "from_versions"]
