"""What a method's run will send, before anything is sent: model calls and tokens per step.

Each method declares ``MethodSpec.estimate(method, question, sizes) -> CallEstimate`` beside its class, following
its own call pattern with its parameters (and ``MethodSpec.estimate_prepare(method, dataset, sizes)`` for dataset-level
work such as RA-RAG's stage 1). ``backend.cost`` sums the estimates over the questions and methods of a run and
prices them; it names no method.

How the numbers are made:

* **Prompt tokens** are counted on the prompts the method would render — its own prompt builders, with the question's
  real documents (``given`` evidence) or placeholders of the dataset's mean document size (``retrieve``: the top k are
  not known before the search) — by the model's tokenizer (``Sizes.count``: litellm's, or the offline model's word
  count). Replies that later prompts carry (a debate's history, a conversation) count at the assumed reply length.
* **Replies** are assumed to run to ``Sizes.reply(typical, cap)``: the length the method's prompt asks for (each
  method states it and why), never more than the call's ``max_tokens``; ``Sizes.ceiling`` puts every reply at its cap,
  the most a run can take.
* **Calls** the replies decide (MADAM-RAG's early stop, BRIDGE's reflections, a fusion call only when branches
  disagree) are counted as if they all happen: a step that may not happen is ``conditional``, so an estimate is an
  upper bound (``calls``) with the fewest calls beside it (``calls_min``).
* The reply cache is not consulted: a call answered from it costs nothing, so a re-run costs less than estimated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from pydantic import Field

from backend.schema import Question
from backend.schema.base import StrictModel


class StepEstimate(StrictModel):
    """The calls of one step (a step name as the method records it, e.g. ``debate_round_2``)."""

    step: str
    calls: int
    prompt_tokens: int = 0       # over all its calls
    completion_tokens: int = 0   # over all its calls
    #: may not happen: the replies decide (an early stop, a reflection, a fusion only on disagreement)
    conditional: bool = False


class CallEstimate(StrictModel):
    """One method's calls on one question (or its dataset-level preparation)."""

    method: str
    steps: list[StepEstimate] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)   # what the estimate assumed, in the method's words

    @property
    def calls(self) -> int:
        """The most calls the run can make (every conditional step taken)."""
        return sum(s.calls for s in self.steps)

    @property
    def calls_min(self) -> int:
        """The fewest calls: only the steps that always happen."""
        return sum(s.calls for s in self.steps if not s.conditional)

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.steps)

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.steps)

    @property
    def upper_bound(self) -> bool:
        """The replies decide how many calls happen: ``calls`` is the most there can be."""
        return any(s.conditional for s in self.steps)

    def add(self, step: str, calls: int, prompt_tokens: int, completion_tokens: int,
            conditional: bool = False) -> None:
        """Record ``calls`` calls of ``step`` (tokens over all of them); no calls, no line."""
        if calls > 0:
            self.steps.append(StepEstimate(step=step, calls=calls, prompt_tokens=prompt_tokens,
                                           completion_tokens=completion_tokens, conditional=conditional))


def word_count(text: str) -> int:
    """The offline model's token count (``backend.llm.tokens.approx_tokens``)."""
    from backend.llm.tokens import approx_tokens

    return approx_tokens(text)


@dataclass(frozen=True)
class Sizes:
    """What an estimate knows before a run: how the model counts tokens, the run's settings, and the dataset's typical
    document (the placeholder for evidence that is only known after a search)."""

    count: Callable[[str], int] = word_count
    evidence_mode: str = "given"
    top_k: int = 3
    max_tokens: int = 512          # the client's reply cap, for calls that set none
    document_tokens: int = 100     # the dataset's mean document, in tokens (``retrieve`` placeholders)
    sources: tuple[str, ...] = ()  # the dataset's named sources
    ceiling: bool = False          # every reply at its cap
    _counted: dict = field(default_factory=dict, compare=False, repr=False)

    def tokens(self, text: str) -> int:
        """Tokens of ``text`` (each distinct text counted once per estimate)."""
        if text not in self._counted:
            self._counted[text] = self.count(text)
        return self._counted[text]

    def messages(self, messages: list[dict[str, str]]) -> int:
        """Prompt tokens of rendered chat messages (their contents)."""
        return sum(self.tokens(m.get("content", "")) for m in messages)

    def reply(self, typical: int, cap: int | None = None) -> int:
        """The assumed length of a reply the prompt asks to be about ``typical`` tokens, under the call's cap."""
        cap = self.max_tokens if cap is None else cap
        return cap if self.ceiling else min(typical, cap)

    def evidence(self, question: Question, k: int | None = None) -> list[int]:
        """Tokens of each document the method reads (``RunContext.evidence``): the question's own documents
        (``given``), or ``k`` placeholders of the dataset's mean document (``retrieve``)."""
        if self.evidence_mode == "given":
            return [self.tokens(d.text) for d in question.documents]
        return [self.document_tokens] * (k or self.top_k)

    def placeholder(self, tokens: int) -> str:
        """A text of about ``tokens`` tokens, for rendering a prompt around a slot whose content is not known yet."""
        return _placeholder(tokens)


@lru_cache(maxsize=256)
def _placeholder(tokens: int) -> str:
    return " ".join(["x"] * max(tokens, 0))


#: ``MethodSpec.estimate``: (the method with its parameters, the truth-stripped question, sizes) -> its calls.
Estimator = Callable[..., CallEstimate]
#: ``MethodSpec.estimate_prepare``: (the method, the truth-stripped dataset, sizes) -> its preparation's calls.
PrepareEstimator = Callable[..., CallEstimate]

__all__ = ["CallEstimate", "Estimator", "PrepareEstimator", "Sizes", "StepEstimate", "word_count"]
