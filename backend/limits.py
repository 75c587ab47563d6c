"""Bounded work: the ceiling on what one run may do before someone says yes, and the stop a run's owner can pull.

**The ceiling.** A run of methods on one question is checked before it starts against two numbers (named defaults
below; a deployment sets its own, ``backend.deployment``'s ``max_run_calls`` and ``max_question_documents``; the
command line's ``--max-calls`` and ``--max-documents``): the model calls its methods' estimates say it can make at
most (``backend.cost.estimate_run``: every conditional step taken, so MADAM-RAG's documents × rounds plus one
aggregation per round, and every other method's own pattern), and the documents of the question the methods read
(in ``given`` evidence mode: all of them; MADAM-RAG's prompts grow with their square, so the document count bounds
what each call carries). A dataset-level preparation (RA-RAG's stage 1) is not counted: it is done once per dataset
and model, shared by every run and session, and its size is bounded by the deployment's file cap.

**The stop.** A run whose owner can no longer see it (its app session ended) is stopped between model calls: the
client checks a ``threading.Event`` before each call and raises ``Stopped`` once it is set; the calls in flight
finish, so every reply received is kept in the reply cache, and nothing after the stop is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A run estimated above this many model calls asks first (the page) or stops with the flag to pass (the CLI).
DEFAULT_MAX_CALLS = 400
#: A question with more documents than this asks first: MADAM-RAG alone makes ~2-3 calls per document, each
#: carrying every other agent's reply (a 300-document question: 601 calls, 52 CPU-s with the offline model).
DEFAULT_MAX_DOCUMENTS = 100
#: How long a job outlives its session's last sign of a tab (Streamlit keeps a disconnected session this long for
#: a reconnect: a network blip must not stop a run).
DEFAULT_JOB_GRACE_S = 120.0


class Stopped(RuntimeError):
    """The run was stopped before this call was sent (its owner left); the replies received before are kept."""


#: A stopped method's error reads "Stopped: " and this.
STOPPED_TEXT = ("the session that started this run ended, so it stopped before this model call; the replies received "
                "before are kept in the reply cache")


@dataclass(frozen=True)
class Ceiling:
    """The most one run may do without asking: model calls and documents per question."""

    max_calls: int = DEFAULT_MAX_CALLS
    max_documents: int = DEFAULT_MAX_DOCUMENTS

    def excess(self, calls: int, documents: int) -> Excess | None:
        """What a run of ``calls`` estimated calls on ``documents`` documents passes, or None within the ceiling."""
        if calls <= self.max_calls and documents <= self.max_documents:
            return None
        return Excess(calls=calls, documents=documents, ceiling=self)


@dataclass(frozen=True)
class Excess:
    """A run above the ceiling: what it would do, and the ceiling it passes."""

    calls: int
    documents: int
    ceiling: Ceiling

    def what(self) -> str:
        """"up to 942 model calls on a question of 300 documents"."""
        return f"up to {self.calls:,} model calls on a question of {self.documents:,} documents"

    def _passed(self) -> list[tuple[str, int, int, str]]:
        """(unit, the ceiling's limit, this run's figure, the flag) of each limit this run passes."""
        both = [("calls", self.ceiling.max_calls, self.calls, "--max-calls"),
                ("documents", self.ceiling.max_documents, self.documents, "--max-documents")]
        return [limit for limit in both if limit[2] > limit[1]]

    def above(self) -> str:
        """Which limits it passes: "above the ceiling of 400 calls and 100 documents per run"."""
        return f"above the ceiling of {' and '.join(f'{top:,} {unit}' for unit, top, _, _ in self._passed())} per run"

    def flags(self) -> str:
        """The command-line flags that let this run through."""
        return " ".join(f"{flag} {wanted}" for _, _, wanted, flag in self._passed())


def documents_read(question, evidence_mode: str) -> int:
    """The documents of ``question`` the methods read: all of them with the given evidence; in ``retrieve`` mode
    they read the top k of a search instead, which the call estimate already counts."""
    return len(question.documents) if evidence_mode == "given" else 0


def run_calls(estimate) -> int:
    """The calls of a ``backend.cost.RunEstimate`` that this run makes on its questions (a dataset-level preparation
    left out: see the module docstring); the most there can be."""
    return sum(m.calls - m.preparation_calls for m in estimate.methods.values())


__all__ = ["DEFAULT_JOB_GRACE_S", "DEFAULT_MAX_CALLS", "DEFAULT_MAX_DOCUMENTS", "STOPPED_TEXT", "Ceiling", "Excess",
           "Stopped", "documents_read", "run_calls"]
