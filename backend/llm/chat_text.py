"""What chat models wrap around the value a prompt asked for, and how to see through it. Shared by every reader
(``backend.llm.formats`` and the methods' ``parse`` modules): Markdown emphasis and headings, code fences, a
preamble ("Sure! Here is the answer.") or closing remarks ("Let me know if…"), labels in any case with the colon
inside or outside the bold, numbered / bulleted / ``Q1:`` lists and Markdown tables, percentages, fractions,
leading-dot decimals and decimal commas, a JSON object, a reply cut at the token limit.

Each helper is total (never raises) and linear in the reply's length: every pattern is anchored to one line or
uses bounded, non-nested quantifiers, since the readers run on every model call.
"""

from __future__ import annotations

import ast
import functools
import json
import re

# --- plain text -------------------------------------------------------------------------------------------------

_CHARS = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"',
                        "\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u2009": " ", "\u200a": " ", "\u3000": " ",
                        "\u200b": "", "\u200c": "", "\u200d": "", "\ufeff": "", "\r": ""})
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)[\w+.-]*[ \t]*$", re.M)
_FENCE = re.compile(r"```(?:json|yaml|text|markdown|md|python)?", re.I)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]+|$)(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_RULE = re.compile(r"^[ \t]*(?:-{3,}|\*{3,}|_{3,}|={3,})[ \t]*$", re.M)
_BOLD = re.compile(r"(\*\*|__)(?=\S)([^\n]*?\S)\1")
_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])([^\n*]*?[^\s*])\*(?![\w*])")
_UNDER = re.compile(r"(?<![\w_])_(?=[^\s_])([^\n_]*?[^\s_])_(?![\w_])")
_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")   # not the `` … '' quotes of tokenised text
_STRAY = re.compile(r"\*\*|__")


def plain(text: str | None) -> str:
    """``text`` without Markdown emphasis (``**x**``, ``__x__``, ``*x*``, ``_x_`` around words; not inside words or
    numbers such as ``snake_case`` or ``2*3*4``), inline code marks, heading markers, code fences, blockquote marks
    and horizontal rules; curly quotes straightened, non-breaking and zero-width spaces normalised. Keeps the line
    structure (a removed fence or rule leaves an empty line)."""
    t = (text or "").translate(_CHARS)
    t = _FENCE_LINE.sub("", t)
    t = _FENCE.sub("", t)
    t = _RULE.sub("", t)
    t = _QUOTE.sub("", t)
    t = _HEADING.sub(r"\1", t)
    for _ in range(2):          # bold inside italics and the reverse
        t = _BOLD.sub(r"\2", t)
        t = _STAR.sub(r"\1", t)
        t = _UNDER.sub(r"\1", t)
    t = _CODE.sub(r"\1", t)
    t = _STRAY.sub("", t)      # an unpaired ** (a reply cut mid-bold)
    return "\n".join(line.rstrip() for line in t.split("\n"))


def normalise(text: str | None) -> str:
    """``text`` with curly quotes straightened and odd spaces normalised, nothing else (what ``plain`` does besides
    removing Markdown)."""
    return (text or "").translate(_CHARS)


def has_markup(text: str | None) -> bool:
    """True when ``plain`` removes Markdown from ``text`` (not merely straightens its quotes or spaces)."""
    return plain(text).strip() != "\n".join(line.rstrip() for line in normalise(text).split("\n")).strip()


# --- chatter ----------------------------------------------------------------------------------------------------

_INTERJECTION = (r"(?:sure(?:\s+thing)?|certainly|of\s+course|absolutely|okay|ok|alright|all\s+right"
                 r"|great(?:\s+question)?|good\s+question|no\s+problem|got\s+it|understood|yes,\s+of\s+course"
                 r"|happy\s+to\s+help"
                 r"|i'?d\s+be\s+(?:happy|glad)\s+to\s+help(?:\s+with\s+(?:that|this))?)")
_PREAMBLE = re.compile(
    r"^\W{0,3}(?:"
    + _INTERJECTION + r"[\s!.,]*"
    r"|[^:\n]{0,120}\b(?:here(?:'s|\s+(?:is|are))|below\s+(?:is|are)|the\s+following\s+(?:is|are))"
    r"\b[^:\n]{0,120}[:.!]?"
    r"|(?:based\s+on|according\s+to|after\s+(?:reviewing|analy[sz]ing|reading|considering)|looking\s+at|from)"
    r"\b[^\n]{0,160}:"
    r"|(?:let\s+me|i'?ll|i\s+will|let's|to\s+answer\s+(?:this|the\s+question))\b[^:\n]{0,120}[:.]"
    r")\s*$", re.I)
