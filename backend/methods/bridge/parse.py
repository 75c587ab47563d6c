"""Readers of BRIDGE's replies (docs/methods/bridge.md §3-4, §8): the Soft Bias Allocator's probabilities, the
lists of sub-queries, generated answers and reflected questions, and the responder's option. Each returns
``Parsed(value, status, note)`` (``backend.llm.formats``) and never raises.

Two readings of every reply (``backend.methods.reading``); ``method.py`` reads each reply both ways and
``ctx.readings.decide`` takes the run's:

* ``tolerant`` (the default; ``parse_*`` / ``read_*``, the functions BRIDGE's ``TaskSpec`` names): ``exact`` is the
  paper's format (``Probability of retrieving external knowledge: 80%`` lines, ``1. …`` lines, ``Correct Option:
  B``); ``lenient`` reads through what chat models write around it (Markdown, a preamble or closing remarks, bullets,
  ``Q1:``, restarted numbering, a table, a JSON object, a decimal or a fraction, a reply cut at the token limit), the
  note saying what was assumed. The responder's option only from a reply that *chooses* one, the last choice
  winning; "I don't know" only when chosen; a range of percentages is never a probability.
* ``paper`` (``paper_*``): the format the paper's prompts print (spec §4), read literally, with the spec's own rule
  where it gives one: the responder by spec §8.17's regex ``Correct Option:\\s*\\(?([A-D])`` (``paper_option``), the
  allocator by its two ``…: X%`` lines (spec §3 Step 1, ``paper_soft_bias``), the sub-queries, the generator's
  answers (spec §8.9) and the reflection's questions by their ``1. …`` lines (``paper_sub_queries``,
  ``paper_answers``, ``paper_reflection``). Anything else is unreadable.
* ``unreadable`` (either reading): the value is the method's default and the note names it: r_p = 0.5 (spec §8.6);
  no sub-queries (the original question fills every slot, ours); a generator answer count off: one call per
  sub-query (spec §8.9, ``method.py``); no option: an invalid answer that counts as wrong (spec P17), not an
  abstention.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from backend.answers import normalize
from backend.llm import chat_text as ct
from backend.llm.chat_text import (has_markup, json_object, plain, probability, read_list, strip_chatter, table_rows,
                                    truncated)
from backend.llm.formats import IDK, Parsed, exact, is_idk, lenient, unreadable

#: spec §8.6: an allocator reply with no readable probability is 50/50, flagged
DEFAULT_R_P = 0.5
LETTERS = "ABCDEFGH"


def _joined(notes: list[str]) -> str:
    return "; ".join(dict.fromkeys(n for n in notes if n))


def _json_value(text: str) -> dict | list | None:
    """The reply's JSON object, or a bare JSON array (fenced or not)."""
    found = json_object(text)
    if found is not None:
        return found
    body = plain(text).strip()
    if body.startswith("["):
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):   # not JSON, or nested past the parser's depth
            return None
        return value if isinstance(value, list) else None
    return None


# ------------------------------------------------------------------------------------------- soft bias

_EXACT_BIAS = (re.compile(r"^[ \t]*Probability of retrieving external knowledge:[ \t]*(\d{1,3}(?:\.\d+)?)[ \t]*%[ \t.]*$",
                          re.I | re.M),
               re.compile(r"^[ \t]*Probability of answering directly:[ \t]*(\d{1,3}(?:\.\d+)?)[ \t]*%[ \t.]*$",
                          re.I | re.M))
_RETRIEVE_LABEL = re.compile(r"(?:probability|likelihood|chance)[ \t]+(?:of[ \t]+)?(?:retriev\w*|needing[ \t]+retrieval)"
                             r"(?:[ \t]+(?:external[ \t]+)?(?:knowledge|information))?"
                             r"|retriev\w*[ \t]+(?:external[ \t]+knowledge[ \t]+)?(?:probability|likelihood)"
                             r"|\bretriev\w*[ \t]+external[ \t]+knowledge", re.I)
_DIRECT_LABEL = re.compile(r"(?:probability|likelihood|chance)[ \t]+(?:of[ \t]+)?answer\w*[ \t]+directly"
                           r"|direct(?:ly)?[ \t]+answer\w*[ \t]+(?:probability|likelihood)|\banswer\w*[ \t]+directly", re.I)
#: what may stand between a label and its value: an echoed range "[10%-90%]", a "(r_p)", a separator
_BETWEEN = re.compile(r"^[ \t]*(?:[\[(][^\])\n]{0,30}[\])])?[ \t]*(?:[:=|–—-][ \t]*|is[ \t]+|of[ \t]+)?"
                      r"(?:about[ \t]+|approximately[ \t]+|around[ \t]+|~[ \t]*)?(?=[\[(]?[ \t]*[\d.,])", re.I)


#: a range of percentages ("10%-90%", "[10% - 90%]", "10 to 90%", "between 10% and 90%"): the prompt's bounds echoed,
#: never the probability itself
_RANGE = re.compile(r"[\[(]?[ \t]*(?:between[ \t]+)?\d{1,3}(?:\.\d+)?[ \t]*%?[ \t]*(?:[-–—~]|to|and)[ \t]*"
                    r"\d{1,3}(?:\.\d+)?[ \t]*%[ \t]*[\])]?", re.I)


