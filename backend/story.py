"""Each question's story (issue 27): a headline and one plain sentence per method, built from the results' answers,
support and traces alone (deterministic, no model call). Inspect shows it above its columns, each method page at
its top.

Ground truth never reaches a method; here it is read only for display, and only with the truth overlay on: a
method's story function gets a ``StoryContext`` whose ``truth`` is None with the overlay off, so the words "right" /
"wrong", the gold answers and "talked out of the right answer" cannot appear then. Verdicts and answer kinds come
from ``backend.scoring`` (where gold meets output); who agreed with whom from ``backend.agreement``.

A method tells its own turning point through ``MethodSpec.story`` (``story(result, ctx) -> Turn | None``, beside
the method); a method without one gets the generic sentence (answers and the documents they rest on).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from backend.agreement import groups
from backend.schema import MethodResult, Question
from backend.scoring import answer_kind, verdict

#: answers quoted in one line before "+N more" (a story line stays one line)
MAX_ANSWERS = 2
MAX_DOCUMENTS = 3
MAX_GROUPS = 4
RIGHT = ("correct", "correct + extras")
VERDICT_WORDS = {"correct": "right", "correct + extras": "right, with extra answers", "partly correct": "partly right",
                 "wrong": "wrong", "unreadable": "wrong: unreadable reply", "abstained": "abstained"}


@dataclass(frozen=True)
class Turn:
    """A method's turning point: one clause (no capital, no full stop) and the facts behind it, as data."""

    text: str
    facts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StoryContext:
    """What a method's story function may read besides its result: short document labels and quoting, and the
    question's truth only when the overlay is on (``truth`` None otherwise)."""

    question_id: str
    sources: Mapping[str, str | None]          # document id -> source name (None: none named)
    truth: Question | None = None

    def doc(self, document_id: str) -> str:
        """``ramdocs-0084-d6`` -> ``d6``: the question's own prefix says nothing on its page."""
        prefix = f"{self.question_id}-"
        return document_id[len(prefix):] if document_id.startswith(prefix) and len(document_id) > len(prefix) \
            else document_id

    def docs(self, document_ids: list[str], limit: int = MAX_DOCUMENTS) -> str:
        """``d1, d2, d3 +2 more`` (in the order given, each once); ``5 documents of src-1, src-3`` when the documents
        name sources shared among them (a multi-source dataset: the sources are what the methods weigh)."""
        ids = list(dict.fromkeys(document_ids))
        sources = list(dict.fromkeys(self.sources.get(d) for d in ids))
        if len(ids) > 1 and None not in sources and len(sources) < len(ids):
            named = ", ".join(str(s) for s in sources[:limit]) + (f" +{len(sources) - limit} more"
                                                                 if len(sources) > limit else "")
            return f"{len(ids)} documents of {named}"
        shown = ", ".join(self.doc(d) for d in ids[:limit])
        return shown + (f" +{len(ids) - limit} more" if len(ids) > limit else "")

    def kind(self, answer: str | None) -> str | None:
        """gold / wrong / other / unknown with the truth on; None with it off (``backend.scoring.answer_kind``)."""
        return None if self.truth is None else answer_kind(answer, self.truth)


def quote(answer: str | None) -> str:
    return f"“{answer}”" if answer else "“I don't know”"


def quote_all(answers: list[str], limit: int = MAX_ANSWERS) -> str:
    shown = ", ".join(quote(a) for a in answers[:limit])
    return shown + (f" +{len(answers) - limit} more" if len(answers) > limit else "")


@dataclass(frozen=True)
class MethodStory:
    method: str                    # the registry name (for lookups; never shown)
    title: str                     # the display name
    sentence: str
    facts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Story:
    headline: str
    methods: list[MethodStory] = field(default_factory=list)
    #: the key facts as data: "groups" (method names per answer set), "right" (with the truth on only), ...
    facts: dict[str, object] = field(default_factory=dict)

    @property
    def lines(self) -> list[tuple[str, str]]:
        """(method name, sentence) per method, in the order the results came."""
        return [(m.method, m.sentence) for m in self.methods]

    def line(self, method: str) -> str | None:
        return next((m.sentence for m in self.methods if m.method == method), None)


def _title(name: str) -> str:
    from backend.methods.spec import title  # lazily: the methods' own story modules are imported by the registry

    return title(name)


def _story_fn(name: str):
    from backend.methods import SPECS

    return SPECS[name].story if name in SPECS else None


def _supporting(result: MethodResult) -> list[str]:
    return [d for a in result.answers for d in result.support.get(a, [])]