_LEADING_INTERJECTION = re.compile(r"^" + _INTERJECTION + r"[!.]\s+(?=\S)", re.I)
_CLOSING = re.compile(
    r"^\W{0,3}(?:let\s+me\s+know|please\s+let\s+me\s+know|i\s+hope\s+(?:this|that|it)|hope\s+(?:this|that|it)"
    r"|feel\s+free|if\s+you\s+(?:have|need|want|would\s+like)|is\s+there\s+anything\s+else|happy\s+to\s+help"
    r"|good\s+luck|glad\s+to\s+help|would\s+you\s+like\s+me)\b", re.I)
_NOTE = re.compile(r"^\W{0,3}\(?(?:note|n\.?b\.?|disclaimer|please\s+note)\b\s*[:,-]", re.I)
_NOTE_TOPIC = re.compile(r"\b(?:answer|passage|document|context|information|question|response|reply|source|"
                         r"provided|above|knowledge|confiden|certain|verify|data|training)", re.I)


def _is_preamble(line: str) -> bool:
    return bool(_PREAMBLE.match(normalise(line)))     # "Here’s…" as "Here's…"


def _is_closing(line: str) -> bool:
    line = normalise(line)
    return bool(_CLOSING.match(line)) or bool(_NOTE.match(line) and _NOTE_TOPIC.search(line))


def strip_chatter(text: str | None) -> str:
    """``text`` without a leading preamble ("Sure! Here is the answer.", "Certainly!", "Here's my analysis:",
    "Based on the passages provided, …:") and trailing closing remarks ("Let me know if…", "I hope this helps",
    a "Note: …" about the answer or the sources). Conservative: a line is dropped only when other content
    remains, and a leading "Sure!" is cut from a line that goes on ("Sure! Paris." -> "Paris.")."""
    lines = (text or "").split("\n")
    content = [i for i, line in enumerate(lines) if line.strip()]
    while len(content) > 1 and _is_preamble(lines[content[0]]):
        content.pop(0)
    while len(content) > 1 and _is_closing(lines[content[-1]]):
        content.pop()
    if not content:
        return (text or "").strip()
    kept = lines[content[0]:content[-1] + 1]
    kept[0] = _LEADING_INTERJECTION.sub("", kept[0].strip())
    return "\n".join(kept).strip()


def has_chatter(text: str | None) -> bool:
    """True when ``strip_chatter`` would change ``text`` (beyond surrounding whitespace)."""
    return strip_chatter(text) != (text or "").strip()


# --- labels -----------------------------------------------------------------------------------------------------

_LABEL_SEP = r"(?:[ \t]*[:：=][ \t]*|[ \t]+[-–—][ \t]*|[ \t]*[–—][ \t]*)"
# a line that is another of a reply's own labels (a heading's value is then missing, not that line); a document's
# "File : …" or "Find sources: …" under a heading is a value
_LINE_LABEL = re.compile(r"^(?:final[ \t]+|all[ \t]+correct[ \t]+)?(?:answers?|explanation|reason(?:ing)?|evidence|"
                         r"analysis|justification|confidence|probability|(?:correct[ \t]+)?option|decision|note|"
                         r"summary|step[ \t]*\d+|group[ \t]*\d+|document[ \t]*\d+|q\d+|query[ \t]*\d+)[ \t]*:", re.I)


def _label_pattern(label: str) -> str:
    words = [re.escape(w) for w in label.split()]
    return r"[ \t]+".join(words)


def _next_value(lines: list[str], start: int) -> tuple[int, str] | None:
    for i in range(start, len(lines)):
        if lines[i].strip():
            return None if _LINE_LABEL.match(lines[i].strip()) else (i, lines[i].strip())
    return None


def _find_label(lines: list[str], labels: tuple[str, ...]) -> tuple[int, str] | None:
    """(index of the line the value starts on, the value) for the first of ``labels`` found."""
    for label in labels:
        head = re.compile(r"^[ \t]*(?:[-*•+][ \t]+|\d{1,2}[.)][ \t]+)?\[?(?:the[ \t]+)?" + _label_pattern(label)
                          + r"\]?(?:" + _LABEL_SEP + r"(?P<v>.*)|[ \t]*$)", re.I)
        for i, line in enumerate(lines):
            m = head.match(line)
            if m:
                value = (m.group("v") or "").strip()
                found = (i, value) if value else _next_value(lines, i + 1)
                if found:
                    return found
    for label in labels:
        inline = re.compile(r"(?:^|[.;:!?)][ \t]+|[ \t]{2,}|\|[ \t]*)" + _label_pattern(label)
                            + r"[ \t]*:[ \t]*(?P<v>\S.*)$", re.I)
        for i, line in enumerate(lines):
            m = inline.search(line)
            if m:
                return i, m.group("v").strip()
    return None


