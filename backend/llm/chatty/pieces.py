"""The pieces chat models dress a reply in: labels, headings, lists, tables, probabilities, JSON, preambles and
closing remarks. Each function takes the seeded ``random.Random`` of the call and returns the text with the name of
the style it drew, so a test can count the styles a task meets.

Every piece keeps its content: a label's value, a list's items in order, a probability's value (to its two
decimals) are what a careful reader reads back. Frames (preambles, closings) carry no digit, no yes/no, no
keep/discard, no option letter and none of RC-RAG's refusal phrases, so they never add content either.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

#: Openers seen in chat replies; the task-specific ones are in ``dressers``.
PREAMBLES = ("Sure! Here is the answer.", "Certainly!", "Sure thing!", "Here's my response:",
             "Of course. Here is what I found.")
#: Openers for a reply over passages or documents.
PASSAGE_PREAMBLES = ("Based on the passages provided, here's my analysis:",
                     "After reviewing the documents, here is what I found:",
                     "Based on the information given, here is my assessment.")
CLOSINGS = ("Let me know if you need anything else.", "I hope this helps!",
            "Feel free to ask if you have any other questions.", "Let me know if you'd like me to explain further.")

#: How a label and its value are written (``label``); one per reply, as a model keeps its own layout.
LABEL_KINDS = ("plain", "bold-inside", "bold-outside", "bold-value", "bold-line", "upper", "lower")


def pick(rng: random.Random, options, weights=None):
    """One of ``options`` (a tuple or a dict of weights)."""
    if isinstance(options, dict):
        return rng.choices(list(options), weights=list(options.values()))[0]
    return rng.choices(list(options), weights=weights)[0] if weights else rng.choice(list(options))


def label(name: str, value: str, kind: str, short: bool = True) -> str:
    """``name: value`` in one of ``LABEL_KINDS``; a long value (an explanation) is never bolded whole."""
    if not short and kind in ("bold-value", "bold-line"):
        kind = "bold-inside"
    return {"plain": f"{name}: {value}",
            "bold-inside": f"**{name}:** {value}",
            "bold-outside": f"**{name}**: {value}",
            "bold-value": f"{name}: **{value}**",
            "bold-line": f"**{name}: {value}**",
            "upper": f"{name.upper()}: {value}",
            "lower": f"{name.lower()}: {value}"}[kind]


def heading(name: str, rng: random.Random) -> str:
    return pick(rng, (f"### {name}", f"## {name}", f"**{name}**", f"#### {name}"))


def bold(text: str) -> str:
    return f"**{text}**"


# --------------------------------------------------------------------------------------------------- lists

#: How a list is written when one was asked for.
LIST_STYLES = {"numbered": 3, "paren": 2, "bold-number": 2, "prefixed": 2, "dash": 2, "star": 1, "bold-item": 1,
               "spaced": 1, "restarted": 1, "table": 1}


def render_list(items: list[str], rng: random.Random, *, prefix: str = "Q", column: str = "Question",
                emphasise=None, style: str | None = None) -> tuple[str, str]:
    """``items`` as a numbered / ``1)`` / ``**1.**`` / ``Q1:`` / bulleted / table list (and a few more), items
    unchanged and in order. ``emphasise(item)`` bolds the part of an item a model would ("**1869**: why");
    ``style`` forces one (tests)."""
    style = style or pick(rng, LIST_STYLES)
    if style == "table" and any("|" in item or "\n" in item for item in items):
        style = "numbered"
    if style == "restarted" and len(items) < 4:
        style = "numbered"
    em = emphasise or bold
    n = range(1, len(items) + 1)
    if style == "numbered":
        return "\n".join(f"{k}. {item}" for k, item in zip(n, items)), style
    if style == "paren":
        return "\n".join(f"{k}) {item}" for k, item in zip(n, items)), style
    if style == "bold-number":
        return "\n".join(f"**{k}.** {item}" for k, item in zip(n, items)), style
    if style == "prefixed":
        return "\n".join(f"{prefix}{k}: {item}" for k, item in zip(n, items)), style
    if style == "dash":
        return "\n".join(f"- {item}" for item in items), style
    if style == "star":
        return "\n".join(f"* {item}" for item in items), style
    if style == "bold-item":
        return "\n".join(f"{k}. {em(item)}" for k, item in zip(n, items)), style
    if style == "spaced":
        return "\n\n".join(f"{k}. {item}" for k, item in zip(n, items)), style
    if style == "restarted":  # two sub-lists, each numbered from 1 (a model grouping its list)
        half = (len(items) + 1) // 2
        first = "\n".join(f"{k}. {item}" for k, item in enumerate(items[:half], start=1))
        second = "\n".join(f"{k}. {item}" for k, item in enumerate(items[half:], start=1))
        return f"**Most important:**\n{first}\n\n**Further angles:**\n{second}", style
    rows = "\n".join(f"| {k} | {item} |" for k, item in zip(n, items))
    return f"| # | {column} |\n|---|---|\n{rows}", "table"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (cells must hold no ``|``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


# ----------------------------------------------------------------------------------------- probabilities

#: How a probability is written: 0.8 as "0.8", "80%", ".8", "8/10", "0,8".
PROBABILITY_STYLES = {"decimal": 3, "percent": 3, "leading-dot": 1, "fraction": 1, "decimal-comma": 1}


def probability(p: float, style: str) -> str:
    """``p`` (two decimals at most) in ``style``; a fraction only where it is exact in tenths or hundredths."""
    p = round(p, 2)
    decimal = f"{p:.2f}".rstrip("0").rstrip(".") if p not in (0, 1) else f"{p:.1f}"
    if style == "percent":
        return f"{round(p * 100)}%"
    if style == "leading-dot" and 0 < p < 1:
        return decimal[1:]
    if style == "fraction":
        f = Fraction(round(p * 100), 100)
        return f"{f.numerator * 10 // f.denominator}/10" if 10 % f.denominator == 0 else f"{round(p * 100)}/100"
    if style == "decimal-comma":
        return decimal.replace(".", ",")
    return decimal


#: How a value is set off: ``80%``, ``**80%**``, ``[80%]``, ``(80%)``.
WRAPS = {"bare": 6, "bold": 2, "bracket": 2, "paren": 1}


def wrapped(text: str, kind: str) -> str:
    return {"bare": text, "bold": f"**{text}**", "bracket": f"[{text}]", "paren": f"({text})"}[kind]


def wrap_value(text: str, rng: random.Random) -> tuple[str, str]:
    """A value as written, bare, in bold or in brackets (``WRAPS``)."""
    kind = pick(rng, WRAPS)
    return wrapped(text, kind), kind


# -------------------------------------------------------------------------------------------------- JSON

def as_json(obj: dict, rng: random.Random) -> tuple[str, str]:
    """A JSON object, fenced as models usually fence it, or bare."""
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    if rng.random() < 0.6:
        return f"```json\n{text}\n```", "json-fenced"
    return text, "json"


# ------------------------------------------------------------------------------------------------ frames

def frame(body: str, rng: random.Random, preambles=PREAMBLES, p_preamble: float = 0.4,
          p_closing: float = 0.3) -> tuple[str, list[str]]:
    """``body`` with, now and then, an opener before it and a closing remark after it."""
    styles = []
    if preambles and rng.random() < p_preamble:
        gap = pick(rng, ("\n\n", "\n"), (3, 1))
        body = f"{pick(rng, preambles)}{gap}{body}"
        styles.append("preamble")
    if rng.random() < p_closing:
        body = f"{body}\n\n{pick(rng, CLOSINGS)}"
        styles.append("closing")
    return body, styles
