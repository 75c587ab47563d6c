"""What a run is keyed by, and one session's results. No Streamlit here.

A ``RunKey`` names every setting a method's answer depends on: the dataset (its path and the loaded version), the
question, the model and its server, how replies are read (tolerant or the papers' rules), the methods, the evidence mode, the methods' parameters and the chroma server.
``Results`` finds a method's result under any key equal to the asked one but for the other methods of its run
(Inspect's run of every method answers the Consolidation page's question), never under one whose other settings
differ: a result computed with one evidence mode, parameters or index server is never shown for another.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from backend.schema import MethodResult


@dataclass(frozen=True)
class RunKey:
    dataset: str  # the dataset's path
    version: str  # what it holds (``runs.dataset_version``: a hash of its content)
    question: str | tuple[str, str]  # the question's id; for any other question (an edit) its id and content hash
    model: str
    api_base: str | None
    structured_output: bool = False  # JSON-schema replies asked for (``LLMConfig.structured_output``)
    reading: str = "tolerant"  # how replies are read (``Runner.reading``: "tolerant" or "paper")
    methods: tuple[str, ...] = ()
    evidence_mode: str = "given"
    method_params: str = "{}"  # {method: {parameter: value}} as sorted JSON: frozen and comparable
    chroma_url: str | None = None

    @staticmethod
    def params_text(method_params: dict | None) -> str:
        return json.dumps(method_params or {}, sort_keys=True)

    @property
    def params(self) -> dict[str, dict[str, Any]]:
        return json.loads(self.method_params)

    def with_methods(self, methods: Iterable[str]) -> RunKey:
        return dataclasses.replace(self, methods=tuple(methods))

    def settings(self) -> RunKey:
        """The fields a runner is built for (no question, no methods)."""
        return dataclasses.replace(self, question="", methods=())


class Results:
    """One session's method results by ``RunKey`` (thread-safe; the latest put wins)."""

    def __init__(self) -> None:
        self._runs: dict[RunKey, dict[str, MethodResult]] = {}
        self._lock = threading.Lock()

    def put(self, key: RunKey, results: dict[str, MethodResult]) -> None:
        with self._lock:
            self._runs.pop(key, None)  # re-inserted last: the latest run of a method is found first
            self._runs[key] = dict(results)

    def get(self, key: RunKey) -> dict[str, MethodResult] | None:
        """The results of exactly this run."""
        with self._lock:
            return self._runs.get(key)

    def lookup(self, key: RunKey) -> dict[str, MethodResult] | None:
        """Each of ``key.methods``' latest result from any run whose settings other than its methods are ``key``'s,
        in ``key.methods`` order; None unless every one is found."""
        base = key.with_methods(())
        found: dict[str, MethodResult] = {}
        with self._lock:
            for k, results in reversed(self._runs.items()):
                if k.with_methods(()) == base:
                    for m in key.methods:
                        if m not in found and m in results:
                            found[m] = results[m]
        if not key.methods or any(m not in found for m in key.methods):
            return None
        return {m: found[m] for m in key.methods}

    def by_question(self, key: RunKey) -> dict[str, dict[str, MethodResult]]:
        """Per question id, each method's latest result from any run under ``key``'s settings (its question and
        methods aside); edited questions (an id and a hash) left out. What the question picker's marks read."""
        base = key.with_methods(())
        found: dict[str, dict[str, MethodResult]] = {}
        with self._lock:
            for k, results in reversed(self._runs.items()):
                if isinstance(k.question, str) and dataclasses.replace(k.with_methods(()), question=base.question) \
                        == base:
                    for m, r in results.items():
                        found.setdefault(k.question, {}).setdefault(m, r)
        return found

    def keys(self) -> list[RunKey]:
        """Every run's key, oldest first."""
        with self._lock:
            return list(self._runs)

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)
