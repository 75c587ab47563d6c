"""MADAM-RAG tasks of the offline model: one debating agent per document, and the aggregator
(docs/methods/madam.md §3-4, §9).

Entities. A response's *entity* is the name its explanation gives the question's subject (the longest
capitalised run sharing a word with the question's subject, ``common.entity_of``): "Michael Irwin
Jordan" and "Michael Jeffrey Jordan" are different entities, "Michael Jordan" matches both, and an
unknown entity matches everything. Two answers conflict only when they concern the same entity.

Agent rule (``debate_turn``). An agent speaks only for its own document, which it re-reads every round
(so ``own_previous``, if sent, is not needed: the same document and history give the same reply):
* no answer in the document -> ``unknown``, whatever the others say;
* round 1 (or no history) -> the document's answer, explained by its supporting sentence;
* later rounds -> it keeps its answer when at least one other agent agrees (two or more agents back it:
  the answer stays alive, which is how ambiguous questions keep several answers). A lone answer switches
  to the largest different answer backed by at least two other agents *about the same entity*
  (docs/methods/madam.md §9), saying why; an answer about a different entity is kept.
  Aggregator lines in the history (``history_mode="aggregator"``) count as two votes for each listed
  answer, with an unknown entity.

Aggregator rule (``aggregate``). Unknowns are dropped; answers are clustered; a cluster backed by a single
agent is dropped when a larger cluster concerns the same entity (misinformation is usually a minority);
every other cluster is kept (ambiguity: several well-supported answers, or answers about different
entities). Ordered by support, then first agent. Nothing left -> ``All Correct Answers: []``.

Prompts (App. E, ``methods.madam``): an agent's prompt gives the question, its document and, after round 1, the
other agents' responses (``Agent k: …`` / ``Aggregator: …`` lines); the round number itself is not in it, only whether
this is round 1 (``round`` reads 1 or 2, "a later round"). The aggregator's prompt gives the question and the round's
``Agent k: …`` responses after its worked example.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from backend.llm.formats import parse_agent_response, parse_all_correct_answers
from backend.llm.offline.check import same_joined
from backend.llm.offline.common import (Fields, as_int, entity_name, entity_of, group_answers, join_numbers,
                                        known, passage_texts, same_entity, sentence, type_gap)
from backend.llm.offline.prompt import Prompt, matcher
from backend.llm.offline.registry import PromptReader, register_handlers, register_readers
from backend.llm.reader import read

UNKNOWN = "Answer: unknown. Explanation: The document does not answer the question."
#: Votes an aggregator line in the history carries for each answer it lists.
AGGREGATOR_WEIGHT = 2

_AGENT = re.compile(r"^\s*agent\s*(\d+)\s*:\s*", re.I)


@dataclass(frozen=True)
class _Voice:
    label: int | None                # agent number, None for an aggregator line
    answer: str | None
    entity: tuple[str, ...] | None
    weight: int = 1


def _entries(raw) -> list[str]:
    """History/responses as a list of strings; a single string is split at ``Agent k:`` line starts."""
    if raw is None:
        return []
    if isinstance(raw, str):
        parts = re.split(r"(?m)^(?=\s*(?:agent\s*\d+|aggregator)\s*:)", raw, flags=re.I)
        return [p.strip() for p in parts if p.strip()]
    return [str(r) for r in raw if str(r).strip()]


def _voices(raw, question: str) -> list[_Voice]:
    out = []
    for pos, text in enumerate(_entries(raw), start=1):
        m = _AGENT.match(text)
        if re.search(r"all\s+correct\s+answers\s*:", text, re.I):
            for a in parse_all_correct_answers(text).value[0]:
                out.append(_Voice(None, a, None, AGGREGATOR_WEIGHT))
            continue
        # the speaker label is the prompt's, not the agent's reply: read the reply as written (Markdown and all)
        answer, explanation = parse_agent_response(text[m.end():] if m else text).value
        out.append(_Voice(int(m.group(1)) if m else pos, answer if known(answer) else None,
                          entity_of(explanation, question)))
    return out


def _about(e: tuple[str, ...] | None) -> str:
    return f" ({entity_name(e)})" if e else ""


def _labels(voices: list[_Voice]) -> str:
    agents = sorted({v.label for v in voices if v.label is not None})
    parts = [join_numbers(agents)] if agents else []
    if any(v.label is None for v in voices):
        parts.append("the aggregator")
    return " and ".join(parts)


def _plural(voices: list[_Voice]) -> bool:
    return sum(1 for v in voices if v.label is not None) + any(v.label is None for v in voices) > 1


def debate_turn(fields: Fields) -> str:
    """``Answer: X. Explanation: ...`` for one agent; see the module docstring for the rule."""
    question = fields["question"]
    document = "\n".join(passage_texts(fields))
    reading = read(question, document) if document.strip() else None
    own = reading.answer if reading is not None and known(reading.answer) else None
    if own is None:   # say so when the document names nobody for a who-question, no date for a when-question...
        gap = type_gap([reading], question) if reading is not None else None
        return UNKNOWN if gap is None else f"{UNKNOWN[:-1]} ({gap} in it)."
    support = sentence(reading.sentence)
    own_entity = entity_of(reading.sentence, question) or entity_of(document, question)
    others = [v for v in _voices(fields.get("history"), question) if v.answer]
    if as_int(fields.get("round"), 1) <= 1 or not others:
        return f"Answer: {own}. Explanation: {support}"

    groups = group_answers([own] + [v.answer for v in others])
    mine = next(g for g in groups if 0 in g.members)
    agree = [others[i - 1] for i in mine.members if i]
    if agree:
        verb = "agree" if _plural(agree) else "agrees"
        return (f"Answer: {own}. Explanation: {support} {_labels(agree)} {verb}, so two or more agents support "
                f"{own}; I keep it.")
    rivals = []
    for g in groups:
        if g is mine:
            continue
        backers = [others[i - 1] for i in g.members]
        votes = sum(v.weight for v in backers)
        if votes >= 2:
            rivals.append((votes, -g.members[0], g.answer, backers))
    rivals.sort(key=lambda r: (-r[0], -r[1]))
    for votes, _, answer, backers in rivals:
        known_entities = [v.entity for v in backers if v.entity]
        if not own_entity or not known_entities or any(same_entity(own_entity, e) for e in known_entities):
            verb = "answer" if _plural(backers) else "answers"
            return (f"Answer: {answer}. Explanation: {support} My document gives {own}, but {_labels(backers)} "
                    f"{verb} {answer} about the same subject{_about(own_entity)}, and no other agent backs "
                    f"{own}; the better supported answer is more likely right, so I revise my answer to "
                    f"{answer}.")
    if rivals:
        _, _, answer, backers = rivals[0]
        entity = next(v.entity for v in backers if v.entity)
        return (f"Answer: {own}. Explanation: {support} {_labels(backers)} give {answer}, but about a different "
                f"subject ({entity_name(entity)}) than mine ({entity_name(own_entity)}); both answers can be "
                f"correct, so I keep {own}.")
    return (f"Answer: {own}. Explanation: {support} My document supports {own}, and no different answer is "
            f"better supported by the other agents, so I keep it.")


def aggregate(fields: Fields) -> str:
    """``All Correct Answers: ["a", "b"]. Explanation: ...``; see the module docstring for the rule."""
    question = fields["question"]
    voices = _voices(fields.get("responses"), question)
    groups = group_answers([v.answer for v in voices])
    info = []
    for g in groups:
        backers = [voices[i] for i in g.members]
        info.append((g, backers, sum(v.weight for v in backers)))
    kept, notes = [], []
    for g, backers, votes in info:
        entity = next((v.entity for v in backers if v.entity), None)
        larger = [(h, hb) for h, hb, hv in info if h is not g and hv > votes]
        beaten = None
        if votes == 1:
            for h, hb in larger:
                es = [v.entity for v in hb if v.entity]
                if not entity or not es or any(same_entity(entity, e) for e in es):
                    beaten = h
                    break
        if beaten is not None:
            notes.append(f"{_labels(backers)}'s {g.answer} is contradicted by the better supported "
                         f"{beaten.answer} about the same subject, so it is dropped.")
        else:
            kept.append((votes, g.members[0], g.answer))
            notes.append(f"{_labels(backers)} {'support' if _plural(backers) else 'supports'} {g.answer}"
                         f"{_about(entity)}.")
    unknown = [v for v in voices if not v.answer]
    if unknown:
        notes.append(f"{_labels(unknown)} {'give' if _plural(unknown) else 'gives'} no answer.")
    answers = [a for _, _, a in sorted(kept, key=lambda t: (-t[0], t[1]))]
    if not answers:
        return "All Correct Answers: []. Explanation: unknown. " + " ".join(notes)
    return f"All Correct Answers: {json.dumps(answers, ensure_ascii=False)}. Explanation: " + " ".join(notes)


HANDLERS = register_handlers({"debate_turn": debate_turn, "aggregate": aggregate})


# ------------------------------------------------------------------------------------------- prompts

_TAIL = (r" Provide your answer and a step-by-step reasoning explanation\.\n\n"
         r"Please follow the format: 'Answer: \{\}\. Explanation: \{\}\.'")
#: Both agent templates in one pass: round 1 (the document only), later rounds (the document and the history).
_AGENT_PROMPT = (r"You are an agent reading a document to answer a question\.\n\nQuestion: (?P<question>.*?)\n\n"
                 r"Document: (?P<document>.*?)\n\n(?:Answer the question based only on this document\.|"
                 r"(?P<later>The following responses are from other agents as additional information\.)\n"
                 r"(?P<history>.*)\n\n"
                 r"Answer the question based on the document and other agents' responses\.)" + _TAIL)
_AGGREGATOR = (r"You are an aggregator reading answers from multiple agents\..*?Agent 4 does not provide any useful "
               r"information\.\n\nQuestion: (?P<question>.*?)\n\nAgent responses:\n(?P<responses>.*)")
#: The history a lone agent is shown (``methods.madam.NO_OTHER_AGENTS``).
_NOBODY = "(none: you are the only agent)"


def _lines(block: str) -> list[str]:
    return [] if block.strip() == _NOBODY else _entries(block)


def _turn(m: re.Match[str], prompt: Prompt) -> Fields:
    history = _lines(m["history"] or "")
    return {"question": m["question"], "passages": [{"text": m["document"]}], "round": 2 if m["later"] else 1,
            "history": history}


def _same_phase(read_round, sent_round) -> bool:
    """The prompt tells round 1 from a later round, not which later round."""
    return (as_int(read_round, 1) <= 1) == (as_int(sent_round, 1) <= 1)


_AGENT_SAME = {"round": _same_phase, "history": same_joined}   # a reply may hold line breaks of its own
register_readers(
    PromptReader("debate_turn", "MADAM agent", matcher(_AGENT_PROMPT, _turn), same=_AGENT_SAME),
    PromptReader("aggregate", "MADAM aggregator",
                 matcher(_AGGREGATOR, lambda m, p: {"question": m["question"], "responses": _entries(m["responses"])}),
                 same={"responses": same_joined}),
)
