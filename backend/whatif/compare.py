"""What changed between a method's result on a question and on its what-if edit: answers, abstention, the truth
verdict (for display: computed from the question's gold answers, never shown to a method) and the method's key trace
facts (each trace's ``key_facts``: RA-RAG's votes and walk, MADAM's final agents, Astute's groups, the
counterfactual decision, BRIDGE's leaf)."""

from __future__ import annotations

from pydantic import Field

from backend.agreement import ABSTAINS, answers_set
from backend.schema import MethodResult, Question
from backend.schema.base import StrictModel
from backend.scoring import verdict


class FactChange(StrictModel):
    name: str
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


class MethodChange(StrictModel):
    method: str
    answers_before: list[str] = Field(default_factory=list)
    answers_after: list[str] = Field(default_factory=list)
    abstained_before: bool = False
    abstained_after: bool = False
    verdict_before: str = ""
    verdict_after: str = ""
    error_before: str | None = None
    error_after: str | None = None
    facts: list[FactChange] = Field(default_factory=list)

    @property
    def answer_changed(self) -> bool:
        """The answer set changed (``backend.agreement``: abstaining is an answer of its own); a run that failed
        before or after has no answer set, so it is not an answer change (``failed``)."""
        if self.error_before or self.error_after:
            return False
        return (answers_set(self.answers_before, self.abstained_before)
                != answers_set(self.answers_after, self.abstained_after))

    @property
    def failed(self) -> bool:
        """Failed on one side only: neither an answer change nor a reasoning change."""
        return bool(self.error_before) != bool(self.error_after)

    @property
    def reasoning_changed(self) -> bool:
        """The same answer set, reached differently: some key trace fact changed."""
        return not self.answer_changed and not self.failed and any(f.changed for f in self.facts)

    @property
    def changed(self) -> bool:
        return (self.answer_changed or self.abstained_before != self.abstained_after
                or self.error_before != self.error_after or any(f.changed for f in self.facts))

    @property
    def headline(self) -> str:
        """One line: what a reader should notice first."""
        if self.failed:
            return "failed on the edit" if self.error_after else "no longer fails"
        if self.answer_changed:
            if answers_set(self.answers_after, self.abstained_after) == ABSTAINS:
                return "now abstains"
            if answers_set(self.answers_before, self.abstained_before) == ABSTAINS:
                return "now answers"
            return "answer changed"
        if self.reasoning_changed:
            return "same answer, reasoning changed"
        return "unchanged"


def _facts(result: MethodResult) -> dict[str, str]:
    return result.trace.key_facts() if result.trace is not None else {}


def compare(before: MethodResult, after: MethodResult, question: Question, edited: Question) -> MethodChange:
    """``before`` on ``question`` against ``after`` on its edit ``edited`` (same method)."""
    if before.method != after.method:
        raise ValueError(f"compare: {before.method} against {after.method}")
    fb, fa = _facts(before), _facts(after)
    return MethodChange(method=before.method, answers_before=before.answers, answers_after=after.answers,
                        abstained_before=before.abstained, abstained_after=after.abstained,
                        verdict_before=verdict(before, question), verdict_after=verdict(after, edited),
                        error_before=before.error, error_after=after.error,
                        facts=[FactChange(name=k, before=fb.get(k, "—"), after=fa.get(k, "—"))
                               for k in dict.fromkeys([*fb, *fa])])


def compare_all(before: dict[str, MethodResult], after: dict[str, MethodResult], question: Question,
                edited: Question) -> list[MethodChange]:
    return [compare(before[m], after[m], question, edited) for m in before if m in after]