def _probability(text: str) -> tuple[float, str | None] | None:
    """``chat_text.probability``, minus numbers that are no probability (a year, 150%) and minus ranges: "10%-90%
    → I estimate 30%" is 30%, and a bare "10%-90%" (the prompt's bounds echoed) is no probability at all, never its
    first bound nor its midpoint."""
    ranges = [m.group(0).strip() for m in _RANGE.finditer(text)]
    read = probability(_RANGE.sub(" ", text)) if ranges else probability(text)
    if read is None or "out of [0, 1]" in (read[1] or ""):
        return None
    if ranges:
        return read[0], _joined([f"the range {ranges[0]!r} is the prompt's bounds, not a probability: ignored",
                                 read[1] or ""])
    return read


def _labelled_probability(lines: list[str], label: re.Pattern) -> tuple[float, str | None] | None:
    """The probability right after ``label`` (same line, or the next line under a heading-style label)."""
    for i, line in enumerate(lines):
        for m in label.finditer(line):
            rest = line[m.end():]
            if not rest.strip(" \t:=|*-–—"):
                following = next((ln for ln in lines[i + 1:] if ln.strip()), "")
                rest = following if len(following) <= 40 and not (_RETRIEVE_LABEL.search(following)
                                                                    or _DIRECT_LABEL.search(following)) else ""
            between = _BETWEEN.match(rest)
            if between:
                read = _probability(rest[between.end():].split("|")[0])
                if read is not None:
                    return read
    return None


def _json_probabilities(value) -> tuple[tuple[float, str | None] | None, tuple[float, str | None] | None]:
    r = g = None
    if isinstance(value, dict):
        for key, v in value.items():
            if isinstance(v, dict):
                r2, g2 = _json_probabilities(v)
                r, g = r or r2, g or g2
                continue
            k, v = str(key).lower(), str(v)
            if len(v) > 12:           # a reason, not a value
                continue
            if r is None and re.search(r"retriev|external", k):
                r = _probability(v)
            elif g is None and re.search(r"direct", k):
                g = _probability(v)
    return r, g


@ct.bounded
def parse_soft_bias(text: str, **_fields) -> Parsed[tuple[float, float]]:
    """The allocator's reply -> (p_retrieve, p_direct), renormalised to sum to 1 (spec §3 Step 1, ours). Unreadable:
    (0.5, 0.5), the default of spec §8.6."""
    raw = text or ""
    notes: list[str] = []
    found = [p.search(raw) for p in _EXACT_BIAS]
    if all(found):
        r, g = ((float(m.group(1)) / 100, None) for m in found)
    else:
        r, g = _json_probabilities(_json_value(raw))
        if r or g:
            notes.append("read from a JSON object")
        else:
            lines = plain(raw).split("\n")
            r, g = _labelled_probability(lines, _RETRIEVE_LABEL), _labelled_probability(lines, _DIRECT_LABEL)
            if r or g:
                notes.append("read through Markdown" if has_markup(raw) or table_rows(raw) else
                             "labels or values not in the paper's 'Probability of …: X%' lines")
    if r is None and g is None:
        return unreadable((DEFAULT_R_P, 1 - DEFAULT_R_P),
                          "no soft-bias probabilities found; the method used its default: r_p = 0.5 "
                          "(r_p = g_p = 50%)")
    notes += [read[1] for read in (r, g) if read and read[1] and not read[1].startswith("read the percentage")]
    if r is None:
        notes.append("no probability of retrieving external knowledge; taken as 1 − the other")
        r = (1 - g[0], None)
    if g is None:
        notes.append("no probability of answering directly; taken as 1 − the other")
        g = (1 - r[0], None)
    total = r[0] + g[0]
    if total <= 0:
        return unreadable((DEFAULT_R_P, 1 - DEFAULT_R_P),
                          "both probabilities are 0; the method used its default: r_p = 0.5 (r_p = g_p = 50%)")
    if abs(total - 1) > 0.011:
        notes.append(f"the probabilities sum to {total:.0%}, not 100%; renormalised")
    if truncated(raw):
        notes.append("the reply looks cut off at the token limit")
    value = (round(r[0] / total, 4), round(g[0] / total, 4))
    return lenient(value, _joined(notes)) if notes else exact(value)


#: the two lines of the allocator's format (the paper's Allocator prompts, spec §4; spec §3 Step 1 "Parsing"), as
#: printed: case-sensitive, the first of each, a number with "%"
PAPER_BIAS = (re.compile(r"Probability of retrieving external knowledge:[ \t]*(\d+(?:\.\d+)?)%"),
              re.compile(r"Probability of answering directly:[ \t]*(\d+(?:\.\d+)?)%"))


@ct.bounded
def paper_soft_bias(text: str, **_fields) -> Parsed[tuple[float, float]]:
    """The allocator's reply -> (p_retrieve, p_direct), the *paper* reading: spec §3 Step 1 "Parsing" read
    literally, X from ``Probability of retrieving external knowledge: X%`` and Y from ``Probability of answering
    directly: Y%`` (the format the paper's Allocator prompts ask for, §4; its GRPO format reward needs a regex to
    find both, §3 Step 1), r_p = X / (X + Y). Anything else (one line missing, a value without "%", Markdown in the
    label, a JSON object) is unreadable and takes the default of spec §8.6: r_p = g_p = 50%. The first number after
    the label is X: "10%-90% → I estimate 30%" reads 10%."""
    raw = text or ""
    found = [p.search(raw) for p in PAPER_BIAS]
    if not all(found):
        missing = " and ".join(f"'{p.pattern.split(':')[0]}: X%'" for p, m in zip(PAPER_BIAS, found) if m is None)
        return unreadable((DEFAULT_R_P, 1 - DEFAULT_R_P),
                          f"no {missing} line (the paper's format, spec §3 Step 1); the method used its default: "
                          "r_p = 0.5 (r_p = g_p = 50%, spec §8.6)")
    x, y = (float(m.group(1)) for m in found)
    if x + y <= 0:
        return unreadable((DEFAULT_R_P, 1 - DEFAULT_R_P),
                          "both probabilities are 0; the method used its default: r_p = 0.5 (r_p = g_p = 50%)")
    value = (round(x / (x + y), 4), round(y / (x + y), 4))
    return exact(value) if abs(x + y - 100) <= 1.1 else lenient(value, f"the probabilities sum to {x + y:g}%, not "
                                                                         "100%; renormalised (spec §3 Step 1)")


