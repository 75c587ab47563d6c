"""Astute RAG tasks of the offline model: source-aware consolidation and answer finalisation
(docs/methods/astute.md §3.4-3.5, §9).

Passages are numbered 1..n in prompt order. Each is read with the extractive reader; passages that give
no answer are excluded as irrelevant; the rest are grouped by the answer they support
(``answers.cluster``). A group's source is ``memory`` (all its passages come from memory), ``external``
(none do) or ``both``.

Confidence of a group = its passages / all passages that gave an answer, +0.1 when it mixes memory and
external passages (cross-source confirmation), capped at 1.0, 2 decimals. The final answer is the group
with the highest confidence; ties go to a mixed-source group, then to the model's own memory over retrieved
passages (a memory passage is only there when the model was sure enough to write one) unless the question
asks for up-to-date information (``common.recency_cue``: "latest", "currently", a recent year...), where
retrieved passages win; then to the larger group, then to the group whose passages the reader finds more
relevant in sum ("thoroughness"), then to the group with the lowest document number.

``prompt_mode == "structured"`` (the method's format block) gets ``<GROUP>``, ``<EXCLUDED>`` and
``<CANDIDATE>`` tags instead of the paper-style ``Document k (source: ...)`` lines.

``answer_mode == "multi"`` (RAMDocs/AmbigDocs: several valid answers) tags the best group and every group
that either (a) has at least half the best group's confidence and at least ``min(2, best group's size)``
passages, or (b) names a different entity (``common.entity_of``: "Michael Irwin Jordan" vs "Michael Jeffrey
Jordan") than every larger group. A second answer backed by two or more passages survives, and so does an
answer about another entity; a lone passage against a larger group about the same entity (the usual shape
of misinformation) does not.

Prompts (App. A, ``methods.astute.prompts``): the passage-generation prompt gives the question (and how many passages
may be written); the consolidation and answer prompts give the question and the initial context, ``Document k
(source: memory|external retrieval): text`` lines, so the model's own generated passages are read from the prompt as
the memory passages they are. ``answer_mode`` and ``prompt_mode`` are read from the instructions (Step 3's wording,
the structured output format).
"""

from __future__ import annotations

from dataclasses import dataclass

import re

from backend.llm.formats import IDK
from backend.llm.offline.common import (Fields, entity_of, group_answers, is_memory_source, one_line,
                                        passages, read_passages, recency_cue, same_entity)
from backend.llm.offline.knowledge import remember_question
from backend.llm.offline.prompt import Prompt, matcher, read_labelled
from backend.llm.offline.registry import PromptReader, register_handlers, register_readers
from backend.llm.reader import Reading

#: Multi-answer mode keeps groups with at least this share of the best group's confidence.
MULTI_RATIO = 0.5
MIXED_BONUS = 0.1


@dataclass(frozen=True)
class _Group:
    number: int          # new document number, 1-based
    answer: str
    docs: list[int]      # original document numbers, 1-based
    source: str          # memory | external | both
    summary: str
    confidence: float
    entity: tuple[str, ...] | None = None
    relevance: float = 0.0   # summed reader relevance of its passages ("thoroughness" on a tie)


def _groups(fields: Fields) -> list[_Group]:
    question = fields["question"]
    ps = passages(fields)
    readings: list[Reading] = read_passages(fields)
    found = group_answers([r.answer for r in readings])
    total = sum(len(g.members) for g in found)
    out = []
    for k, g in enumerate(found, start=1):
        kinds = {"memory" if is_memory_source(ps[i].get("source")) else "external" for i in g.members}
        source = kinds.pop() if len(kinds) == 1 else "both"
        sentences = []
        for i in g.members:
            s = one_line(readings[i].sentence)
            if s and s not in sentences:
                sentences.append(s)
        conf = len(g.members) / total + (MIXED_BONUS if source == "both" else 0.0)
        entity = next((e for s in sentences if (e := entity_of(s, question))), None)
        out.append(_Group(k, g.answer, [i + 1 for i in g.members], source, " ".join(sentences),
                          round(min(1.0, conf), 2), entity, sum(readings[i].relevance for i in g.members)))
    return out


def _structured(fields: Fields) -> bool:
    return str(fields.get("prompt_mode") or "").lower() == "structured"


def _group_lines(groups: list[_Group], structured: bool = False, n_passages: int = 0) -> list[str]:
    if structured:
        cited = {d for g in groups for d in g.docs}
        excluded = [str(k) for k in range(1, n_passages + 1) if k not in cited]
        return [f'<GROUP id="G{g.number}" source="{g.source}" docs="{",".join(map(str, g.docs))}">{g.summary}</GROUP>'
                for g in groups] + ([f"<EXCLUDED>{','.join(excluded)}</EXCLUDED>"] if excluded else [])
    return [f"Document {g.number} (source: {g.source}; original documents: {', '.join(map(str, g.docs))}): "
            f"{g.summary}" for g in groups]


def _best(groups: list[_Group], question: str) -> _Group:
    preferred = "external" if recency_cue(question) else "memory"
    return max(groups, key=lambda g: (g.confidence, g.source == "both", g.source == preferred, len(g.docs),
                                      g.relevance, -g.docs[0]))


