"""RA-RAG stage 1 per dataset: the on-disk cache of its result and the comparison with true reliability.

The estimate (``ReliabilityEstimate``) is computed by ``RARAG.calibrate`` on truth-stripped questions;
this module keys it by everything it depends on (the calibration questions' stripped content, the source
list, the model, the evidence mode and the method's stage-1 parameters, the prompt included) and keeps
it as JSON in ``<cache dir>/reliability/``. ``compare_with_truth`` is evaluation code: the only place
where estimated and true reliabilities meet.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

from backend.paths import default_cache_dir
from backend.schema import Question, ReliabilityEstimate, Source

_FORMAT = 1


def calibration_key(questions: list[Question], sources: list[str], model: str, evidence_mode: str,
                    params: dict[str, Any]) -> str:
    """sha256 over what stage 1 sees (never truth: callers pass stripped questions; labels are excluded)."""
    h = hashlib.sha256()
    h.update(json.dumps({"format": _FORMAT, "sources": sources, "model": model, "evidence": evidence_mode,
                         "params": params}, sort_keys=True, default=str).encode())
    for q in questions:
        h.update(json.dumps([q.id, q.question, [(d.id, d.source_name, d.text) for d in q.documents]],
                            ensure_ascii=False).encode())
    return h.hexdigest()


def cache_path(dataset: str, key: str, cache_dir: str | Path | None = None) -> Path:
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", dataset).strip("-")[:40] or "dataset"
    return Path(cache_dir or default_cache_dir()) / "reliability" / f"{slug}-{key[:20]}.json"


def load(dataset: str, key: str, cache_dir: str | Path | None = None) -> ReliabilityEstimate | None:
    path = cache_path(dataset, key, cache_dir)
    try:
        est = ReliabilityEstimate.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # missing, unreadable or from an older format: recompute
    return est if est.key == key else None


def save(est: ReliabilityEstimate, cache_dir: str | Path | None = None) -> Path:
    path = cache_path(est.dataset, est.key, cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(est.model_dump_json(indent=1), encoding="utf-8")
    tmp.replace(path)  # atomic: a killed run never leaves half a file
    return path


def pearson(xs: list[float], ys: list[float]) -> float | None:
    """Pearson r; None with fewer than two points or no variance."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def compare_with_truth(est: ReliabilityEstimate, truth: list[Source]) -> dict[str, Any]:
    """``{"sources": [...], "mae", "pearson_r", "iterations"}``: per source ŵ, v, true p_i (null when
    unknown), counts and |ŵ − p|; MAE and r over sources with both an estimate and a true value."""
    true = {s.name: s.true_reliability for s in truth}
    rows, pairs = [], []
    for s in est.sources:
        p = true.get(s.name)
        both = p is not None and s.estimated is not None
        rows.append({"name": s.name, "estimated": s.estimated, "weight": s.weight, "true_reliability": p,
                     "abs_error": round(abs(s.estimated - p), 6) if both else None,
                     "answered": s.answered, "agreed": s.agreed, "idk": s.idk, "no_documents": s.no_documents})
        if both:
            pairs.append((s.estimated, p))
    mae = round(sum(abs(a - b) for a, b in pairs) / len(pairs), 6) if pairs else None
    r = pearson([a for a, _ in pairs], [b for _, b in pairs])
    return {"sources": rows, "mae": mae, "pearson_r": None if r is None else round(r, 6),
            "iterations": est.iterations}