# ----------------------------------------------------------------------------------------------- lists

_HEADING_LINE = re.compile(r"^\W*(?:new[ \t]+)?(?:(?:sub-?)?quer(?:y|ies)|questions?|answers?)\W*$", re.I)
_EXACT_ITEM = re.compile(r"^(\d{1,3})[.)][ \t]+(\S.*?)[ \t]*$")
_NUMBERED_LINE = re.compile(r"^[ \t]*(?:\(?(\d{1,3})[.):\]]|\((\d{1,3})\))[ \t]+(\S.*)$")
_KIND_NOTES = {"numbered": "read the numbered items; the text around them ignored",
               "tagged": "items labelled 'Q1:', 'Q2:' …, not numbered", "bullets": "a bulleted list, not a numbered one",
               "table": "a Markdown table, not a numbered list"}


def _exact_items(raw: str) -> list[str] | None:
    """The items when the reply is just the numbered list asked for (``1. …`` lines numbered 1..k, under at most an
    echoed heading such as "New questions:"); else None."""
    lines = [ln.strip() for ln in raw.strip().split("\n") if ln.strip()]
    if lines and _HEADING_LINE.match(lines[0]):
        lines = lines[1:]
    items = []
    for k, line in enumerate(lines, start=1):
        m = _EXACT_ITEM.match(line)
        if not m or int(m.group(1)) != k:
            return None
        items.append(m.group(2))
    return items or None


def _restarted(text: str) -> bool:
    numbers = [int(m.group(1) or m.group(2)) for m in map(_NUMBERED_LINE.match, plain(text).split("\n")) if m]
    return any(b <= a for a, b in zip(numbers, numbers[1:]))


def _json_strings(value, key: str) -> list[str] | None:
    """The strings of the list a JSON reply holds under a key matching ``key`` (else its only list, else its
    numbered keys "1", "q1" …; or a bare array); a list of objects gives each object's ``key`` (or first) string."""
    if isinstance(value, dict):
        lists = [(k, v) for k, v in value.items() if isinstance(v, list)]
        chosen = next((v for k, v in lists if re.search(key, str(k), re.I)), None)
        if chosen is None and len(lists) == 1:
            chosen = lists[0][1]
        if chosen is None:
            chosen = [v for k, v in value.items()
                      if re.fullmatch(r"[a-z_]{0,9}\d{1,3}", str(k), re.I) and isinstance(v, (str, int, float))] or None
        value = chosen
    if not isinstance(value, list):
        return None
    out = []
    for v in value:
        if isinstance(v, dict):
            v = next((x for k, x in v.items() if re.search(key, str(k), re.I) and isinstance(x, str)), None) or \
                next((x for x in v.values() if isinstance(x, str)), "")
        out.append(str(v).strip())
    return [o for o in out if o] or None


def _count_note(got: int, expected: int | None, what: str, filler: str) -> str | None:
    if not expected or got == expected:
        return None
    if got < expected:
        return f"expected {expected} {what}, got {got}; the method fills the other {expected - got} with {filler}"
    return f"expected {expected} {what}, got {got}; the method keeps the first {expected}"


def _finish(items: list[str], notes: list[str], raw: str, expected: int | None, what: str,
            filler: str) -> Parsed[list[str]]:
    if truncated(raw):
        notes.append("the reply looks cut off at the token limit")
    notes.append(_count_note(len(items), expected, what, filler) or "")
    return lenient(items, _joined(notes)) if _joined(notes) else exact(items)


# ---------------------------------------------------------------------------------------- questions

ORIGINAL_QUESTION = "the original question"
_DIMENSION = re.compile(r"^(?P<label>[^:?\n]{1,40}):[ \t]+(?P<q>\S.*\?)$")   # "Temporal: When was … born?"
_TRAILING_NOTE = re.compile(r"\?[ \t]*[(\[][^()\[\]\n]{1,60}[)\]]$")         # "…? (which)"


def _clean_question(item: str) -> str:
    item = item.strip()
    if item.startswith("[") and item.endswith("]"):          # the template's "[new question 1]", filled in
        item = item[1:-1].strip()
    item = _TRAILING_NOTE.sub("?", item).strip()
    m = _DIMENSION.match(item)
    if m and len(m.group("label").split()) <= 4:             # a dimension label before the question
        item = m.group("q")
    return item


def _question_items(text: str) -> tuple[list[str], list[str]]:
    """(questions, notes) from a list of questions in any chat dress; [] when there is none."""
    notes: list[str] = []
    items = _json_strings(_json_value(text), r"quer|question")
    if items:
        notes.append("read from a JSON object")
    else:
        items, kind = read_list(text)
        if items:
            notes.append(_KIND_NOTES[kind])
            if kind == "numbered" and _restarted(text):
                notes.append("the numbering restarts; every item kept, in order")
        else:
            items = [ln.strip() for ln in plain(strip_chatter(text)).split("\n") if ln.strip().endswith("?")]
            if items:
                notes.append("no list; took the lines that are questions")
    cleaned = [_clean_question(i) for i in items]
    if cleaned != items:
        notes.append("labels or brackets around questions removed")
    return [c for c in cleaned if c], notes


