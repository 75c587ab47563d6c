"""The on-disk store of methods' dataset-level artefacts (``Method.prepare``): one JSON file per key.

``<cache dir>/<method.prepared_folder>/<dataset slug>-<key prefix>.json`` holds ``{"preparation": {...},
"artefact": {...}}``: the artefact and what computing it cost. Writes are atomic (a killed run never leaves half
a file); a missing, unreadable or outdated file is a miss, and the artefact is recomputed.

A miss in the user's cache falls back to the artefacts shipped with the bundled datasets (``sample_data/prepared/``,
same layout, written by ``build-sample``: ``backend.sample.prepared``) under the same key; their ``computed_at`` is
0, so a run reports them as reused. ``CONFLICTLENS_SHIPPED_PREPARED=0`` turns that off.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from pydantic import BaseModel, ValidationError

from backend.paths import SAMPLE_DATA, default_cache_dir, private_dir, write_private
from backend.schema import Preparation


def path(folder: str, dataset: str, key: str, cache_dir: str | Path | None = None) -> Path:
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", dataset).strip("-")[:40] or "dataset"
    return Path(cache_dir or default_cache_dir()) / folder / f"{slug}-{key[:20]}.json"


SHIPPED_DIR = SAMPLE_DATA / "prepared"


def load(model: type[BaseModel], folder: str, dataset: str, key: str,
         cache_dir: str | Path | None = None) -> tuple[BaseModel, Preparation] | None:
    found = _load(model, path(folder, dataset, key, cache_dir), key)
    if found is None and os.environ.get("CONFLICTLENS_SHIPPED_PREPARED", "1") != "0":
        found = _load(model, path(folder, dataset, key, SHIPPED_DIR), key)
    return found


def _load(model: type[BaseModel], file: Path, key: str) -> tuple[BaseModel, Preparation] | None:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        artefact, preparation = model.model_validate(data["artefact"]), Preparation.model_validate(data["preparation"])
    except (OSError, ValueError, KeyError, TypeError, ValidationError):
        return None
    # an artefact that records its key must carry this one (a prefix collision or a hand-edited file)
    return None if getattr(artefact, "key", key) != key else (artefact, preparation)


def save(artefact: BaseModel, preparation: Preparation, folder: str, dataset: str, key: str,
         cache_dir: str | Path | None = None) -> Path:
    target = path(folder, dataset, key, cache_dir)
    private_dir(target.parent)
    tmp = target.with_suffix(".tmp")
    write_private(tmp, json.dumps({"preparation": preparation.model_dump(mode="json"),
                                   "artefact": artefact.model_dump(mode="json")}, indent=1, ensure_ascii=False))
    tmp.replace(target)
    return target
