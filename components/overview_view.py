"""Side-by-side results of methods on one question (pure shaping)."""

from __future__ import annotations

import pandas as pd

from backend.answers import matches_any
from backend.schema import MethodResult, Question


def verdict(result: MethodResult, question: Question) -> str:
    """Truth overlay for one result: correct / wrong / abstained / error / no gold answers."""
    if result.error:
        return "error"
    if result.abstained or not result.answers:
        return "abstained"
    if not question.gold_answers:
        return "no gold answers"
    return "correct" if any(matches_any(a, question.gold_answers) for a in result.answers) else "wrong"


def results_frame(results: dict[str, MethodResult], question: Question, show_truth: bool) -> pd.DataFrame:
    rows = []
    for name, r in results.items():
        row = {"method": name, "answers": "; ".join(r.answers) or "—", "abstained": r.abstained,
               "model calls": len(r.calls), "cached": sum(c.cache_hit for c in r.calls),
               "wall s": round(r.wall_s, 3), "error": r.error or ""}
        if show_truth:
            row["verdict"] = verdict(r, question)
        rows.append(row)
    return pd.DataFrame(rows)