def method_story(name: str, result: MethodResult, ctx: StoryContext) -> MethodStory:
    """One method's sentence: what it answered, from which documents, its turning point, and (truth on) its verdict."""
    title = _title(name)
    facts: dict[str, str] = {}
    if result.error:  # the cause is shown apart (``components.failures``); the story quotes no error text
        return MethodStory(name, title, f"{title} failed on this question.", {"answers": "error"})
    said = "abstained" if result.abstained or not result.answers else f"answered {quote_all(result.answers)}"
    facts["answers"] = "; ".join(result.answers) or "abstained"
    if ctx.truth is not None and (v := verdict(result, ctx.truth)) in VERDICT_WORDS and v != "abstained":
        said += f" ({VERDICT_WORDS[v]})"
        facts["verdict"] = v
    if docs := _supporting(result):
        said += f" from {ctx.docs(docs)}"
        facts["documents"] = ", ".join(ctx.doc(d) for d in dict.fromkeys(docs))
    elif result.answers:
        said += " citing no document"
    turn = None
    if (fn := _story_fn(name)) is not None and result.trace is not None:
        try:
            turn = fn(result, ctx)
        except Exception:  # noqa: BLE001 - a story is a view: an odd trace gets the generic sentence, not a crash
            turn = None
    if turn is not None:
        said += f": {turn.text}"
        facts.update(turn.facts)
        facts["turning point"] = turn.text
    return MethodStory(name, title, f"{title} {said}.", facts)


def _group_label(members: list[str], results: Mapping[str, MethodResult]) -> str:
    first = results[members[0]]
    return "abstained" if not first.answers else quote_all(first.answers)


def headline(question: Question, results: Mapping[str, MethodResult], show_truth: bool) -> tuple[str, dict]:
    answered = {n: r for n, r in results.items() if not r.error}
    facts: dict[str, object] = {"groups": groups(answered)}
    failed = [n for n, r in results.items() if r.error]
    tail = f" {_names(failed)} failed." if failed else ""
    if not answered:
        return ("No method answered." if results else "No method has run yet.") + tail, facts
    parts: list[str] = []
    if show_truth and question.gold_answers:
        verdicts = {n: verdict(r, question) for n, r in answered.items()}
        right = [n for n, v in verdicts.items() if v in RIGHT]
        partly = [n for n, v in verdicts.items() if v == "partly correct"]
        facts["right"], facts["partly right"], facts["gold"] = right, partly, list(question.gold_answers)
        if len(results) == 1 and not right:
            parts.append(f"{_title(next(iter(results)))} was not right.")
        elif not right and partly:
            parts.append(f"No method named every gold answer; {_names(partly)} named some.")
        elif not right:
            parts.append("No method was right.")
        elif len(right) == len(results) > 1:
            parts.append("Every method was right.")
        elif len(right) == 1:
            parts.append(f"Only {_title(right[0])} was right." if len(results) > 1 else f"{_title(right[0])} was right.")
        else:
            parts.append(f"{len(right)} of {len(results)} methods were right: {_names(right)}.")
        parts.append(f"Gold: {quote_all(question.gold_answers, limit=3)}.")
    split = facts["groups"]
    if len(results) == 1:  # a method page before any other method ran: its own line says what it answered
        if not parts:
            parts.append(f"{_title(next(iter(results)))} is the only method run on this question so far.")
    elif len(answered) == 1:
        parts.append(f"Only {_title(next(iter(answered)))} answered.")
    elif len(split) == 1:
        label = _group_label(split[0], answered)
        parts.append(f"All {len(answered)} methods abstained." if label == "abstained"
                     else f"All {len(answered)} methods agree: {label}.")
    else:
        shown = [f"{_group_label(g, answered)} ({_names(g)})" for g in split[:MAX_GROUPS]]
        more = f", +{len(split) - MAX_GROUPS} more" if len(split) > MAX_GROUPS else ""
        parts.append(f"The methods split {len(split)} ways: {'; '.join(shown)}{more}.")
    return " ".join(parts) + tail, facts


def _names(names: list[str]) -> str:
    return ", ".join(_title(n) for n in names)


def story(question: Question, results: Mapping[str, MethodResult], show_truth: bool) -> Story:
    """The question's story from ``results`` (method name -> result, in display order). ``show_truth`` False: no
    gold answer, verdict or truth-derived fact appears in any sentence or fact."""
    ctx = StoryContext(question.id, {d.id: d.source for d in question.documents},
                       truth=question if show_truth else None)
    lines = [method_story(n, r, ctx) for n, r in results.items()]
    head, facts = headline(question, results, show_truth)
    facts["methods"] = {m.method: m.facts for m in lines}
    return Story(head, lines, facts)


__all__ = ["MethodStory", "Story", "StoryContext", "Turn", "quote", "quote_all", "story"]