@ct.bounded
def parse_numbered_list(text: str, expected: int | None = None) -> Parsed[list[str]]:
    """A list of questions (the sub-queries) -> the questions in order: ``1. …`` lines (exact), else a numbered list
    in Markdown or with chatter around it, ``Q1:`` items, bullets, a table, a JSON list, or the lines that end in
    "?". Fewer than ``expected``: the note says so (the method fills in with the original question, ours)."""
    raw = text or ""
    items = _exact_items(raw)
    notes: list[str] = []
    if items is None or any(_clean_question(plain(i)) != i for i in items):   # Markdown or labels in the items
        items, notes = _question_items(raw)
    if not items:
        slots = f"each of the {expected}" if expected else "every"
        return unreadable([], f"no questions found; the method used its default: {ORIGINAL_QUESTION} for {slots} "
                              "sub-queries")
    return _finish(items, notes, raw, expected, "questions", ORIGINAL_QUESTION)


# ---------------------------------------------------------------------------------------- reflection

_EXACT_REFLECTION = re.compile(r"^[ \t]*Analysis:(?P<analysis>[^\n]*(?:\n(?![ \t]*New questions:)[^\n]*)*)\n"
                               r"[ \t]*New questions:[ \t]*\n(?P<list>.*)\Z", re.I | re.S)
_QUESTIONS_HEADING = re.compile(r"^[ \t]*\W{0,4}(?:new[ \t]+(?:sub-?)?(?:questions?|quer(?:y|ies))|reconstruct(?:ed)?[ \t]+"
                                r"question[ \t]+list|re(?:constructed|built|formulated|written)[ \t]+(?:sub-?)?"
                                r"(?:questions|queries)|phase[ \t]*2\b)[^\n]{0,80}$", re.I | re.M)
_FIRST_ITEM = re.compile(r"^[ \t]*(?:\(?1[.):\]]|\(1\)|(?:q|question)[ \t]*1[ \t]*[:.)])[ \t]+\S", re.I)
_ANALYSIS_LABEL = re.compile(r"^\W*(?:phase[ \t]*1\W*)?(?:knowledge[ \t]+)?(?:contradiction[ \t]+)?analysis\W{0,3}"
                             r"(?:[:\-–][ \t]*|$)", re.I)


def _analysis(text: str) -> str:
    lines = [ln.strip() for ln in strip_chatter(text).split("\n") if ln.strip()]
    if lines:
        lines[0] = _ANALYSIS_LABEL.sub("", lines[0], count=1).strip()
    return "\n".join(ln for ln in lines if ln)


@ct.bounded
def parse_reflection(text: str, expected: int | None = None) -> Parsed[tuple[str, list[str]]]:
    """A reflection reply -> (the contradiction analysis, the new questions): ``Analysis: …``, ``New questions:``
    and ``1. …`` lines (exact); else a JSON object; else the questions after a "New questions" / "[Reconstruct
    question list]" / "Phase 2" heading, or the reply's last list (its numbering restarted after a numbered
    analysis), the analysis being the text before them. No question: the method's default fills every slot."""
    raw = text or ""
    m = _EXACT_REFLECTION.match(raw.strip())
    items = _exact_items(m.group("list")) if m else None
    if items and all(_clean_question(plain(i)) == i for i in items):
        analysis, notes = m.group("analysis").strip(), []
    else:
        analysis, items, notes = _reflection_parts(raw)
    if not items:
        slots = f"each of the {expected}" if expected else "every"
        return unreadable((analysis, []), f"no new questions found; the method used its default: {ORIGINAL_QUESTION} "
                                          f"for {slots} sub-queries")
    read = _finish(items, notes, raw, expected, "questions", ORIGINAL_QUESTION)
    return Parsed((analysis, read.value), read.status, read.note)


def _reflection_parts(raw: str) -> tuple[str, list[str], list[str]]:
    """(analysis, questions, notes) of a reflection reply not in the exact format."""
    found = _json_value(raw)
    if isinstance(found, dict):
        questions = _json_strings(found, r"quer|question")
        if questions:
            analysis = " ".join(str(v).strip() for k, v in found.items()
                                if isinstance(v, str) and re.search(r"analys|contradict|cause|type", str(k), re.I))
            return analysis, [_clean_question(q) for q in questions], ["read from a JSON object"]
    text = plain(raw)
    headings = list(_QUESTIONS_HEADING.finditer(text))
    if headings:
        before, body = text[:headings[0].start()], text[headings[-1].end():]
        questions, notes = _question_items(body)
        return _analysis(before), questions, ["read the questions under the heading"] + notes
    lines = text.split("\n")
    starts = [i for i, ln in enumerate(lines) if _FIRST_ITEM.match(ln)]
    if starts:
        before, body = "\n".join(lines[:starts[-1]]), "\n".join(lines[starts[-1]:])
        note = "no 'New questions:' heading; read the last list" + (" (its numbering restarts)" if len(starts) > 1 else "")
        questions, notes = _question_items(body)
        return _analysis(before), questions, [note] + [n for n in notes if "restarts" not in n]
    questions, notes = _question_items(text)
    return ("" if questions else _analysis(text)), questions, ["no 'New questions:' heading"] + notes


# ------------------------------------------------------------------------------------ generated answers

IDK_FILLER = f'"{IDK}"'
_ANSWER_LINE = re.compile(r"^[ \t]*(?:\(?\d{1,3}[.)][ \t]*|[-*•][ \t]+)?(?:(?i:(?:final[ \t]+)?answer(?P<plural>s)?)[ \t]*"
                          r"\d{0,3}[ \t]*[:：\-–—]|A\d{1,3}[ \t]*[:.)\-–—]|A[ \t]*:)[ \t]*(?P<v>.*)$")
