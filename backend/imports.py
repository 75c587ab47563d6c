"""Importing a package without the optional integrations its ``__init__`` loads eagerly.

nltk's ``__init__`` imports all of nltk, and with it its scikit-learn classifier wrapper and SciPy's statistics
whenever those are installed (they are: sentence-transformers needs them). ROUGE-L (counterfactual prompting's
answer match) needs only nltk's Porter stemmer, and loading SciPy and scikit-learn for it cost ~1.2 of 1.4 CPU-s,
holding the GIL, in every app process's first run (benchmarks/import_cost.py). nltk wraps each of those imports in
``try: ... except ImportError``, so refusing them leaves nltk working without the integrations nobody here uses.

The refusal is per thread: other threads importing SciPy meanwhile are not affected. The finder stays on
``sys.meta_path`` once installed (removing a finder while another thread walks the list could skip a finder).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from importlib.abc import MetaPathFinder

__all__ = ["without_optional"]


class _Refuser(MetaPathFinder):
    """Raises ModuleNotFoundError for the refused top-level packages while this thread has any refused."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def refused(self) -> frozenset[str]:
        return getattr(self._local, "refused", frozenset())

    @refused.setter
    def refused(self, names: frozenset[str]) -> None:
        self._local.refused = names

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 - MetaPathFinder's signature
        if fullname.partition(".")[0] in self.refused:
            raise ModuleNotFoundError(f"{fullname} is not loaded here (backend.imports)", name=fullname)
        return None


_lock = threading.Lock()
_refuser: _Refuser | None = None


def _installed() -> _Refuser:
    global _refuser
    with _lock:
        if _refuser is None:
            _refuser = _Refuser()
            sys.meta_path.insert(0, _refuser)
        return _refuser


@contextlib.contextmanager
def without_optional(*packages: str) -> Iterator[None]:
    """Within the block, in this thread, importing any of ``packages`` (top-level names) that is not loaded yet
    raises ModuleNotFoundError. Already-loaded packages stay importable."""
    refuser = _installed()
    before = refuser.refused
    refuser.refused = before | {p for p in packages if p not in sys.modules}
    try:
        yield
    finally:
        refuser.refused = before