def _final(groups: list[_Group], multi: bool, question: str) -> list[_Group]:
    best = _best(groups, question)
    if not multi:
        return [best]
    need = min(2, len(best.docs))

    def other_entity(g: _Group) -> bool:
        larger = [h for h in groups if len(h.docs) > len(g.docs)]
        return bool(g.entity) and bool(larger) and all(h.entity and not same_entity(g.entity, h.entity)
                                                       for h in larger)

    keep = [g for g in groups if g is best or other_entity(g)
            or (g.confidence >= MULTI_RATIO * best.confidence and len(g.docs) >= need)]
    return sorted(keep, key=lambda g: (-g.confidence, g.number))


def _tie_note(groups: list[_Group], best: _Group, question: str) -> str:
    """Why the best group beat another group with the same confidence, when one did."""
    tied = [g for g in groups if g is not best and g.confidence == best.confidence and g.source != best.source]
    if not tied or best.source == "both":
        return ""
    if best.source == "memory":
        return (" It ties with retrieved documents; my own memory is preferred because the question does not ask "
                "for recent information.")
    if recency_cue(question):
        return (" It ties with my memory; the retrieved documents are preferred because the question asks for recent "
                "information.")
    return ""


def consolidate(fields: Fields) -> str:
    """``Document k (source: memory|external|both; original documents: i, j): <supporting sentences>``
    per answer group; a one-line note when no passage answers the question."""
    groups = _groups(fields)
    if not groups:
        return "No document contains information that answers the question."
    return "\n".join(_group_lines(groups, _structured(fields), len(passages(fields))))


def consolidate_answer(fields: Fields) -> str:
    """Step 1 groups, Step 2 ``Group k: <answer> (confidence 0.67)``, Step 3 ``<ANSWER>x</ANSWER>``
    (one tag per kept group in multi mode; ``<ANSWER>I don't know</ANSWER>`` when nothing answers)."""
    groups = _groups(fields)
    if not groups:
        return ("Step 1: No document contains information that answers the question.\n"
                f"Step 3: <ANSWER>{IDK}</ANSWER>")
    multi = str(fields.get("answer_mode") or "").lower() == "multi"
    final = _final(groups, multi, fields["question"])
    structured = _structured(fields)
    lines = ["Step 1:", *_group_lines(groups, structured, len(passages(fields))), "Step 2:"]
    lines += [f'<CANDIDATE group="G{g.number}" confidence="{g.confidence:.2f}">{g.answer}</CANDIDATE>' if structured
              else f"Group {g.number}: {g.answer} (confidence {g.confidence:.2f})" for g in groups]
    why = "; ".join(f"group {g.number} ({g.source}, {len(g.docs)} document{'s' if len(g.docs) > 1 else ''}, "
                    f"confidence {g.confidence:.2f})" for g in final)
    lines.append(f"Step 3: The best supported {'answers come from' if len(final) > 1 else 'answer comes from'} "
                 f"{why}.{_tie_note(groups, final[0], fields['question'])}")
    lines += [f"<ANSWER>{g.answer}</ANSWER>" for g in final]
    return "\n".join(lines)


HANDLERS = register_handlers({"consolidate": consolidate, "consolidate_answer": consolidate_answer})


# ------------------------------------------------------------------------------------------- prompts

_GEN = (r"Write a passage with accurate information that is relevant to answering the question below\. .*?\n\n"
        r"Question: (?P<question>.*?)(?:\nPassage:|\n\nWrite at most (?P<many>\d+) passages, .*\nPassages:)\s*")
_CON = (r"Task: Consolidate the information from your own memorized documents and the externally retrieved documents "
        r"for the question below\.\n\n(?P<instructions>.*?)\n\nInitial Context:\n(?P<context>.*?)\nLast Context:\n"
        r".*\nQuestion: (?P<question>.*?)\nNew Context:\s*")
_ANS = (r"Task: Answer the question using both your own memorized documents and the externally retrieved documents\."
        r"\n\n(?P<instructions>.*?)\n\nInitial Context:\n(?P<context>.*?)\n(?:Consolidated Context:\n.*\n)?"
        r"Question: (?P<question>.*?)\nAnswer:\s*")
_DOCUMENT = re.compile(r"Document (\d+) \(source: (memory|external retrieval)(?:, [^\n]*?)?\): ")


def _context(block: str) -> list[dict[str, str]] | None:
    """The initial context's ``Document k (source: …): text`` lines as passages with their source."""
    items = read_labelled(block, _DOCUMENT, 1)
    if items is None:
        return None
    return [{"source": "memory" if m.group(2) == "memory" else "external", "text": text} for m, text in items]


def _consolidation(answer: bool):
    def build(m: re.Match[str], prompt: Prompt) -> Fields | None:
        found = _context(m["context"])
        if found is None:
            return None
        fields = {"question": m["question"], "passages": found,
                  "prompt_mode": "structured" if "<GROUP id=" in m["instructions"] else "paper"}
        if answer:
            fields["answer_mode"] = "multi" if "Step 3: Select all correct answers" in m["instructions"] else "single"
        return fields
    return build


def _generation(m: re.Match[str], prompt: Prompt) -> Fields:
    return {"question": m["question"], "max_passages": int(m["many"] or 1)}


register_readers(
    PromptReader("generate_passage", "Astute passage generation", matcher(_GEN, _generation),
                 remember=remember_question),
    PromptReader("consolidate", "Astute consolidation", matcher(_CON, _consolidation(answer=False))),
    PromptReader("consolidate_answer", "Astute consolidation and answer", matcher(_ANS, _consolidation(answer=True))),
)