_ANALYSIS_LINE = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?i:analysis|reasoning|reason|explanation)[ \t]*[:\-–—][ \t]*(?P<v>\S.*)$")
_ECHO_TAG = re.compile(r"^[ \t]*(?:q\d{0,3}|question[ \t]*\d{0,3})[ \t]*[:.)][ \t]*", re.I)
_ECHO_TAIL = re.compile(r"^[ \t:\-–—→=]*(?:(?:answer|a\d{0,3})[ \t]*[:\-–—][ \t]*)?", re.I)


def _labelled_answers(lines: list[str]) -> list[str]:
    """The values of ``Answer: X`` lines (``**Answer:**`` with X on the next line too), in order; an answer with an
    ``Analysis:`` line before it carries that reason as the offline model's lines do (``X: reason``), so the
    Knowledge Scorer compares generated knowledge, not bare names; "I don't know" stays bare."""
    out, reason = [], ""
    for i, line in enumerate(lines):
        analysis = _ANALYSIS_LINE.match(line)
        if analysis:
            reason = analysis.group("v").strip()
            continue
        m = _ANSWER_LINE.match(line)
        if not m:
            continue
        value = m.group("v").strip()
        if not value:
            if m.group("plural"):      # "Answers:", a heading over the list
                continue
            value = next((ln.strip() for ln in lines[i + 1:] if ln.strip()), "")
        if value:
            keep_reason = reason and not is_idk(value) and normalize(reason) != normalize(value)
            out.append(f"{value}: {reason}" if keep_reason else value)
        reason = ""
    return out


def _table_column(text: str, header: str) -> list[str] | None:
    """The cells under the first column whose header matches ``header``, in a Markdown table."""
    rows = table_rows(text)
    column = next((h for h in (rows[0] if rows else {}) if re.search(header, h, re.I)), None)
    return [row[column] for row in rows if row.get(column)] or None if column else None


def _numbered_blocks(lines: list[str]) -> list[tuple[str, str]]:
    """(first line, the lines under it) per numbered item."""
    blocks: list[tuple[str, list[str]]] = []
    for line in lines:
        m = _NUMBERED_LINE.match(line)
        if m:
            blocks.append((m.group(3).strip(), []))
        elif blocks and line.strip():
            blocks[-1][1].append(line.strip())
    return [(first, " ".join(rest)) for first, rest in blocks]


def _without_echo(item: str, below: str, questions: set[str]) -> str:
    """The answer in an item that repeats its sub-query first (``Which year …? 1869``; the question alone, with
    the answer on the lines below it)."""
    head, mark, tail = item.partition("?")
    if not mark or (questions and normalize(_ECHO_TAG.sub("", head)) not in questions) or \
            (not questions and not _ECHO_TAG.match(head)):
        return item
    answer = _ECHO_TAIL.sub("", tail, count=1).strip() or _ECHO_TAIL.sub("", below, count=1).strip()
    return answer or IDK


@ct.bounded
def parse_answers(text: str, sub_queries: Sequence[str] = ()) -> Parsed[list[str]]:
    """The multi-query generator's reply -> one answer per sub-query, in order: ``1. answer`` lines (exact); else a
    JSON list, the ``Answer:`` lines of a reply laid out as question / ``Analysis:`` / ``Answer:`` (the analysis
    kept after the answer, as ``answer: reason``), the Answer
    column of a table, numbered items (a repeated sub-query before its answer dropped), ``A1:`` items, bullets, or
    one "I don't know" for all. The sub-queries themselves are never taken for answers."""
    raw = text or ""
    questions = {normalize(str(q).rstrip("?")) for q in sub_queries or [] if str(q).strip()}
    expected = len(list(sub_queries or [])) or None
    lines = plain(raw).split("\n")
    notes: list[str] = []
    blocks = None
    items = _exact_items(raw)
    if items is None or any(plain(i) != i or _ANSWER_LINE.match(i) for i in items):
        items, notes = _json_strings(_json_value(raw), r"answer"), ["read from a JSON object"]
    if not items:
        items, notes = _labelled_answers(lines), ["read the 'Answer:' lines"]
    if not items:
        items, notes = _table_column(raw, r"answer"), ["read the Answer column of a Markdown table"]
    if not items:
        blocks = _numbered_blocks(lines)
        items, notes = [first for first, _ in blocks], [_KIND_NOTES["numbered"]]
    if not items:
        items, kind = read_list(raw)
        notes = [_KIND_NOTES.get(kind, "")]
    if not items and is_idk(plain(strip_chatter(raw)).strip()) and raw.strip():
        items, notes = [IDK] * (expected or 1), ["one \"I don't know\" for every question"]
    if not items:
        slots = f"each of the {expected}" if expected else "every"
        return unreadable([], f"no answers found; the method used its default: {IDK_FILLER} for {slots} sub-queries")
    below = [rest for _, rest in blocks] if blocks else [""] * len(items)
    answers = [_without_echo(item, rest, questions) for item, rest in zip(items, below)]
    if answers != items:
        notes.append("the sub-queries repeated before the answers were dropped")
    return _finish(answers, notes, raw, expected, "answers", IDK_FILLER)


# ------------------------------------------------------------------------------------------- responder

