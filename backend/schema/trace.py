"""The base of every method's trace, and the registry that reads a trace back from JSON by its ``kind``.

A trace model subclasses ``Trace`` with ``kind: Literal["<kind>"] = "<kind>"``; defining the class registers it
(``__pydantic_init_subclass__``), so ``MethodResult.trace`` accepts and re-reads it with no list to edit. The
capabilities generic code needs (``key_facts`` for What-if, ``candidate_answers`` for risk scoring,
``invalid_answer`` for scoring an unreadable reply) are methods here with a neutral default, overridden by the
traces that have something to say.
"""

from __future__ import annotations

from typing import Any, ClassVar

from backend.schema.base import StrictModel

_KINDS: dict[str, type[Trace]] = {}


class Trace(StrictModel):
    kind: str

    #: the registered kinds (read-only view for tests and the contract)
    kinds: ClassVar[dict[str, type[Trace]]] = _KINDS

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind = cls.model_fields["kind"].default
        if not isinstance(kind, str):
            return  # an abstract intermediate class
        known = _KINDS.get(kind)
        if known is not None and f"{known.__module__}.{known.__qualname__}" != f"{cls.__module__}.{cls.__qualname__}":
            raise TypeError(f"trace kind {kind!r} is already {known.__module__}.{known.__qualname__}")
        _KINDS[kind] = cls

    def key_facts(self) -> dict[str, str]:
        """The few facts a what-if comparison shows side by side (``backend.whatif.compare``)."""
        return {}

    def candidate_answers(self) -> list[str] | None:
        """The answer the method had before deciding whether to give it (RC-RAG's RAG answer, kept or not), for
        risk scoring; None: the method has no candidate apart from the answers it gave."""
        return None

    def invalid_answer(self) -> bool:
        """The method's reply held no answer it could read (BRIDGE's responder with no readable option): scoring
        counts it wrong, never as an abstention (``backend.scoring.unreadable``)."""
        return False


def trace_type(kind: str) -> type[Trace]:
    """The registered model of ``kind`` (the bundled ones register when ``backend.schema`` is imported)."""
    try:
        return _KINDS[kind]
    except KeyError:
        # the kind is input (a file's): named by the known ones, never echoed
        raise ValueError(f"unknown trace kind; known: {', '.join(sorted(_KINDS))}") from None


def as_trace(value: Any) -> Any:
    """Validator of ``MethodResult.trace``: a trace object as it is, a mapping by its ``kind``."""
    if value is None or isinstance(value, Trace):
        return value
    if isinstance(value, dict):
        kind = value.get("kind")
        if not isinstance(kind, str):
            raise ValueError("a trace needs a string 'kind'")
        return trace_type(kind).model_validate(value)
    raise ValueError(f"a trace must be an object, got {type(value).__name__}")


def forget_kind(kind: str) -> None:
    """Unregister ``kind`` (tests that register a toy method clean up after themselves)."""
    _KINDS.pop(kind, None)
