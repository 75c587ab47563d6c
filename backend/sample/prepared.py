"""Methods' dataset-level artefacts (``Method.prepare``: RA-RAG's stage 1) for the bundled datasets, computed once
by ``python -m backend build-sample`` with the default (offline) model, the default evidence mode and each method's
default parameters, and shipped in ``sample_data/prepared/`` in the on-disk store's own layout (``backend.prepared``).

The store reads them when a user's cache has no artefact under the same key; the key hashes everything the
artefact depends on (questions, documents, sources, model, evidence mode, parameters, prompt), so any other setting,
model or dataset version misses and computes as before. Timings are zeroed so a rebuild is byte-identical, and
``tests/test_shipped_prepared.py`` recomputes them and compares: a change to a method or the offline reader that
moves the result fails the test instead of leaving a stale file.
"""

from __future__ import annotations

from pathlib import Path

from backend import prepared as store
from backend.methods import METHODS
from backend.methods.base import run_sync
from backend.schema import Dataset, Preparation

FOLDER = "prepared"
#: Fields of an artefact that measure time or cache state, not what was computed (zeroed in shipped files).
VOLATILE = {"seconds": 0.0, "cache_hits": 0}


def compute(dataset: Dataset, name: str):
    """(artefact, preparation, key) of method ``name`` on ``dataset`` with the defaults, or None when it needs none.
    The artefact is computed afresh (no cache), and its timings zeroed."""
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    runner = Runner(dataset, llm=LLMConfig(cache_mode="off"))
    method, key = runner.method(name), runner.prepare_key(name)
    if key is None:
        return None
    artefact = run_sync(method.prepare(runner.stripped, runner.context(name)))
    artefact = artefact.model_copy(update={k: v for k, v in VOLATILE.items() if k in type(artefact).model_fields})
    preparation = Preparation(label=method.prepare_label, calls=getattr(artefact, "calls", 0))
    return artefact, preparation, key


def build_prepared(out_dir: Path, datasets: list[Dataset]) -> str:
    """Write every bundled dataset's artefacts under ``out_dir/prepared/``; one summary line."""
    written = []
    for ds in datasets:
        for name, cls in sorted(METHODS.items()):
            if cls.prepared_type is None or (found := compute(ds, name)) is None:
                continue
            artefact, preparation, key = found
            store.save(artefact, preparation, cls.prepared_folder or name, ds.name, key, cache_dir=out_dir / FOLDER)
            written.append(f"{ds.name}/{name}")
    return f"{out_dir / FOLDER}: {len(written)} dataset-level artefacts ({', '.join(written)})"
