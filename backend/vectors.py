"""Sentence vectors computed once and shipped: the bundled datasets' texts, embedded by the bundled model when
``python -m backend build-sample`` runs and kept in ``sample_data/vectors/``, so a new user's first look does not
re-embed the same few thousand passages (20–60 CPU-s on a laptop) before the first result.

A store is two files: ``<model>.npy`` (float32, one L2-normalised row per text) and ``<model>.json`` (the model
it was computed with: name, weights sha256 and runtime; and the sha256 of each row's text, in row order). It is
used only when the model in use is exactly that one (the bundled, hash-checked weights on ONNX Runtime), and
only for texts whose sha256 it holds: any other text is embedded as before, and a store for another model is never
read. ``backend.embeddings.encode`` consults it, so every caller (the retrieval index, the offline reader, BRIDGE's
scorer) gets the same vectors it would have computed (tests/test_vectors.py checks them against the model).
``CONFLICTLENS_SHIPPED_VECTORS=0`` turns it off (benchmarks that measure the embedding itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from backend.paths import SAMPLE_DATA

STORE_DIR = SAMPLE_DATA / "vectors"
_FORMAT = 1
_lock = threading.Lock()
_loaded: dict[Path, VectorStore | None] = {}


def text_key(text: str) -> str:
    """The store's key of a text: sha256 of its exact UTF-8 bytes (a changed character is another text)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class VectorStore:
    """Vectors by text key, for one model identity (``{"model", "weights_sha256", "runtime"}``)."""

    def __init__(self, identity: dict[str, str], keys: list[str], vectors: np.ndarray) -> None:
        if vectors.ndim != 2 or len(keys) != vectors.shape[0]:
            raise ValueError(f"{len(keys)} keys for vectors of shape {vectors.shape}")
        self.identity = dict(identity)
        self.vectors = vectors
        self.rows = {k: i for i, k in enumerate(keys)}

    def __len__(self) -> int:
        return len(self.rows)

    def lookup(self, texts: Iterable[str]) -> dict[int, np.ndarray]:
        """Position in ``texts`` -> shipped vector, for the texts the store holds."""
        found = {}
        for i, text in enumerate(texts):
            row = self.rows.get(text_key(text))
            if row is not None:
                found[i] = self.vectors[row]
        return found

    # -- files --------------------------------------------------------------------------------------------------

    def write(self, folder: Path, name: str) -> list[Path]:
        """``<name>.npy`` and ``<name>.json``, rows sorted by key: the same vectors give the same bytes."""
        folder.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.rows)
        vectors = np.ascontiguousarray(self.vectors[[self.rows[k] for k in keys]], dtype="<f4")
        npy, meta = folder / f"{name}.npy", folder / f"{name}.json"
        with npy.open("wb") as fh:
            np.lib.format.write_array(fh, vectors, allow_pickle=False)
        meta.write_bytes((json.dumps({"format": _FORMAT, **self.identity, "dim": int(vectors.shape[1]),
                                      "dtype": "float32", "keys": keys}, indent=0) + "\n").encode("utf-8"))
        return [npy, meta]

    @classmethod
    def read(cls, folder: Path, name: str) -> VectorStore:
        meta = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{folder / name}.json: store format {meta.get('format')!r}, expected {_FORMAT}")
        vectors = np.load(folder / f"{name}.npy", allow_pickle=False)
        if vectors.dtype != np.float32 or vectors.ndim != 2 or vectors.shape[1] != meta["dim"]:
            raise ValueError(f"{folder / name}.npy: {vectors.dtype} {vectors.shape}, expected float32 [n, "
                             f"{meta['dim']}]")
        identity = {k: meta[k] for k in ("model", "weights_sha256", "runtime")}
        return cls(identity, meta["keys"], vectors)


def shipped(identity: dict[str, str], folder: Path = STORE_DIR) -> VectorStore | None:
    """The shipped store for the model ``identity`` (read once per process), or None: no store for that model
    name, a store computed with other weights or another runtime, a damaged store, or turned off."""
    if os.environ.get("CONFLICTLENS_SHIPPED_VECTORS", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    path = folder / identity["model"]
    with _lock:
        if path not in _loaded:
            try:
                _loaded[path] = VectorStore.read(folder, identity["model"])
            except (OSError, ValueError, KeyError):  # missing or unreadable: embed everything, as without a store
                _loaded[path] = None
        store = _loaded[path]
    return store if store is not None and store.identity == identity else None


def forget() -> None:
    """Drop the stores read so far (tests, and the builder after writing a new one)."""
    with _lock:
        _loaded.clear()
