"""Method registry. Names are stable everywhere (CLI, JSON, URLs).

Every module and package under ``backend/methods`` is imported here, and each method registers its own
``MethodSpec`` where it is defined (``backend.methods.spec``); nothing here names a method.
"""

from __future__ import annotations

import importlib
import pkgutil

from backend.methods.spec import METHODS, SPECS, MethodSpec, register, title, unregister

__all__ = ["METHODS", "SPECS", "MethodSpec", "UnknownMethod", "register", "resolve", "title", "unregister"]

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")


class UnknownMethod(ValueError):
    pass


def resolve(spec: str) -> list[str]:
    """``"all"`` (every registered method, in display order) or a comma-separated list -> the names to run."""
    asked = list(SPECS) if spec.strip() == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [m for m in asked if m not in SPECS]
    if unknown:
        raise UnknownMethod(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(SPECS)} or all")
    return list(dict.fromkeys(asked))