def labelled(text: str | None, *labels: str) -> str | None:
    """The value after the first of ``labels`` found (in the order given): ``Answer: X``, ``**Answer:** X``,
    ``**Answer**: X``, ``Answer - X``, ``[Answer]: X``, ``- Answer: X``, or a heading ``### Answer`` with the
    value on the next non-empty line; any case; Markdown removed. A label at a line's start wins; else one after a
    sentence inside a line (``… so. Answer: X``, ``Agent 1: Answer: X``, with a colon). Returns the rest of that
    line, trimmed, or None."""
    found = _find_label(plain(text).split("\n"), labels)
    return found[1] if found else None


def after_label(text: str | None, *labels: str, until: tuple[str, ...] = ()) -> str | None:
    """Everything after the first of ``labels`` found (as ``labelled`` finds it): the rest of its line and the lines
    below, up to a line that starts with one of the ``until`` labels, trimmed (an explanation or evidence that runs
    over several lines). None without the label."""
    lines = plain(text).split("\n")
    found = _find_label(lines, labels)
    if found is None:
        return None
    i, value = found
    below = lines[i + 1:]
    if until:
        names = "|".join(map(_label_pattern, until))
        stop = re.compile(r"^[ \t]*(?:[-*•+][ \t]+)?(?:" + names + r")[ \t]*(?:[:：]|$)", re.I)
        end = next((k for k, line in enumerate(below) if stop.match(line)), len(below))
        below = below[:end]
    return "\n".join([value] + below).strip()


# --- lists ------------------------------------------------------------------------------------------------------

_NUMBERED = re.compile(r"^[ \t]*(?:\(?\d{1,3}[.):\]]|\(\d{1,3}\)|#\d{1,3}[.:)]?|\[\d{1,3}\])[ \t]+(?P<item>\S.*)$")
_TAGGED = re.compile(r"^[ \t]*(?:q|query|question|sub-?[ \t]?(?:query|question)|item|new[ \t]+question)[ \t]*#?"
                     r"[ \t]*\d{1,3}[ \t]*[:.)-][ \t]*(?P<item>\S.*)$", re.I)
_BULLET = re.compile(r"^[ \t]*[-*•+‣◦▪▸►][ \t]+(?P<item>\S.*)$")
_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_INDEX_CELL = re.compile(r"^(?:#|no\.?|nr\.?|index|id|rank|\d{1,3}\.?|q\d{1,3})$", re.I)
_ITEM_HEADER = re.compile(r"question|quer|answer|item|passage|text", re.I)
_QUOTES = ('"', "'")


def _clean_item(item: str) -> str:
    item = item.strip()
    if len(item) > 1 and item[0] == item[-1] and item[0] in _QUOTES:
        item = item[1:-1].strip()
    return item


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _table_items(lines: list[str]) -> list[str]:
    rows = [line for line in lines if _TABLE_ROW.match(line) or _TABLE_RULE.match(line)]
    if not rows:
        return []
    rule = next((i for i, r in enumerate(rows) if _TABLE_RULE.match(r)), None)
    header = _cells(rows[rule - 1]) if rule else []
    body = [_cells(r) for r in (rows[rule + 1:] if rule is not None else rows) if not _TABLE_RULE.match(r)]
    column = next((i for i, h in enumerate(header) if _ITEM_HEADER.search(h)), None)
    items = []
    for cells in body:
        if column is not None and column < len(cells) and cells[column]:
            items.append(cells[column])
            continue
        values = [c for c in cells if c and not _INDEX_CELL.match(c)]
        if values:
            items.append(values[-1])
    return [_clean_item(i) for i in items if i.strip()]


def read_list(text: str | None) -> tuple[list[str], str | None]:
    """The items of the reply's list and what kind it was: ``"numbered"`` (``1.``, ``1)``, ``(1)``, ``**1.**``,
    restarted numbering kept in order), ``"tagged"`` (``Q1:``, ``Query 1:``, ``Sub-query 1:``), ``"bullets"``
    (``-``, ``*``, ``•``) or ``"table"`` (a Markdown table: one item per body row, the cell under a header like
    question / query / answer, else the row's last non-index cell); ``([], None)`` without a list. Numbered items
    win over bullets nested under them; lines that are not items are ignored."""
    lines = plain(text).split("\n")
    for kind, pattern in (("numbered", _NUMBERED), ("tagged", _TAGGED), ("bullets", _BULLET)):
        items = [_clean_item(m.group("item")) for m in map(pattern.match, lines) if m]
        items = [i for i in items if i]
        if items:
            return items, kind
    items = _table_items(lines)
    return (items, "table") if items else ([], None)