_P17 = re.compile(r"(?i:correct[ \t]+option)[ \t]*:[ \t]*\(?(?P<l>[A-H])(?![\w'])")   # spec §8 P17, any case
_LETTER = r"[ \t]*[\(\[]?[ \t]*(?:(?i:option|choice)[ \t]+)?(?P<l>[A-H])(?![\w'])"
#: Each rule finds a *choice* of a letter; of all the choices a reply makes, the last one wins (tolerant reading).
_OPTION_RULES = (
    ("the 'Correct Option' label in another form",
     re.compile(r"(?i:correct[ \t]+(?:option|answer|choice|letter))[ \t]*(?:(?i:is)[ \t]+|[:=\-–][ \t]*)?" + _LETTER)),
    ("a lower-case letter", re.compile(r"(?i:correct[ \t]+option|answer)[ \t]*[:=][ \t]*[\(\[]?(?P<l>[a-h])[.)\]]?[ \t]*$",
                                      re.M)),
    ("the letter after an 'Answer:' label",
     re.compile(r"(?i:(?:final[ \t]+)?(?:answer|choice|selection|selected[ \t]+option|option|letter))[ \t]*"
                r"(?:(?i:is)[ \t]+|[:=\-–][ \t]*)" + _LETTER)),
    ("the letter of a chosen option in words", re.compile(r"(?i:choose|chose|select|pick|go[ \t]+with|opt[ \t]+for)[ \t]+" + _LETTER)),
    ("an option called correct", re.compile(r"(?:(?i:option)[ \t]+)?(?P<l>[A-H])(?![\w'])[ \t]+(?i:is[ \t]+(?:the[ \t]+)?"
                                            r"(?:correct|right|best)\b)")),
    ("a bare option letter", re.compile(r"\A\W*(?:(?i:option)[ \t]+)?(?P<l>[A-Ha-h])\W*\Z")),
    ("the letter that starts the reply", re.compile(r"\A\W{0,2}\(?(?P<l>[A-H])[.):][ \t]+\S")),
    ("the letter after a colon that ends a line",
     re.compile(r"[:=][ \t]*[\(\[]?(?P<l>[A-H])[\)\]]?[.!]?[ \t]*$", re.M)),
)
#: a choice under a negation is none: "I did not pick A", "I wouldn't choose A"
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\bno)[ \t]+(?:\w+[ \t]+)?\Z", re.I)
#: a choice of an option by its text: "The answer is Bianca Ryan", "Correct Option: I don't know", "I pick 'X'"
_TEXT_FRAME = re.compile(r"(?:(?:correct|right|best|final|my)[ \t]+)?(?:option|answer|choice|selection)[ \t]*"
                         r"(?:is[ \t]*:?|[:=\-–])[ \t]*"
                         r"|\b(?:choose|chose|select|pick|go[ \t]+with|opt[ \t]+for)[ \t]+"
                         r"(?:the[ \t]+)?(?:option[ \t]+)?",
                         re.I)
#: an option named by its letter *and* its text, which must agree: "C) I don't know", "I don't know (C)"
_PAIR_BEFORE = re.compile(r"^[ \t]*[\(\[]?(?P<l>[A-H])[.):\]][ \t]+(?P<t>\S[^\n]*)$", re.M)
_PAIR_AFTER = re.compile(r"[\(\[](?P<l>[A-H])[\)\]]")   # the text is the line before it (``_choices``)
_ONE_OPTION = re.compile(r"\b(?i:option)[ \t]+(?P<l>[A-H])(?![\w'])")
_NEGATION_WORDS = re.compile(r"\b(?:not|no|never|neither|nor|wrong|incorrect|false|cannot)\b|n't\b", re.I)
_LETTER_PREFIX = re.compile(r"^\s*\(?[A-Ha-h][.):]\s+")
INVALID_NOTE = ("the method used its default: no option, an invalid answer that counts as wrong (spec P17), not an "
                "abstention")


def _option_texts(options: Sequence[str] | None, letters: str) -> list[str]:
    return [normalize(_LETTER_PREFIX.sub("", str(o))) for o in list(options or [])[:len(letters)]]


def _starts_with_option(text: str, texts: list[str]) -> int | None:
    """The option whose (normalised) text ``text`` starts with; the longest when several do."""
    said = normalize(text)
    hits = [k for k, t in enumerate(texts) if t and (said == t or said.startswith(t + " "))]
    return max(hits, key=lambda k: len(texts[k])) if hits else None


def _choices(body: str, letters: str, texts: list[str]) -> list[tuple[int, int, str]]:
    """Every choice of an option the reply makes: (position, option, how it was read), in no particular order."""
    out = []
    for why, rule in _OPTION_RULES:
        for m in rule.finditer(body):
            letter = m.group("l").upper()
            if letter in letters and not _NEGATED.search(body[max(0, m.start() - 24):m.start()]):
                out.append((m.start("l"), letters.index(letter), why))
    for m in _TEXT_FRAME.finditer(body):
        k = _starts_with_option(body[m.end():m.end() + 200].split("\n", 1)[0].lstrip(" \t\"'“‘*[("), texts)
        if k is not None and not _NEGATED.search(body[max(0, m.start() - 24):m.start()]):
            out.append((m.end(), k, "an option chosen by its text"))
    for rule in (_PAIR_BEFORE, _PAIR_AFTER):
        for m in rule.finditer(body):
            k = letters.find(m.group("l"))
            if rule is _PAIR_BEFORE:
                said = normalize(m.group("t")[:200])
            else:
                said = normalize(body[max(body.rfind("\n", max(0, m.start() - 200), m.start()) + 1, m.start() - 200):
                                      m.start()])
            if 0 <= k < len(texts) and texts[k] and (said.startswith(texts[k]) if rule is _PAIR_BEFORE
                                                    else said.endswith(texts[k])):
                out.append((m.start("l"), k, "an option named by its letter and its text"))
    return out


