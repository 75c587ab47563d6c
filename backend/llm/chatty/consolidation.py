"""Astute RAG's two replies, dressed: the consolidated documents (p_con) and the three steps ending in ``<ANSWER>``
(p_ans). The plain replies are read in the offline handler's exact format (``backend.llm.offline.astute``).

Groups are written as the prompt asks (``Document k (source: ...; original documents: ...)``), with the header in
bold, as bullets or a numbered list, as blocks with a field per line, as a table, all on one line, or as JSON; the
source in the prompt's other words ("external retrieval", "memory and external retrieval"). Candidates carry their
confidence as a decimal, a percentage, a leading-dot decimal or tenths. The final answer keeps its tag, spaced or
after a "Final Answer:" label, or unclosed (the reply cut at the token limit right after it), or drops it for a label
(or a JSON key): the content a careful reader takes is the same. Structured-mode replies (``<GROUP>`` tags) keep
their tags and are fenced or spaced out.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from backend.llm.chatty.dressers import Body
from backend.llm.chatty.pieces import PASSAGE_PREAMBLES, PROBABILITY_STYLES, as_json, label, pick, probability, table

_GROUP = re.compile(r"^Document (?P<n>\d+) \(source: (?P<source>\w+); original documents: (?P<docs>[\d, ]+)\): "
                    r"(?P<summary>.*)$")
_CANDIDATE = re.compile(r"^Group (?P<n>\d+): (?P<answer>.*) \(confidence (?P<confidence>[01]\.\d+)\)$")
NOTHING = "No document contains information that answers the question."
SOURCE_WORDS = {"memory": ("memory", "Memory", "internal memory"),
                "external": ("external", "external retrieval", "External"),
                "both": ("both", "memory and external retrieval", "both (memory + external)")}
GROUP_STYLES = {"plain": 2, "bold-header": 2, "bold-colon": 1, "bullets": 2, "numbered": 2, "blocks": 2, "table": 1,
                "one-line": 1}


@dataclass(frozen=True)
class _Group:
    n: int
    source: str
    docs: str       # "1, 3, 5"
    summary: str


def _groups(lines: list[str]) -> list[_Group] | None:
    found = [_GROUP.match(ln) for ln in lines]
    if not lines or not all(found):
        return None
    return [_Group(int(m.group("n")), m.group("source"), m.group("docs"), m.group("summary")) for m in found]


def render_groups(groups: list[_Group], rng: random.Random, style: str | None = None) -> tuple[str, str]:
    style = style or pick(rng, GROUP_STYLES)
    if style == "table" and any("|" in g.summary for g in groups):
        style = "blocks"
    src = {g.n: pick(rng, SOURCE_WORDS.get(g.source, (g.source,))) for g in groups}
    if style == "bold-header":
        lines = [f"**Document {g.n}** (source: {src[g.n]}; original documents: {g.docs}): {g.summary}" for g in groups]
    elif style == "bold-colon":
        lines = [f"**Document {g.n} (source: {src[g.n]}; original documents: {g.docs}):** {g.summary}" for g in groups]
    elif style == "bullets":
        lines = [f"- **New Document {g.n}** (Source: {src[g.n]}; from document{'s' if ',' in g.docs else ''} "
                 f"{g.docs}): {g.summary}" for g in groups]
    elif style == "numbered":
        lines = [f"{g.n}. **Source:** {src[g.n]}; **Original documents:** {g.docs} — {g.summary}" for g in groups]
    elif style == "blocks":
        lines = [f"### New Document {g.n}\n- **Source:** {src[g.n]}\n- **Original documents:** {g.docs}\n"
                 f"- **Summary:** {g.summary}\n" for g in groups]
    elif style == "table":
        return table(["New document", "Source", "Original documents", "Summary"],
                     [[str(g.n), src[g.n], g.docs, g.summary] for g in groups]), style
    elif style == "one-line":
        return " ".join(f"Document {g.n} (source: {g.source}; original documents: {g.docs}): {g.summary}"
                        for g in groups), style
    else:
        lines = [f"Document {g.n} (source: {g.source}; original documents: {g.docs}): {g.summary}" for g in groups]
    return "\n".join(lines).rstrip(), style


def _groups_json(groups: list[_Group]) -> list[dict]:
    return [{"id": g.n, "source": g.source, "original_documents": [int(d) for d in g.docs.split(", ")],
             "summary": g.summary} for g in groups]


def _tags(text: str, rng: random.Random) -> tuple[str, str]:
    """Structured mode: the tags kept, fenced or spaced out."""
    style = pick(rng, {"tags": 3, "tags-fenced": 1, "tags-spaced": 1})
    if style == "tags-fenced":
        return f"```xml\n{text}\n```", style
    if style == "tags-spaced":
        return text.replace("\n", "\n\n"), style
    return text, style


def consolidate(reply: str, fields: dict, rng: random.Random) -> Body | None:
    text = reply.strip()
    if text == NOTHING:
        style = pick(rng, ("plain", "bold", "new-context"))
        said = {"plain": text, "bold": f"**{text}**", "new-context": f"New Context:\n{text}"}[style]
        return Body(said, [f"nothing:{style}"], PASSAGE_PREAMBLES)
    if text.startswith("<GROUP"):
        said, style = _tags(text, rng)
        return Body(said, [style], PASSAGE_PREAMBLES)
    groups = _groups(text.splitlines())
    if groups is None:
        return None
    if rng.random() < 0.1:
        said, style = as_json({"new_documents": _groups_json(groups)}, rng)
        return Body(said, [style], PASSAGE_PREAMBLES)
    said, style = render_groups(groups, rng)
    if rng.random() < 0.2:
        said, style = f"{pick(rng, ('New Context:', '**New Context:**', '### New Context'))}\n{said}", f"{style}+echo"
    return Body(said, [f"groups:{style}"], PASSAGE_PREAMBLES)


# ---------------------------------------------------------------------------------------------- p_ans

_ANSWER_REPLY = re.compile(r"\AStep 1:\n(?P<groups>.*?)\nStep 2:\n(?P<candidates>.*?)\nStep 3: (?P<why>[^\n]*)\n"
                           r"(?P<answers>(?:<ANSWER>.*?</ANSWER>\n?)+)\Z", re.S)
_NOTHING_REPLY = re.compile(r"\AStep 1: (?P<nothing>[^\n]*)\nStep 3: <ANSWER>(?P<answer>[^<]*)</ANSWER>\Z")
_ANSWER_TAG = re.compile(r"<ANSWER>(.*?)</ANSWER>", re.S)
STEP_TITLES = {1: "Consolidate the information", 2: "Propose answers and assign confidence",
               3: {"single": "Select the final answer", "multi": "Select all correct answers"}}
STEP_STYLES = {"plain": 2, "bold-title": 2, "heading-title": 2, "bold": 1}
CANDIDATE_STYLES = {"plain": 2, "bold-label": 2, "dash": 2, "numbered": 1, "table": 1}
FINAL_STYLES = {"tags": 3, "label-tag": 2, "spaced-tag": 1, "no-tag": 2, "bold-in-tag": 1, "cut-tag": 1}


def _step(k: int, style: str, multi: bool, rng: random.Random) -> str:
    title = STEP_TITLES[k][("multi" if multi else "single")] if k == 3 else STEP_TITLES[k]
    return {"plain": f"Step {k}:", "bold-title": f"**Step {k}: {title}**",
            "heading-title": f"{pick(rng, ('###', '##'))} Step {k}: {title}", "bold": f"**Step {k}:**"}[style]


def _candidates(cands: list[tuple[int, str, float]], rng: random.Random) -> tuple[str, str]:
    style = pick(rng, CANDIDATE_STYLES)
    number = pick(rng, PROBABILITY_STYLES)
    conf = {n: probability(c, number) for n, _, c in cands}
    if style == "table" and any("|" in a for _, a, _ in cands):
        style = "dash"
    if style == "bold-label":
        lines = [f"**Group {n}:** {a} (confidence: {conf[n]})" for n, a, _ in cands]
    elif style == "dash":
        lines = [f"- **Group {n}**: {a} — Confidence: {conf[n]}" for n, a, _ in cands]
    elif style == "numbered":
        lines = [f"{n}. {a} (confidence: {conf[n]})" for n, a, _ in cands]
    elif style == "table":
        return table(["Group", "Answer", "Confidence"], [[str(n), a, conf[n]] for n, a, _ in cands]), style
    else:
        lines = [f"Group {n}: {a} (confidence {conf[n]})" for n, a, _ in cands]
    return "\n".join(lines), f"{style}:{number}"


def _final(answers: list[str], multi: bool, rng: random.Random) -> tuple[str, str]:
    style = pick(rng, FINAL_STYLES)
    if style == "label-tag":
        if len(answers) == 1:
            return f"**Final Answer:** <ANSWER>{answers[0]}</ANSWER>", style
        return "**Final Answers:**\n" + "\n".join(f"- <ANSWER>{a}</ANSWER>" for a in answers), style
    if style == "spaced-tag":
        return "\n".join(f"<ANSWER> {a} </ANSWER>" for a in answers), style
    if style == "bold-in-tag":
        return "\n".join(f"<ANSWER>**{a}**</ANSWER>" for a in answers), style
    if style == "cut-tag":  # the reply ran into the token limit right after the last answer: its tag never closed
        return "\n".join([f"<ANSWER>{a}</ANSWER>" for a in answers[:-1]] + [f"<ANSWER>{answers[-1]}"]), style
    if style == "no-tag":
        if len(answers) == 1 and not multi:
            kind = pick(rng, ("plain", "bold-inside", "bold-outside", "bold-value"))
            return label("Final Answer", answers[0], kind), f"{style}:{kind}"
        return "**Final Answers:**\n" + "\n".join(f"- {a}" for a in answers), style
    return "\n".join(f"<ANSWER>{a}</ANSWER>" for a in answers), "tags"


def consolidate_answer(reply: str, fields: dict, rng: random.Random) -> Body | None:
    text = reply.strip()
    multi = str(fields.get("answer_mode") or "").lower() == "multi"
    step_style = pick(rng, STEP_STYLES)
    gap = "\n\n" if step_style != "plain" else "\n"
    nothing = _NOTHING_REPLY.match(text)
    if nothing:
        final, final_style = _final([nothing.group("answer")], multi, rng)
        return Body(f"{_step(1, step_style, multi, rng)}\n{nothing.group('nothing')}{gap}"
                    f"{_step(3, step_style, multi, rng)}\n{final}", [f"steps:{step_style}", f"final:{final_style}"],
                    PASSAGE_PREAMBLES, closing=final_style != "cut-tag")
    m = _ANSWER_REPLY.match(text)
    if not m:
        return None
    answers = _ANSWER_TAG.findall(m.group("answers"))
    structured = m.group("groups").lstrip().startswith("<GROUP")
    if structured:
        groups_text, group_style = m.group("groups"), "tags"
        cands_text, cand_style = m.group("candidates"), "tags"
    else:
        groups = _groups(m.group("groups").splitlines())
        found = [_CANDIDATE.match(ln) for ln in m.group("candidates").splitlines()]
        if groups is None or not found or not all(found):
            return None
        cands = [(int(c.group("n")), c.group("answer"), float(c.group("confidence"))) for c in found]
        if rng.random() < 0.1:
            return _as_json(groups, cands, answers, multi, m.group("why"), rng)
        groups_text, group_style = render_groups(groups, rng)
        cands_text, cand_style = _candidates(cands, rng)
    final, final_style = _final(answers, multi, rng)
    step3 = (f"{_step(3, 'plain', multi, rng)} {m.group('why')}" if step_style == "plain"
             else f"{_step(3, step_style, multi, rng)}\n{m.group('why')}")
    said = gap.join([f"{_step(1, step_style, multi, rng)}\n{groups_text}", f"{_step(2, step_style, multi, rng)}\n"
                     f"{cands_text}", f"{step3}\n{final}"])
    return Body(said, [f"steps:{step_style}", f"groups:{group_style}", f"candidates:{cand_style}",
                       f"final:{final_style}"], PASSAGE_PREAMBLES, closing=final_style != "cut-tag")


def _as_json(groups: list[_Group], cands: list[tuple[int, str, float]], answers: list[str], multi: bool, why: str,
             rng: random.Random) -> Body:
    """The whole reply as one JSON object, without the answer tag (issue 25's Astute example)."""
    confidence = {n: (a, c) for n, a, c in cands}
    rows = [{**g, "answer": confidence.get(g["id"], (None, None))[0],
             "confidence": confidence.get(g["id"], (None, None))[1]} for g in _groups_json(groups)]
    final = {"final_answers": answers} if multi else {"final_answer": answers[0] if answers else None}
    text, style = as_json({"groups": rows, "reasoning": why, **final}, rng)
    return Body(text, [style], PASSAGE_PREAMBLES)
