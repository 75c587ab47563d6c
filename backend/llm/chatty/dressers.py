"""One dresser per task format: the offline model's exact reply in, the same content as a chat model writes it out.

A dresser reads the plain reply with the exact format the offline handler writes (``backend.llm.offline``), not
with the method's reader, and returns ``Body`` (the dressed text, the styles drawn, which openers fit) or None
when the reply is not in that format (it is then left as it is). Which styles fit a task follows its prompt: a
probability where one is asked, a list where a list is asked, ``$$ keep $$`` where a tag is asked.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.answers import is_idk
from backend.llm.chatty.pieces import (LABEL_KINDS, PASSAGE_PREAMBLES, PREAMBLES, PROBABILITY_STYLES, as_json, bold,
                                       heading, label, pick, probability, render_list, table, wrap_value,
                                       wrapped)


@dataclass
class Body:
    text: str
    styles: list[str] = field(default_factory=list)
    #: the openers that fit this reply; () for a reply no model would open with one (a bare letter, a refusal)
    preambles: tuple[str, ...] = PREAMBLES
    closing: bool = True


Dresser = Callable[[str, dict, random.Random], "Body | None"]

DOC_PREAMBLES = ("Based on the document provided, here is my answer:", "After reading the document carefully:",
                 "Sure! Here is my response.")
#: "I don't know" as chat models say it; a careful reader reads each as an abstention.
IDK_FORMS = ("I don't know.", "**I don't know.**", "I'm sorry, but I don't know.",
             "I don't know the answer to this question.")


def _sentence(value: str) -> str:
    return value if value.endswith((".", "!", "?")) else f"{value}."


# ------------------------------------------------------------------------------------- short answers

def short_answer(reply: str, fields: dict, rng: random.Random, name: str = "Answer") -> Body | None:
    """A keyword answer (closed book, vanilla RAG, RA-RAG, BRIDGE's free responder, RC-RAG's CF-usage)."""
    value = reply.strip()
    if not value or "\n" in value:
        return None
    preambles = PASSAGE_PREAMBLES + PREAMBLES if fields.get("passages") else PREAMBLES
    if is_idk(value):
        form = pick(rng, IDK_FORMS + (label(name, "I don't know", pick(rng, LABEL_KINDS)),))
        return Body(form, ["idk"], preambles=())
    style = pick(rng, {"plain": 2, "bold": 2, "label": 3, "sentence": 2, "heading": 1, "json": 1})
    if style == "bold":
        return Body(bold(value), [style], preambles)
    if style == "label":
        kind = pick(rng, LABEL_KINDS + ("final",))
        text = label("Final answer", value, "plain") if kind == "final" else label(name, value, kind)
        return Body(text, [f"label:{kind}"], preambles)
    if style == "sentence":
        text = pick(rng, (f"The answer is {_sentence(value)}", f"The answer is **{value}**."))
        return Body(text, [style], preambles)
    if style == "heading":
        return Body(f"{heading(name, rng)}\n{value}", [style], preambles)
    if style == "json":
        text, how = as_json({name.lower(): value}, rng)
        return Body(text, [how], preambles)
    return Body(value, ["plain"], preambles)


def ping(reply: str, fields: dict, rng: random.Random) -> Body | None:
    value = reply.strip()
    if value.lower() != "ready":
        return None
    style, text = pick(rng, (("plain", "ready"), ("exclaimed", "Ready!"), ("capitalised", "Ready."),
                             ("bold", "**Ready**")))
    return Body(text, [style], preambles=(), closing=False)


def entailment(reply: str, fields: dict, rng: random.Random) -> Body | None:
    value = reply.strip()
    if value not in ("Yes", "No"):
        return None
    why = "both answers refer to the same thing" if value == "Yes" else "the two answers refer to different things"
    style = pick(rng, {"plain": 2, "period": 1, "bold": 2, "lower": 1, "reason": 2, "label": 2, "json": 1,
                       "verdict-last": 1})
    text = {"plain": value, "period": f"{value}.", "bold": bold(value), "lower": value.lower(),
            "reason": f"{value}, {why}.", "verdict-last": f"Comparing the two answers, {why}. So the answer is "
                                                          f"**{value}**."}.get(style)
    if style == "label":
        kind = pick(rng, LABEL_KINDS)
        return Body(label("Answer", value, kind), [f"label:{kind}"])
    if style == "json":
        text, how = as_json({"answer": value, "reason": why}, rng)
        return Body(text, [how])
    return Body(text, [style], preambles=PREAMBLES if style in ("reason", "verdict-last") else ())


# ---------------------------------------------------------------------------------------- passages

PASSAGE_PREAMBLES_GEN = ("Here's a short passage based on what I know:", "Sure! Here is a passage with the relevant "
                         "information:", "Certainly. Here's what I know about this:")
#: Astute RAG's example refusal (issue 25) and its kin.
IDK_PASSAGES = ("I don't know.", "I'm sorry, but I don't have reliable information about this.",
                "I don't know the answer to this question, so I won't guess.", "**I don't know.**")
_DOC_BLOCK = re.compile(r"<DOC>\n(.*?)\n</DOC>", re.S)


def generate_passage(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """A passage from memory (Astute's call 1, BRIDGE's K_int), several as ``<DOC>`` blocks, or "I don't know"."""
    text = reply.strip()
    if is_idk(text):
        return Body(pick(rng, IDK_PASSAGES), ["idk"], preambles=())
    blocks = _DOC_BLOCK.findall(text)
    if blocks:
        style = pick(rng, {"doc-tags": 3, "doc-headers": 2, "passage-headers": 2})
        if style == "doc-headers":
            text = "\n\n".join(f"**Document {k}:**\n{b}" for k, b in enumerate(blocks, start=1))
        elif style == "passage-headers":
            text = "\n\n".join(f"Passage {k}: {b}" for k, b in enumerate(blocks, start=1))
        return Body(text, [style], PASSAGE_PREAMBLES_GEN)
    style = pick(rng, {"plain": 4, "label": 2, "heading": 1, "quote": 1})
    if style == "label":
        kind = pick(rng, ("plain", "bold-inside", "bold-outside"))
        return Body(label("Passage", text, kind, short=False), [f"label:{kind}"], PASSAGE_PREAMBLES_GEN)
    if style == "heading":
        return Body(f"{heading('Passage', rng)}\n{text}", [style], PASSAGE_PREAMBLES_GEN)
    if style == "quote" and "\n" not in text:
        return Body(f"> {text}", [style], PASSAGE_PREAMBLES_GEN)
    return Body(text, ["plain"], PASSAGE_PREAMBLES_GEN)


# ------------------------------------------------------------------------------------------ MADAM-RAG

_TURN = re.compile(r"\AAnswer: (?P<answer>.*?)\. Explanation: (?P<why>.*)\Z", re.S)


def debate_turn(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """``Answer: X. Explanation: Y`` as labelled lines, headings, bullets or JSON."""
    m = _TURN.match(reply.strip())
    if not m:
        return None
    answer, why = m.group("answer"), m.group("why")
    if answer == "unknown" and rng.random() < 0.5:
        answer = "Unknown"
    kind = pick(rng, LABEL_KINDS)
    layout = pick(rng, {"plain": 2, "lines": 4, "one-line": 1, "heading": 1, "bullets": 1, "json": 1})
    if layout == "plain":
        return Body(reply.strip(), ["plain"], DOC_PREAMBLES)
    if layout == "lines":
        gap = pick(rng, ("\n", "\n\n"))
        text = f"{label('Answer', answer, kind)}{gap}{label('Explanation', why, kind, short=False)}"
    elif layout == "one-line":
        text = f"{label('Answer', answer, kind)}. {label('Explanation', why, kind, short=False)}"
    elif layout == "heading":
        text = f"{heading('Answer', rng)}\n{answer}\n\n{heading('Explanation', rng)}\n{why}"
        return Body(text, [layout], DOC_PREAMBLES)
    elif layout == "bullets":
        text = f"- {label('Answer', answer, kind)}\n- {label('Explanation', why, kind, short=False)}"
    else:
        text, how = as_json({"answer": answer, "explanation": why}, rng)
        return Body(text, [how], DOC_PREAMBLES)
    return Body(text, [layout, f"label:{kind}"], DOC_PREAMBLES)


_AGGREGATE_HEAD = "All Correct Answers: "


def _read_aggregate(reply: str) -> tuple[list[str], str] | None:
    text = reply.strip()
    if not text.startswith(_AGGREGATE_HEAD):
        return None
    try:
        answers, end = json.JSONDecoder().raw_decode(text, len(_AGGREGATE_HEAD))
    except json.JSONDecodeError:
        return None
    rest = text[end:]
    if not isinstance(answers, list) or not rest.startswith(". Explanation: "):
        return None
    return [str(a) for a in answers], rest[len(". Explanation: "):]


def aggregate(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """``All Correct Answers: [...]. Explanation: ...`` with the answers as a JSON list, a bare list, bullets, a
    table or JSON; no answer as ``[]``, ``None`` or ``unknown`` (the prompt's own word)."""
    read = _read_aggregate(reply)
    if read is None:
        return None
    answers, why = read
    kind = pick(rng, ("plain", "bold-inside", "bold-outside", "upper", "lower"))
    layout = pick(rng, {"plain": 2, "label": 3, "list": 3, "heading": 1, "table": 1, "json": 1})
    name = pick(rng, ("All Correct Answers", "All correct answers"))
    explanation = label("Explanation", why, kind, short=False)
    if not answers:
        empty = pick(rng, ("[]", "None", "unknown"))
        if layout == "json":
            text, how = as_json({"all_correct_answers": [], "explanation": why}, rng)
            return Body(text, [how], PASSAGE_PREAMBLES)
        return Body(f"{label(name, empty, kind)}\n\n{explanation}", [f"empty:{empty}", f"label:{kind}"],
                    PASSAGE_PREAMBLES)
    commas = any("," in a for a in answers)
    if layout == "plain":
        return Body(reply.strip(), ["plain"], PASSAGE_PREAMBLES)
    if layout == "label":
        shape = pick(rng, ("json-list", "bare") if not commas else ("json-list",))
        listing = json.dumps(answers, ensure_ascii=False) if shape == "json-list" else ", ".join(answers)
        return Body(f"{label(name, listing, kind)}\n\n{explanation}", [f"list:{shape}", f"label:{kind}"],
                    PASSAGE_PREAMBLES)
    if layout in ("list", "heading"):
        items, style = render_list(answers, rng, style=pick(rng, ("dash", "numbered", "star", "bold-item")))
        head = heading(name, rng) if layout == "heading" else label(name, "", kind).rstrip()
        tail = f"{heading('Explanation', rng)}\n{why}" if layout == "heading" else explanation
        return Body(f"{head}\n{items}\n\n{tail}", [layout, f"list:{style}"], PASSAGE_PREAMBLES)
    if layout == "table" and not any("|" in a for a in answers):
        rows = [[str(k), a] for k, a in enumerate(answers, start=1)]
        return Body(f"{table(['#', 'Correct answer'], rows)}\n\n{explanation}", ["table"], PASSAGE_PREAMBLES)
    text, how = as_json({"all_correct_answers": answers, "explanation": why}, rng)
    return Body(text, [how], PASSAGE_PREAMBLES)


# -------------------------------------------------------------------------------- counterfactual (RC-RAG)

_CF = re.compile(r"\AAnswer: (?P<answer>.*)\.\nEvidence: ## (?P<evidence>.*) ##\.\Z", re.S)
_CITED = re.compile(r"Passage-\d+(?:, Passage-\d+)*")


def cf_answer(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """``Answer: X.`` plus ``Evidence: ## Passage-i ##`` (RAG answer, CF-quality): labelled lines, one line (the
    prompt's own example), a sentence, headings or JSON; the evidence with or without its ``##`` marks."""
    m = _CF.match(reply.strip())
    if not m:
        return None
    answer, evidence = m.group("answer"), m.group("evidence")
    cited = bool(_CITED.fullmatch(evidence))
    ev = pick(rng, (f"## {evidence} ##", evidence, f"## {evidence} ##.")) if cited else f"## {evidence} ##"
    kind = pick(rng, LABEL_KINDS)
    layout = pick(rng, {"plain": 2, "lines": 3, "one-line": 2, "sentence": 2, "heading": 1, "json": 1})
    styles = [layout, f"label:{kind}"]
    if layout == "plain":
        return Body(reply.strip(), ["plain"], PASSAGE_PREAMBLES)
    if layout == "lines":
        text = f"{label('Answer', answer, kind)}\n{label('Evidence', ev, kind, short=cited and '#' not in ev)}"
    elif layout == "one-line":
        text = f"{label('Answer', answer, kind)}. {label('Evidence', ev, kind, short=cited and '#' not in ev)}"
    elif layout == "sentence":
        said = "I don't know." if is_idk(answer) else f"The answer is {_sentence(answer)}"
        text = f"{said}\n\n{label('Evidence', ev, kind, short=False)}"
    elif layout == "heading":
        text = f"{heading('Answer', rng)}\n{answer}\n\n{heading('Evidence', rng)}\n{ev}"
        styles = [layout]
    else:
        text, how = as_json({"answer": answer, "evidence": evidence.split(", ") if cited else evidence}, rng)
        styles = [how]
    return Body(text, styles, PASSAGE_PREAMBLES)


def cf_usage(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """CF-usage's re-answer: a keyword answer (with or without an ``Answer:`` label)."""
    return short_answer(reply, fields, rng)


_JUDGE = re.compile(r"\A\$\$ (?P<choice>keep|discard) \$\$\n(?P<why>.*)\Z", re.S)


def cf_judge(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """Direct selection: the ``$$ keep $$`` / ``$$ discard $$`` tag bolded, tight, in a sentence (also "I choose to
    $$ keep $$ this answer rather than $$ discard $$ it"), after the reasoning, as a ``Decision:`` or in JSON."""
    m = _JUDGE.match(reply.strip())
    if not m:
        return None
    choice, why = m.group("choice"), m.group("why")
    other = "discard" if choice == "keep" else "keep"
    style = pick(rng, {"plain": 2, "bold-tag": 2, "tight-tag": 1, "sentence": 2, "both-named": 1, "reason-first": 2,
                       "decision": 1, "json": 1})
    if style == "json":
        text, how = as_json({"decision": choice, "reason": why}, rng)
        return Body(text, [how])
    if style == "decision":
        kind = pick(rng, ("plain", "bold-inside", "bold-outside"))
        value = pick(rng, (choice, f"$$ {choice} $$", choice.capitalize()))
        return Body(f"{label('Decision', value, kind)}\n{label('Reason', why, kind, short=False)}",
                    [style, f"label:{kind}"])
    text = {"plain": reply.strip(),
            "bold-tag": f"**$$ {choice} $$**\n\n{why}",
            "tight-tag": f"$${choice}$$\n{why}",
            "sentence": pick(rng, (f"I choose to $$ {choice} $$ the answer.\n\n{why}",
                                   f"After weighing the passages, I would $$ {choice} $$ this answer. {why}")),
            "both-named": f"I choose to $$ {choice} $$ this answer rather than $$ {other} $$ it.\n\n{why}",
            "reason-first": f"{why}\n\nTherefore, I choose to $$ {choice} $$ the answer."}[style]
    return Body(text, [style])


_PROBABILITY = re.compile(r"\AProbability: (?P<p>[01]\.\d+)\Z")


def cf_probability(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """``Probability: 0.xx`` as 0.83 / 83% / .83 / 83/100 / 0,83, bare, in bold or brackets, in a sentence or JSON."""
    m = _PROBABILITY.match(reply.strip())
    if not m:
        return None
    p = float(m.group("p"))
    number = pick(rng, PROBABILITY_STYLES)
    value, wrap = wrap_value(probability(p, number), rng)
    style = pick(rng, {"label": 5, "bare": 2, "sentence": 1, "json": 1})
    if style == "json":
        text, how = as_json({"probability": round(p, 2)}, rng)
        return Body(text, [how])
    if style == "bare":
        return Body(value, [style, number, wrap], preambles=())
    if style == "sentence":
        return Body(f"I'd estimate the probability at {value}.", [style, number, wrap])
    kind = pick(rng, ("plain", "bold-inside", "bold-outside", "lower", "upper"))
    return Body(label("Probability", value, kind), [f"label:{kind}", number, wrap])


# ------------------------------------------------------------------------------------------------ BRIDGE

_BIAS = re.compile(r"\AAnalysis: (?P<why>.*)\nProbability of retrieving external knowledge: (?P<r>\d+)%\n"
                   r"Probability of answering directly: (?P<d>\d+)%\Z", re.S)
RETRIEVE, DIRECT = "Probability of retrieving external knowledge", "Probability of answering directly"


def soft_bias(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """The allocator's analysis and two probabilities: labels bolded or in other cases, values as percentages,
    decimals, leading-dot decimals, fractions, in bold or brackets; as lines, a bulleted block under headings, a
    table or JSON."""
    m = _BIAS.match(reply.strip())
    if not m:
        return None
    why, r, d = m.group("why"), int(m.group("r")) / 100, int(m.group("d")) / 100
    number = pick(rng, PROBABILITY_STYLES)
    rv, wrap = wrap_value(probability(r, number), rng)
    dv = wrapped(probability(d, number), wrap)  # both values written alike
    kind = pick(rng, LABEL_KINDS)
    layout = pick(rng, {"plain": 2, "lines": 4, "probabilities-first": 1, "heading-bullets": 2, "table": 1,
                        "json": 1})
    styles = [layout, number, wrap, f"label:{kind}"]
    analysis = label("Analysis", why, kind, short=False)
    if layout == "plain":
        return Body(reply.strip(), ["plain"])
    if layout == "lines":
        gap = pick(rng, ("\n", "\n\n"))
        text = gap.join([analysis, label(RETRIEVE, rv, kind), label(DIRECT, dv, kind)])
    elif layout == "probabilities-first":
        text = f"{label(RETRIEVE, rv, kind)}\n{label(DIRECT, dv, kind)}\n\n{analysis}"
    elif layout == "heading-bullets":
        text = (f"{heading('Analysis', rng)}\n{why}\n\n{heading('Probabilities', rng)}\n"
                f"- {label('Retrieving external knowledge', rv, kind)}\n- {label('Answering directly', dv, kind)}")
    elif layout == "table":
        text = f"{analysis}\n\n" + table(["Option", "Probability"], [["Retrieving external knowledge", rv],
                                                                     ["Answering directly", dv]])
    else:
        as_text = rng.random() < 0.5   # "80%" or 0.8
        r_json, d_json = (probability(r, "percent"), probability(d, "percent")) if as_text else (r, d)
        text, how = as_json({"analysis": why, "probability_of_retrieving_external_knowledge": r_json,
                             "probability_of_answering_directly": d_json}, rng)
        styles = [how]
    return Body(text, styles)


def _numbered(text: str) -> list[str] | None:
    lines = text.strip().splitlines()
    items = [re.match(r"^\d+\. (.*)$", ln) for ln in lines]
    return [m.group(1) for m in items] if lines and all(items) else None


def _list_header(rng: random.Random, name: str) -> tuple[str, str | None]:
    """Now and then a header above a list, as the prompt names it."""
    kind = pick(rng, {"none": 5, "label": 1, "bold": 1, "heading": 1})
    return {"none": "", "label": f"{name}:\n", "bold": f"**{name}:**\n",
            "heading": f"### {name}\n"}[kind], (None if kind == "none" else f"header:{kind}")


def sub_queries(reply: str, fields: dict, rng: random.Random) -> Body | None:
    items = _numbered(reply)
    if items is None:
        return None
    body, style = render_list(items, rng, prefix="Q", column="Question")
    head, head_style = _list_header(rng, "New questions")
    preambles = (f"Here are {len(items)} new questions that have the same answer:",
                 "Sure! Here are the rephrased questions:", "Certainly! Here are the new questions, most important "
                 "first:")
    return Body(head + body, [f"list:{style}"] + ([head_style] if head_style else []), preambles)


def _bold_answer(item: str) -> str:
    """"1869: the sentence" -> "**1869**: the sentence" (a model bolding its answer); else the whole item."""
    head, sep, rest = item.partition(": ")
    return f"**{head}**{sep}{rest}" if sep and not is_idk(item) else bold(item)


def _analysed(items: list[str], questions: list[str]) -> str:
    """Each sub-query, then its analysis and answer (the generator prompt asks to analyse before answering):
    "1869: the sentence" -> "Analysis: the sentence" / "Answer: 1869"."""
    blocks = []
    for k, (item, question) in enumerate(zip(items, questions), start=1):
        answer, sep, why = item.partition(": ")
        lines = [f"**Q{k}: {question}**"] + ([f"Analysis: {why}"] if sep and not is_idk(item) else [])
        blocks.append("\n".join(lines + [f"Answer: {answer if sep and not is_idk(item) else item}"]))
    return "\n\n".join(blocks)


def multi_answer(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """One answer per sub-query: any list style, or each sub-query with its analysis and answer."""
    items = _numbered(reply)
    if items is None:
        return None
    questions = [str(q) for q in fields.get("sub_queries") or []]
    if len(questions) == len(items) and rng.random() < 0.12:
        return Body(_analysed(items, questions), ["analysed"], ("Let me go through the questions one by one.",))
    body, style = render_list(items, rng, prefix="A", column="Answer", emphasise=_bold_answer)
    head, head_style = _list_header(rng, "Answers")
    preambles = ("Here are my answers, one per question:", "Sure! Here are the answers:",
                 "Let me go through the questions one by one.")
    return Body(head + body, [f"list:{style}"] + ([head_style] if head_style else []), preambles)


_REFLECT = re.compile(r"\AAnalysis: (?P<why>.*?)\nNew questions:\n(?P<list>.*)\Z", re.S)


def reflect(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """Phase 1's analysis and Phase 2's numbered questions: labels, headings or the prompt's phase names."""
    m = _REFLECT.match(reply.strip())
    items = _numbered(m.group("list")) if m else None
    if items is None:
        return None
    why = m.group("why")
    body, style = render_list(items, rng, prefix="Q", column="Question")
    layout = pick(rng, {"plain": 2, "labels": 3, "headings": 2, "phases": 1})
    if layout == "plain":
        return Body(reply.strip(), ["plain"], PASSAGE_PREAMBLES)
    if layout == "labels":
        kind = pick(rng, ("plain", "bold-inside", "bold-outside", "upper"))
        header = pick(rng, ("New questions:", "**New questions:**", "**New Questions:**", "New Questions:"))
        text = f"{label('Analysis', why, kind, short=False)}\n\n{header}\n{body}"
    elif layout == "headings":
        text = f"{heading('Analysis', rng)}\n{why}\n\n{heading('New Questions', rng)}\n{body}"
    else:
        text = f"**Phase 1: Analysis**\n{why}\n\n**Phase 2: New questions**\n{body}"
    return Body(text, [layout, f"list:{style}"], PASSAGE_PREAMBLES)


_OPTION = re.compile(r"\ACorrect Option: (?P<letter>[A-H])\Z")
_LETTER_PREFIX = re.compile(r"^\s*\(?[A-Ha-h][.):]\s+")


def select_option(reply: str, fields: dict, rng: random.Random) -> Body | None:
    """``Correct Option: B`` bolded, bracketed, with the option's text, in a sentence, as ``Answer: B``, a bare
    letter or JSON."""
    m = _OPTION.match(reply.strip())
    if not m:
        return None
    letter = m.group("letter")
    options = [str(o) for o in fields.get("options") or []]
    k = "ABCDEFGH".index(letter)
    text_of = _LETTER_PREFIX.sub("", options[k]).strip().rstrip(".") if k < len(options) else ""
    style = pick(rng, {"plain": 2, "label": 3, "bracket": 1, "with-text": 2, "sentence": 2, "answer-label": 1,
                       "bare": 1, "bold-bare": 1, "period": 1, "json": 1})
    if style == "with-text" and not text_of:
        style = "plain"
    if style == "label":
        kind = pick(rng, ("bold-inside", "bold-outside", "bold-value", "bold-line", "upper", "lower"))
        return Body(label("Correct Option", letter, kind), [f"label:{kind}"], PASSAGE_PREAMBLES)
    if style == "answer-label":
        kind = pick(rng, ("plain", "bold-inside", "bold-value"))
        return Body(label("Answer", letter, kind), [style, f"label:{kind}"], PASSAGE_PREAMBLES)
    if style == "json":
        text, how = as_json({"correct_option": letter}, rng)
        return Body(text, [how])
    if style in ("bare", "bold-bare"):
        return Body(letter if style == "bare" else bold(letter), [style], preambles=(), closing=False)
    text = {"plain": reply.strip(),
            "bracket": pick(rng, (f"Correct Option: [{letter}]", f"Correct Option: ({letter})")),
            "with-text": pick(rng, (f"Correct Option: {letter}. {text_of}", f"Correct Option: {letter} ({text_of})",
                                    f"**Correct Option:** {letter}. {text_of}")),
            "sentence": pick(rng, (f"The correct option is **{letter}**.", f"The correct option is {letter}: "
                                                                            f"{text_of}." if text_of else
                                   f"The correct option is {letter}.")),
            "period": f"Correct Option: {letter}."}[style]
    return Body(text, [style], PASSAGE_PREAMBLES)
