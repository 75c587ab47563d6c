"""Method registry. Names are stable everywhere (CLI, JSON, URLs)."""

from __future__ import annotations

from backend.methods.astute import AstuteRAG
from backend.methods.base import Method
from backend.methods.bridge import BRIDGE
from backend.methods.counterfactual import CounterfactualRAG
from backend.methods.baselines import NoRAG, VanillaRAG
from backend.methods.madam import MadamRAG
from backend.methods.ra_rag import RARAG

#: All seven, in display order; the ones not implemented yet are absent from ``METHODS``.
ALL_METHODS = ("ra_rag", "astute", "madam", "counterfactual", "bridge", "no_rag", "vanilla_rag")
METHODS: dict[str, type[Method]] = {cls.name: cls for cls in (RARAG, AstuteRAG, MadamRAG, CounterfactualRAG, BRIDGE,
                                                               NoRAG, VanillaRAG)}


class UnknownMethod(ValueError):
    pass


def resolve(spec: str) -> tuple[list[str], list[str]]:
    """``"all"`` or a comma-separated list -> (names to run, names asked for but not available yet)."""
    asked = list(ALL_METHODS) if spec.strip() == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [m for m in asked if m not in ALL_METHODS]
    if unknown:
        raise UnknownMethod(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(ALL_METHODS)} or all")
    return [m for m in asked if m in METHODS], [m for m in asked if m not in METHODS]