def list_items(text: str | None) -> list[str]:
    """The items of the reply's list (see ``read_list``), markup stripped."""
    return read_list(text)[0]


def table_rows(text: str | None) -> list[dict[str, str]]:
    """The body rows of the reply's first Markdown table, each as {lower-cased header: cell}, markup stripped; []
    without a table that has a header row (a reader picks the columns it needs by header: "answer", "documents"…)."""
    rows = [line for line in plain(text).split("\n") if _TABLE_ROW.match(line) or _TABLE_RULE.match(line)]
    rule = next((i for i, r in enumerate(rows) if _TABLE_RULE.match(r)), None)
    if not rule:
        return []
    header = [h.lower() for h in _cells(rows[rule - 1])]
    body = [_cells(r) for r in rows[rule + 1:] if not _TABLE_RULE.match(r)]
    return [dict(zip(header, cells)) for cells in body if any(cells)]


# --- numbers ----------------------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![\w.,/-])(?P<num>0,\d+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?|[.,]\d+)"
    r"(?:[ \t]*(?P<pct>%|percent\b|per[ \t]?cent\b)|[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>\d+(?:\.\d+)?))?"
    r"(?![\w%])", re.I)


def _value(token: str) -> tuple[float, str | None]:
    """A number token's value and what was assumed: a decimal comma, or thousands separators."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", token) and not token.startswith("0,"):
        return float(token.replace(",", "")), None
    if "," in token:
        return float(token.replace(",", ".")), f"read the decimal comma in {token!r} as a decimal point"
    return float(token), None


def _numbers(text: str):
    for m in _NUMBER.finditer(text or ""):
        try:
            value, note = _value(m.group("num"))
        except ValueError:
            continue
        yield m, value, note


def number(text: str | None) -> tuple[float, str | None] | None:
    """The first number in ``text``: ``0.8``, ``.8``, ``0,8`` (decimal comma), ``3,559`` (thousands), ``80%``
    (-> 80.0, noted as a percentage), ``7/10`` and ``8 out of 10`` (-> the fraction's value). Returns (value, note);
    the note says what was assumed, None when ``text`` was just a plain number. None when there is no number.
    Digits inside words (``Passage-1``, ``Q2``, ``2nd``) are not numbers."""
    t = plain(text)
    for m, value, note in _numbers(t):
        notes = [note] if note else []
        if m.group("pct"):
            notes.append(f"{m.group(0).strip()!r} is a percentage")
        elif m.group("den"):
            den = float(m.group("den"))
            if den == 0:
                continue
            value /= den
            notes.append(f"read the fraction {m.group(0).strip()!r} as {value:g}")
        if t.strip().rstrip(".") != m.group(0) and not notes:
            notes.append(f"read {m.group(0)!r} from {_quote(t)}")
        return value, "; ".join(notes) or None
    return None


def probability(text: str | None) -> tuple[float, str | None] | None:
    """A probability in [0, 1] from ``text``: a decimal (``0.8``, ``.8``, ``0,8``), a percentage (``80%``,
    ``**70%**``, ``[80%]``), a fraction (``7/10``, ``8 out of 10``), or a number in (1, 100] read as a percentage.
    A decimal, percentage or fraction wins over a bare integer elsewhere in the text (``Passage 2 … 0.8``).
    Returns (value, note): the note says what was assumed, None when ``text`` was exactly a plain decimal in
    [0, 1]; None when no number."""
    t = plain(text)
    found = list(_numbers(t))
    if not found:
        return None
    shaped = [f for f in found if f[0].group("pct") or f[0].group("den") or not f[0].group("num").isdigit()]
    m, value, note = (shaped or found)[0]
    notes = [note] if note else []
    token = m.group(0).strip()
    if m.group("pct"):
        value /= 100
        notes.append(f"read the percentage {token!r} as {value:g}")
    elif m.group("den"):
        den = float(m.group("den"))
        value = value / den if den else float("inf")
        notes.append(f"read the fraction {token!r} as {value:g}")
    elif 1 < value <= 100:
        value /= 100
        notes.append(f"read {token!r} as a percentage: {value:g}")
    if not 0 <= value <= 1:
        notes.append(f"{token!r} is out of [0, 1]: clamped")
        value = min(1.0, max(0.0, value))
    if not notes and t.strip().rstrip(".") != token:
        notes.append(f"read {token!r} from {_quote(t)}")
    return value, "; ".join(notes) or None


def _quote(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[:limit] + "…")


# --- JSON -------------------------------------------------------------------------------------------------------

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_MAX_OBJECTS_TRIED = 20


def json_object(text: str | None) -> dict | None:
    """The first JSON object in the reply, bare or inside a ```json fence; tolerant of trailing commas, curly
    quotes and a Python-style dict (single quotes). None when there is none."""
    raw = text or ""
    decoder = json.JSONDecoder()
    for candidate in (raw, raw.translate(_CHARS)):
        starts = [m.start() for m in re.finditer(r"\{", candidate)][:_MAX_OBJECTS_TRIED]
        for start in starts:
            chunk = candidate[start:]
            for attempt in (chunk, _TRAILING_COMMA.sub(r"\1", chunk)):
                try:
                    value, _ = decoder.raw_decode(attempt)
                except (ValueError, RecursionError):   # RecursionError: "[[[[…" nested past the stack
                    continue
                if isinstance(value, dict):
                    return value
            end = chunk.find("}")
            literal = _python_dict(chunk[:end + 1]) if end > 0 else None
            if literal is not None:
                return literal
    return None


def _python_dict(chunk: str) -> dict | None:
    """``{'answer': 'x'}`` (a flat dict a model wrote in Python's syntax)."""
    try:
        value = ast.literal_eval(_TRAILING_COMMA.sub(r"\1", chunk))
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None
    return value if isinstance(value, dict) else None


# --- a reply cut at the token limit -----------------------------------------------------------------------------

_CLOSED = tuple(".!?)]}\"'`>|*_%")
_OPEN_END = (",", ":", ";", "(", "[", "{", "/", "&", "-")
_DANGLING = re.compile(r"\b(?:and|or|but|the|a|an|of|to|in|on|at|for|with|by|from|that|which|is|are|was|were|because"
                       r"|as|than|then|its|their|his|her)$", re.I)
_LIST_MARKER = re.compile(r"^[ \t]*(?:\d{1,3}[.)]|[-*•])[ \t]*$")


def truncated(text: str | None) -> bool:
    """Did the reply look cut off at the token limit? An unclosed code fence, JSON object, list or ``<DOC>`` block,
    or an unclosed double quote on the last line; a last line that is a bare list marker or ends on a comma, colon or
    a word that cannot end a sentence ("and", "the", "of"…); or a reply of several sentences whose last line (itself
    a sentence, not a keyword or a list item) stops without closing punctuation. A heuristic: a lenient read adds
    "reply looked cut off"."""
    raw = (text or "").rstrip()
    if not raw:
        return False
    last = raw.split("\n")[-1].strip()
    if raw.count("```") % 2 or raw.count("{") > raw.count("}") or raw.count("[") > raw.count("]") or \
            raw.upper().count("<DOC>") > raw.upper().count("</DOC>") or last.count('"') % 2:
        return True
    if _LIST_MARKER.match(last):
        return True
    words = raw.split()
    if last.endswith(_OPEN_END) or (len(words) >= 4 and _DANGLING.search(last)):
        return True
    last_words = last.split()
    is_item = bool(_NUMBERED.match(last) or _BULLET.match(last) or _TAGGED.match(last))
    return (len(words) >= 30 and len(last_words) >= 6 and not is_item and not last.endswith(_CLOSED)
            and not last[-1].isdigit())


# --- bounded work ------------------------------------------------------------------------------------------------

_SPACE_RUN = re.compile(r"[ \t\u00a0]{3,}")
_BLANK_RUN = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")


def squeeze(text: str | None) -> str | None:
    """``text`` with runs of spaces or tabs cut to two and runs of blank lines to one: a model that loops on whitespace
    up to its token limit (local models in JSON mode do) would otherwise cost the readers' patterns time quadratic in
    the run's length. Two spaces survive (a Markdown line break, a table's padding), so no reading changes."""
    if not text or len(text) < 64:
        return text
    return _BLANK_RUN.sub("\n\n", _SPACE_RUN.sub("  ", text))


def bounded(reader):
    """A reader that reads ``squeeze(text)`` (its first argument): the guard every reader wears."""
    @functools.wraps(reader)
    def read(text, *args, **kwargs):
        return reader(squeeze(text), *args, **kwargs)
    return read