def _negated_sentence(body: str, text: str, idk_text: str | None) -> bool:
    """Is ``text`` (normalised) named only in sentences that negate something ("… is not the winner")?"""
    sentences = [normalize(s) for s in re.split(r"(?<=[.!?])\s+|\n", body) if s.strip()]
    named = [s for s in sentences if f" {text} " in f" {s} "]
    strip = (lambda s: s.replace(idk_text, " ")) if idk_text else (lambda s: s)
    return bool(named) and all(_NEGATION_WORDS.search(strip(s).replace(text, " ")) for s in named)


def _by_mention(body: str, letters: str, texts: list[str]) -> tuple[int, str] | None:
    """The one option the reply names (its text, or 'Option X') and does not negate, when it makes no choice in so
    many words ("… shows that the winner was Bianca Ryan."). Never the "I don't know" option: a reply that only says
    "I don't know" declines to choose (tolerant reading, [ours]); naming it still makes another option ambiguous."""
    said = f" {normalize(plain(body))} "
    hits = [k for k, t in enumerate(texts) if t and f" {t} " in said]
    idk = next((texts[k] for k in hits if is_idk(texts[k])), None)
    if len(hits) == 1 and not idk and not _negated_sentence(body, texts[hits[0]], None):
        return hits[0], f"the reply names option {letters[hits[0]]}'s text"
    if hits:
        return None
    named = {m.group("l") for m in _ONE_OPTION.finditer(body) if m.group("l") in letters}
    if len(named) == 1:
        letter = named.pop()
        sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n", body) if re.search(rf"\b(?i:option)[ \t]+{letter}\b", s)]
        if not all(_NEGATION_WORDS.search(s) for s in sentences):
            return letters.index(letter), "the only option named ('Option X')"
    return None


@ct.bounded
def parse_option(text: str, n_options: int = 4, options: Sequence[str] | None = None) -> Parsed[int | None]:
    """The responder's reply -> the 0-based option, the *tolerant* reading: an option only from a reply that chooses
    one. ``Correct Option: X`` alone (exact, spec P17's regex); else every choice the reply makes, in any dress
    (``**Correct Option:** B``, ``Answer: B``, ``B``, ``(B)``, ``Option B``, ``The correct option is B.``, ``I pick
    B``, ``…: B`` ending a line, ``The answer is Bianca Ryan``, ``C) I don't know``, a JSON object), the *last* one
    winning ("I would pick A, but D is safer: D" is D); else the one option whose text the reply names and does not
    negate. The "I don't know" option only when the reply chooses it (by its letter, or its text after a label or a
    verb of choosing): a bare "I don't know" chooses nothing. None: no readable option, an invalid answer (spec
    P17), which counts as wrong and is not an abstention."""
    raw = text or ""
    letters = LETTERS[:max(1, min(n_options, len(LETTERS)))]
    texts = _option_texts(options, letters)
    found = _json_value(raw)
    if isinstance(found, dict):
        value = next((str(v) for k, v in found.items() if re.search(r"option|answer|choice", str(k), re.I)), None)
        read = parse_option(value, n_options, options) if value is not None else None
        if read is not None and read.value is not None:
            return lenient(read.value, "read from a JSON object")
    body = strip_chatter(plain(raw)).strip()
    choices = _choices(body, letters, texts)
    # the last choice wins; of two at one place, the rule listed first (``_OPTION_RULES``' order)
    choices = [c for _, c in sorted(enumerate(choices), key=lambda e: (e[1][0], -e[0]))]
    p17 = [m for m in _P17.finditer(raw) if m.group("l") in letters]
    if p17 and len({k for _, k, _ in choices} | {letters.index(p17[-1].group("l"))}) == 1:
        m = p17[-1]
        line = raw[raw.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0]
        if not has_markup(line):
            return exact(letters.index(m.group("l")))
    if choices:
        _, k, why = choices[-1]
        notes = [f"no 'Correct Option: X' line alone; read {why}"]
        earlier = list(dict.fromkeys(letters[j] for _, j, _ in choices[:-1] if j != k))
        if earlier:
            notes.append(f"a later choice ({letters[k]}) overrides an earlier one ({', '.join(earlier)})")
        return lenient(k, "; ".join(notes))
    read = _by_mention(body, letters, texts)
    if read is not None:
        return lenient(read[0], f"no option letter; {read[1]}")
    if is_idk(body) and any(is_idk(t) for t in texts):
        why = "the reply only says it does not know, choosing no option (not even \"I don't know\")"
    else:
        why = "the reply is cut off before an option" if truncated(raw) else "no option chosen"
    return unreadable(None, f"{why}; {INVALID_NOTE}")


#: spec §8.17 (P17), character for character: case-sensitive, the first match (``re.search``)
PAPER_OPTION = r"Correct Option:\s*\(?([A-D])"


