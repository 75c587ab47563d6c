"""Team labelling on the Label page, shaped for display: the round in words, the agreement table, the cases behind
each disagreement, and the labels of a case side by side. Pure functions of ``backend.labels`` objects; what a round,
a current label, agreement and gold are is ``backend.labels.team`` / ``backend.labels.agreement``'s business."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from backend.labels.agreement import FIELDS, Agreement, value
from backend.labels.model import SIGNED_IN, Label
from backend.labels.queue import Case
from backend.labels.team import CaseLabels, Round, case_progress
from backend.report.text import plural

#: The page's three views (``?view=`` in a link).
VIEWS = {"label": "Label", "agreement": "Agreement", "adjudicate": "Adjudicate"}


def who(name: str, source: str) -> str:
    """A name and, unless it is a signed-in identity, where it came from (typed, or the command line)."""
    return name if source == SIGNED_IN else f"{name} ({'from the command line' if source == 'command-line' else source})"


def round_text(rnd: Round | None) -> str:
    """The round in one line (plain text: data inside)."""
    if rnd is None:
        return "No labelling round: each case needs one label, and no one leads (set a round to label as a team)"
    return (f"{plural(rnd.overlap, 'analyst')} label each case · lead: {rnd.lead} · set by "
            f"{who(rnd.set_by, rnd.set_by_source)} at {rnd.created_at:%Y-%m-%d %H:%M} UTC")


def progress_text(progress: dict, analyst: str) -> str:
    """'4 of 6 cases have 2 of 2 labels · you: 3 labelled · by analyst: ana 4, ben 3' (plain text); alone, without
    a round: '3 / 6 labelled'."""
    n, by = progress["overlap"], progress["analysts"]
    if n == 1:
        parts = [f"{progress['complete']} / {progress['cases']} labelled"]
    else:
        parts = [f"{progress['complete']} of {plural(progress['cases'], 'case')} "
                 f"{'has' if progress['cases'] == 1 else 'have'} {n} of {n} labels"]
        if analyst:
            parts.append(f"you: {by.get(analyst, 0)} labelled")
    if len(by) > 1 or n > 1 and by:
        parts.append("by analyst: " + ", ".join(f"{a} {k}" for a, k in by.items()))
    return " · ".join(parts)


def agreement_frame(agreement: Agreement) -> pd.DataFrame:
    """One row per field: Krippendorff's α, the cases behind it, the share of cases where all labels agree, then
    Cohen's κ of each pair of analysts with its cases."""
    pairs = sorted({p for f in agreement.fields.values() for p in f.pairs})
    rows = []
    for name, f in agreement.fields.items():
        row = {"field": FIELDS.get(name, name), "α (Krippendorff)": _num(f.alpha), "cases": f.cases,
               "all agree": "—" if f.observed is None else f"{f.observed:.0%}",
               "disagreements": len(f.disagreements)}
        for a, b in pairs:
            pa = f.pairs.get((a, b))
            row[f"κ {a} · {b}"] = "—" if pa is None else f"{_num(pa.kappa)} ({pa.cases})"
        rows.append(row)
    return pd.DataFrame(rows)


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def disagreement_frame(agreement: Agreement, cases: Mapping[str, Case], order: list[str]) -> pd.DataFrame:
    """The cases behind each disagreement: one row per case (queue order), the fields its labels differ on."""
    fields_of: dict[str, list[str]] = {}
    for name, f in agreement.fields.items():
        for qid in f.disagreements:
            fields_of.setdefault(qid, []).append(FIELDS.get(name, name))
    ids = [q for q in order if q in fields_of] + sorted(set(fields_of) - set(order))
    rows = [{"id": q, "differ on": ", ".join(fields_of[q]),
             "question": cases[q].question.question if q in cases else ""} for q in ids]
    return pd.DataFrame(rows, columns=["id", "differ on", "question"])


def disputed_ids(agreement: Agreement, current: Mapping[str, CaseLabels], order: list[str]) -> list[str]:
    """The cases to adjudicate: those whose labels give different answers first (they have no gold until settled),
    then those differing only on other fields; each in queue order."""
    answers = {q for q, c in current.items() if c.status() == "disputed"}  # no gold until settled
    differ = {q for f in agreement.fields.values() for q in f.disagreements} | answers
    rank = {q: i for i, q in enumerate(dict.fromkeys(order))}
    return sorted(differ, key=lambda q: (q not in answers, rank.get(q, len(rank)), q))


def adjudication_frame(ids: list[str], current: Mapping[str, CaseLabels], cases: Mapping[str, Case],
                       active: str | None, overlap: int) -> pd.DataFrame:
    rows = []
    for q in ids:
        c = current.get(q)
        rows.append({"": "▶" if q == active else "", "id": q,
                     "answers": "differ" if c is not None and not c.agree() else "agree",
                     "labels": case_progress(c, overlap),
                     "settled": "" if c is None or c.adjudicated is None else
                     "yes, before newer labels" if c.settled_before() else "yes",
                     "question": cases[q].question.question if q in cases else ""})
    return pd.DataFrame(rows, columns=["", "id", "answers", "labels", "settled", "question"])


def side_by_side(case: CaseLabels) -> list[tuple[str, Label]]:
    """(heading, label) for each analyst's current label, then the adjudicated one. A label saved after seeing the
    others' says so, and which of theirs counts instead (``CaseLabels.counted``)."""
    counted = case.counted()
    out = [(f"{who(a, lab.analyst_source)} · {lab.created_at:%Y-%m-%d %H:%M} UTC" + (_seen_note(counted.get(a))
                                                                                    if lab.seen_others else ""), lab)
           for a, lab in sorted(case.analysts.items())]
    if case.adjudicated is not None:
        lab = case.adjudicated
        later = case.settled_before()
        out.append((f"Adjudicated by {who(lab.analyst, lab.analyst_source)} · {lab.created_at:%Y-%m-%d %H:%M} UTC"
                    + (f" · before the newer label of {', '.join(later)}" if later else ""), lab))
    return out


def _seen_note(blind: Label | None) -> str:
    if blind is None:
        return " · saved after seeing the others' labels: not counted (no blind label of theirs)"
    answers = "unanswerable" if blind.unanswerable else "; ".join(blind.answers)
    return (f" · saved after seeing the others' labels: not counted (their blind label of "
            f"{blind.created_at:%Y-%m-%d %H:%M} UTC counts: {answers})")


def differing_fields(case: CaseLabels) -> list[str]:
    """The fields (their words) on which the analysts' counted labels differ (``CaseLabels.counted``)."""
    labels = list(case.counted().values())
    return [words for name, words in FIELDS.items() if len({value(lab, name) for lab in labels}) > 1]


__all__ = ["VIEWS", "who", "round_text", "progress_text", "agreement_frame", "disagreement_frame", "disputed_ids",
           "adjudication_frame", "side_by_side", "differing_fields"]