@ct.bounded
def paper_option(text: str, options: Sequence[str] = (), **_fields) -> Parsed[int | None]:
    """The responder's reply -> the 0-based option, the *paper* reading: spec §8.17 (item 17 of the ambiguity list,
    "Responder parsing"): the regex ``Correct Option:\\s*\\(?([A-D])`` (``PAPER_OPTION``; the paper's Responder
    prompt, §4, asks for exactly ``Correct Option: [Letter]``); if it fails, the answer is invalid (counted wrong,
    not a refusal). The first match counts, case matters, nothing else is read: ``**Correct Option:** B``, ``Answer:
    B``, ``correct option: b`` and "I don't know" are invalid, and ``Correct Option: Bianca Ryan`` is B (the regex
    reads the first letter). The "I don't know" option only when the options hold it and the regex picks its letter.
    [ours] A question with more than four options (TRD always has four) widens ``[A-D]`` to its letters (up to H); a
    letter past the question's options is invalid."""
    raw = text or ""
    n = len(options or []) or 4
    letters = LETTERS[:max(1, min(n, len(LETTERS)))]
    span = "A-D" if len(letters) <= 4 else f"A-{letters[-1]}"
    m = re.search(PAPER_OPTION.replace("A-D", span), raw)
    if m is None:
        return unreadable(None, f"no match for the paper's 'Correct Option: X' (spec §8.17); {INVALID_NOTE}")
    if m.group(1) not in letters:
        return unreadable(None, f"'Correct Option: {m.group(1)}' names none of the {n} options; {INVALID_NOTE}")
    return exact(letters.index(m.group(1)))

# ------------------------------------------------------------------------------- the paper's list formats

#: a numbered item as the paper's Sub-query Generation and Reflection prompts print their output (spec §4: "1. [New
#: Question 1]" …) and as spec §8.9 reads the generator's answers: a number, ".", a space, the item; one a line
_PAPER_ITEM = re.compile(r"^[ \t]*(\d{1,3})\.[ \t]+(\S[^\n]*?)[ \t]*$", re.M)
_PAPER_HEADING = re.compile(r"^[ \t]*New questions:[ \t]*$", re.I | re.M)


def _paper_items(text: str, expected: int | None, what: str, filler: str, default: str) -> Parsed[list[str]]:
    items = [m.group(2) for m in _PAPER_ITEM.finditer(text or "")]
    if not items:
        return unreadable([], f"no '1. …' lines (the paper's format); the method used its default: {default}")
    note = _count_note(len(items), expected, what, filler)
    return lenient(items, note) if note else exact(items)


@ct.bounded
def paper_sub_queries(text: str, n: int | None = None, **_fields) -> Parsed[list[str]]:
    """The sub-query generator's reply -> the questions, the *paper* reading: only the ``1. …`` lines of the paper's
    Sub-query Generation format (spec §4, "New Questions: 1. [New Question 1] … {number}. [New Question {number}]"),
    in order, each as written; no such line: the method's default (the original question in every slot, ours).
    Markdown (``**1.**``), ``1)``, bullets, ``Q1:`` and JSON are not the format and are not read."""
    expected = _count(n)
    slots = f"each of the {expected}" if expected else "every"
    return _paper_items(text, expected, "questions", ORIGINAL_QUESTION, f"{ORIGINAL_QUESTION} for {slots} sub-queries")


@ct.bounded
def paper_answers(text: str, sub_queries: Sequence[str] = (), **_fields) -> Parsed[list[str]]:
    """The multi-query generator's reply -> its answers, the *paper* reading: the ``1. …`` lines only, as spec §8.9
    reads them ("parse numbered answers"; the paper's prompt ends "Answers:", our prompt asks for a numbered list,
    one line per question), each as written. A count other than the sub-queries' sends the method to one call per
    sub-query (spec §8.9), in either reading."""
    expected = len(list(sub_queries or [])) or None
    slots = f"each of the {expected}" if expected else "every"
    return _paper_items(text, expected, "answers", IDK_FILLER, f"{IDK_FILLER} for {slots} sub-queries")


@ct.bounded
def paper_reflection(text: str, n: int | None = None, **_fields) -> Parsed[tuple[str, list[str]]]:
    """A reflection reply -> (analysis, new questions), the *paper* reading: the paper's Reflection output format
    (spec §4: the analysis, then "New questions:" and ``1. …`` lines): the ``1. …`` lines after the last "New
    questions:" line ([ours]: in any case, a heading's case carries no meaning), the analysis the text before it
    (an ``Analysis:`` label dropped). No such heading or no such line after it: the method's default (the original
    question in every slot, ours)."""
    raw = text or ""
    expected = _count(n)
    slots = f"each of the {expected}" if expected else "every"
    headings = list(_PAPER_HEADING.finditer(raw))
    if not headings:
        return unreadable(("", []), f"no 'New questions:' line (the paper's format); the method used its default: "
                                    f"{ORIGINAL_QUESTION} for {slots} sub-queries")
    analysis = re.sub(r"^[ \t]*Analysis:[ \t]*", "", raw[:headings[-1].start()].strip(), flags=re.I).strip()
    read = _paper_items(raw[headings[-1].end():], expected, "questions", ORIGINAL_QUESTION,
                        f"{ORIGINAL_QUESTION} for {slots} sub-queries")
    return Parsed((analysis, read.value), read.status, read.note)


# ------------------------------------------------------------------------------------- the TaskSpec readers

def _count(n) -> int | None:
    try:
        return int(n) if n is not None else None
    except (TypeError, ValueError):
        return None


@ct.bounded
def read_sub_queries(text: str, n: int | None = None, **_fields) -> Parsed[list[str]]:
    return parse_numbered_list(text, _count(n))


@ct.bounded
def read_answers(text: str, sub_queries: Sequence[str] = (), **_fields) -> Parsed[list[str]]:
    return parse_answers(text, sub_queries)


@ct.bounded
def read_reflection(text: str, n: int | None = None, **_fields) -> Parsed[tuple[str, list[str]]]:
    return parse_reflection(text, _count(n))


@ct.bounded
def read_option(text: str, options: Sequence[str] = (), **_fields) -> Parsed[int | None]:
    return parse_option(text, len(options or []) or 4, options)
