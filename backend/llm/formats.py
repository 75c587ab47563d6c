"""Readers of the general tasks' replies (``backend.llm.tasks``) and the helpers readers share. Tolerant, loud and
total.

A method-specific format is read beside its method (``backend/methods/<method>/parse.py`` or the method module),
and the method's ``TaskSpec`` names that reader; this module keeps only what several methods, or a method and the
offline model, read alike. MADAM-RAG's two formats are here for that reason: the offline model reads the agents'
earlier replies with the same readers, and ``backend.llm`` never imports ``backend.methods``.

Each reader takes raw model text (and, as a ``TaskSpec`` reader, the call's fields as keywords, ignoring those it
does not need) and returns ``Parsed(value, status, note)``; it never raises. ``status`` says how the read went:

* ``exact``: the reply was in the format the prompt asked for;
* ``lenient``: the value was read, but something was assumed (Markdown, a preamble, a percentage for a probability,
  a bulleted list for a numbered one...); ``note`` says what;
* ``unreadable``: no value could be read; ``value`` is the method's default per its paper and ``note`` names it
  ("… the method used its default: r_p = 0.5").

The offline model emits exactly these formats; hosted models drift, hence the fallbacks (never a silent one: the
papers' released code fell back silently, and wrong); what chat models wrap around a value is seen through with
``backend.llm.chat_text``, and ``tests/llm/replies`` holds the replies each reader must read. An exact reply is read
from its raw text, unchanged. ``Parsed.ok`` (status is exact) is kept for older callers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from backend.answers import IDK, is_idk  # noqa: F401 - re-exported: readers and handlers use them
from backend.llm import chat_text as ct

T = TypeVar("T")

Status = Literal["exact", "lenient", "unreadable"]
STATUSES: tuple[Status, ...] = ("exact", "lenient", "unreadable")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    value: T
    status: Status = "exact"
    note: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.status, bool):  # the older Parsed(value, ok, note) form: a fallback was a lenient read
            object.__setattr__(self, "status", "exact" if self.status else "lenient")
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def ok(self) -> bool:
        return self.status == "exact"


def exact(value: T) -> Parsed[T]:
    return Parsed(value, "exact", None)


def lenient(value: T, note: str) -> Parsed[T]:
    """Read, with an assumption ``note`` states."""
    return Parsed(value, "lenient", note)


def unreadable(value: T, note: str) -> Parsed[T]:
    """Nothing readable: ``value`` is the method's default, ``note`` says what was missing and which default was used."""
    return Parsed(value, "unreadable", note)


def _clean(text: str) -> str:
    return text.strip().strip('"“”').strip().rstrip(".").strip()


CUT_OFF = "reply looked cut off"

#: What a refusal says besides "I don't know" (chat models' "I'm sorry, but I don't have reliable information…").
_REFUSAL = re.compile(
    r"\b(?:(?:i'?m|i\s+am)\s+sorry\s*(?:,|\bbut\b|\.\s)"     # "I'm sorry, but…", not the song "I'm Sorry"
    r"|i\s+apologi[sz]e|unfortunately,?\s+i"
    r"|i\s+(?:do\s*n[o']?t|don't)\s+(?:have|possess)\b[^.\n]{0,60}?\b(?:information|knowledge|details|data|access)"
    r"|i\s+(?:cannot|can't|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|could\s*n[o']?t)\s+"
    r"(?:provide|find|answer|determine|verify|write|give|recall|confirm|locate|identify)"
    r"|there\s+is\s+no\s+(?:reliable\s+|available\s+|known\s+|specific\s+|such\s+)?information"
    r"|no\s+(?:reliable\s+|specific\s+)?information\s+(?:is\s+)?(?:available|provided|given)"
    r"|(?:does|do)\s+not\s+(?:mention|provide|contain|say|specify|state|include|give)"
    r"|(?:is|are)\s+not\s+(?:mentioned|provided|stated|specified|given)\s+in"
    r"|cannot\s+be\s+(?:determined|answered))\b", re.I)


def refusal(text: str | None, max_words: int = 25) -> bool:
    """A short reply that declines to answer: "I don't know" and its variants (``is_idk``), or a refusal
    sentence ("I'm sorry, but I don't have information about this.", "The passages do not mention it.")."""
    t = ct.normalise(text).strip()
    return is_idk(t) or (len(t.split()) <= max_words and bool(_IDK_PHRASE.search(t.lower()) or _REFUSAL.search(t)))


def _prepare(raw: str) -> tuple[str, list[str]]:
    """The reply's plain text without chatter, and what that assumed (Markdown, a preamble or closing remark). A
    reply with neither is kept as it is, curly quotes and all."""
    if not ct.has_markup(raw) and not ct.has_chatter(raw):
        return raw.strip(), []
    flat = ct.plain(raw)
    body = ct.strip_chatter(flat)
    notes = []
    if ct.has_markup(raw):
        notes.append("removed Markdown")
    if body != flat.strip():
        notes.append("dropped a preamble or closing remark")
    return body, notes


def _read(value: T, notes: list[str], raw: str = "") -> Parsed[T]:
    """Exact when nothing was assumed, else lenient with every assumption (and a cut-off) in the note."""
    notes = list(dict.fromkeys(notes + ([CUT_OFF] if raw and ct.truncated(raw) else [])))
    return lenient(value, "; ".join(notes)) if notes else exact(value)


def schema_object(raw: str) -> dict | None:
    """A structured reply's JSON object (the call asked for the task's schema, ``backend.llm.structured``), or None
    when the reply is not one JSON object: the papers' readings read a structured reply by its fields."""
    try:
        found = json.loads(raw.strip())
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


def _json_value(raw: str, *keys: str):
    """(key, value) of the first of ``keys`` in a JSON object the reply holds (any case), else None."""
    if "{" not in raw:
        return None
    obj = ct.json_object(raw)
    if not obj:
        return None
    lowered = {str(k).lower().replace(" ", "_"): (k, v) for k, v in obj.items()}
    for key in keys:
        if key in lowered:
            return lowered[key]
    return None


_SHORT_LABELS = ("Final Answer", "Short Answer", "Answer", "Keywords", "Response")
_ANSWER_IS = re.compile(r"^(?:so,?\s+|therefore,?\s+|thus,?\s+|hence,?\s+)?(?:the\s+|my\s+)?"
                        r"(?:final\s+|correct\s+|short\s+|best\s+|most\s+likely\s+)?answer\s+"
                        r"(?:is|would\s+be|should\s+be|appears\s+to\s+be)\s*:?\s+(?P<v>\S.*)$", re.I)
_AFTER_ANSWER = re.compile(r"(?<!\s)\.?\s+(?:explanation|reason(?:ing)?|evidence|justification|sources?|because)\s*:.*$",
                           re.I)
_PLAIN_LABEL = re.compile(r"^\s*(?:final\s+)?answer\s*:\s*(.*)$", re.I)
_LABEL_ONLY = re.compile(r"\W*(?:final\s+|short\s+)?(?:answer|response|keywords)\W*", re.I)


@ct.bounded
def parse_short_answer(text: str, **_fields) -> Parsed[str | None]:
    """A keyword answer (``None`` = "I don't know"). Exact: one line, optionally after "Answer:". Lenient: Markdown,
    a preamble or closing remark, a labelled line in a longer reply ("**Final Answer:** X"), "The answer is X.",
    a JSON object with an "answer" key, the first line of a longer reply, a refusal sentence (-> I don't know).
    Unreadable: an empty reply (-> I don't know, the abstention every task's prompt offers)."""
    raw = (text or "").strip()
    if not raw:
        return unreadable(None, "empty reply; the method used its default: I don't know (abstain)")
    notes: list[str] = []
    found = _json_value(raw, "answer", "final_answer", "short_answer", "keywords", "response")
    if found is not None:
        value = ", ".join(map(str, found[1])) if isinstance(found[1], list) else str(found[1] or "")
        notes.append(f"read the {found[0]!r} key of a JSON object")
    else:
        body, notes = _prepare(raw)
        lines = [line.strip() for line in body.splitlines() if line.strip()] or [""]
        value = ct.labelled(body, *_SHORT_LABELS)
        if value is not None and len(lines) > 1:
            notes.append("read the labelled answer and ignored the other lines")
        elif value is None and len(lines) == 1 and _LABEL_ONLY.fullmatch(lines[0]):
            return unreadable(None, "a label with no answer after it; the method used its default: I don't know "
                                    "(abstain)")
        elif value is None:
            said = next((m for m in map(_ANSWER_IS.match, lines) if m), None)
            if said:
                value = said.group("v")
                notes.append("read the answer from 'The answer is …'")
            else:
                value = lines[0]
                if len(lines) > 1:
                    notes.append("kept the first line only")
        elif not _PLAIN_LABEL.match(lines[0]):
            notes.append("read a label other than 'Answer:'")
        cut = _AFTER_ANSWER.sub("", value)
        if cut != value:
            value = cut
            notes.append("dropped the explanation after the answer")
    body = _clean(value)
    if is_idk(body):
        return _read(None, notes, raw)
    if refusal(body):
        return _read(None, notes + ["read a refusal as I don't know"], raw)
    return _read(body, notes, raw)


_YES_NO = re.compile(r"\b(yes|no)\b", re.I)
_YES_NO_ONLY = re.compile(r"^\W*(yes|no)\W*$", re.I)
_ENTAIL = re.compile(r"\b(?P<neg>(?:does|do|is|are)\s*n[o']?t\s+|not\s+)?(?:semantically\s+)?"
                     r"(?:entails?|equivalent|the\s+same)\b", re.I)


@ct.bounded
def parse_yes_no(text: str, **_fields) -> Parsed[bool | None]:
    """"yes" / "no". Exact: the word alone. Lenient: Markdown ("**Yes**"), a labelled or leading yes/no ("Yes, they
    match."), a final one ("The answers are equivalent: yes"), the only one in the reply, or the wording without
    either ("Answer 1 does not entail Answer 2"). Unreadable: no yes/no (-> False: RA-RAG merges two answers only
    on two yeses)."""
    raw = (text or "").strip()
    if _YES_NO_ONLY.match(raw) and not ct.has_markup(raw):
        return exact(_YES_NO_ONLY.match(raw).group(1).lower() == "yes")
    found = _json_value(raw, "answer", "response", "entails", "equivalent", "verdict")
    if found is not None:
        key, said = found
        word = _YES_NO_ONLY.match(str(said))
        if isinstance(said, bool) or word:
            value = said if isinstance(said, bool) else word.group(1).lower() == "yes"
            return _read(value, [f"read the {key!r} key of a JSON object"])
    body, notes = _prepare(raw)
    lines = [line for line in body.splitlines() if line.strip()]
    label = ct.labelled(body, "Final Answer", "Answer", "Response")
    candidates = [(label, "read the labelled yes/no"), (lines[0] if lines else "", "read the leading yes/no"),
                  (lines[-1] if lines else "", "read the final yes/no")]
    kinds = {w.lower() for w in _YES_NO.findall(body)}
    for where, (part, note) in enumerate(candidates):
        if not part or (where == 2 and len(kinds) > 1):   # "Maybe yes, maybe no.": no final word decides
            continue
        m = _YES_NO_ONLY.match(part) or (re.match(r"^\W*(yes|no)\b", part, re.I) if where < 2 else
                                         re.search(r"\b(yes|no)\W*$", part, re.I))
        if m:
            if not (_YES_NO_ONLY.match(body) and where < 2):
                notes.append(note)
            return _read(m.group(1).lower() == "yes", notes)
    if len(kinds) == 1:
        return _read(kinds.pop() == "yes", notes + ["yes/no found late"])
    m = _ENTAIL.search(body) if not kinds else None
    if m:
        return _read(not m.group("neg"), notes + [f"no yes/no; read the wording {m.group(0)!r}"])
    why = "both yes and no, none leading" if kinds else "no yes/no found"
    return unreadable(False, f"{why}; the method used its default: no (not entailed)")


_ANSWER_EXPL = re.compile(r"answer\s*:\s*(?P<answer>.*?)\s*(?:\.?\s*explanation\s*:\s*(?P<expl>.*))?$", re.I | re.S)
_AS_ASKED = re.compile(r"Answer:.*?Explanation:", re.S)   # the labels as the prompt writes them


@ct.bounded
def parse_agent_response(text: str, **_fields) -> Parsed[tuple[str | None, str]]:
    """``Answer: X. Explanation: Y`` -> (X or None for unknown, Y). Lenient: Markdown around the labels, a preamble
    or closing remark, labels on separate lines or in the other order, a JSON object with "answer" (and
    "explanation"), "The answer is X.", no "Explanation:", and (MADAM's own fallback) the first line as the
    answer. Unreadable: an empty reply (-> unknown)."""
    raw = (text or "").strip()
    if not raw:
        return unreadable((None, ""), "empty reply; the method used its default: unknown")
    m = _ANSWER_EXPL.search(raw)
    if m and m.group("expl") and _AS_ASKED.search(raw) and not ct.has_markup(raw) and not ct.has_chatter(raw):
        ans = _clean(m.group("answer").splitlines()[0] if m.group("answer") else "")   # the format asked for
        if is_idk(ans) or not refusal(ans, 12):
            return exact((None if is_idk(ans) else ans, m.group("expl").strip()))
    found = _json_value(raw, "answer", "final_answer")
    if found is not None:
        obj = ct.json_object(raw) or {}
        expl = next((str(v) for k, v in obj.items() if str(k).lower() in ("explanation", "reasoning", "reason")), "")
        ans, notes = _clean(str(found[1] or "")), [f"read the {found[0]!r} key of a JSON object"]
    else:
        body, notes = _prepare(raw)
        value = ct.labelled(body, "Final Answer", "Answer")
        expl = ct.after_label(body, "Explanation", "Reasoning", "Reason", "Justification",
                              until=("Answer", "Final Answer"))
        if value is not None:
            ans = _clean(re.split(r"\.?\s*\b(?:explanation|reasoning|reason)\s*:", value, maxsplit=1, flags=re.I)[0])
        else:
            lines = [line.strip() for line in body.splitlines() if line.strip()] or [""]
            said = next((s for s in map(_ANSWER_IS.match, lines) if s), None)
            ans = _clean(said.group("v") if said else lines[0])
            notes.append("read the answer from 'The answer is …'" if said else
                         "no 'Answer:' found; used the first line")
            expl = expl or body
        if not expl:
            notes.append("no 'Explanation:' found")
        elif not notes:
            notes.append("not the one-line 'Answer: X. Explanation: Y' of the prompt")
        expl = expl or ""
    if ans and not is_idk(ans) and refusal(ans, 12):
        notes.append("read a refusal as unknown")
        ans = ""
    return _read((None if is_idk(ans) else ans, expl), notes, raw)


_QUOTED = re.compile(r'"([^"\n]*)"|\'([^\'\n]*)\'')
# not inside "February 17, 1963" or "3,559"; a year before the comma is an item of its own ("1720, 1630")
_COMMA = re.compile(r"(?<!\d),\s+|(?<=\d\d\d),\s+|(?<=\d),\s+(?!\d{4}\b)|;\s*")


def _split_list(body: str) -> list[str]:
    """A bracketed JSON list, quoted items, or comma / semicolon separated items (dates and thousands kept whole)."""
    body = body.strip()
    try:
        value = json.loads(body)
        if isinstance(value, list):
            return [str(v).strip() for v in value if str(v).strip()]
    except (ValueError, RecursionError):   # RecursionError: "[[[[…]]]]" nested past the stack
        pass
    inner = re.sub(r"\]\.?$", "", body.strip()).lstrip("[").strip()
    quoted = [a or b for a, b in _QUOTED.findall(inner)] if inner[:1] in "\"'" else []
    if quoted:        # quoted items: an unclosed last quote (a reply cut off) is not an item
        return [q.strip() for q in quoted if q.strip()]
    items = [re.sub(r"^(?:and|or)\s+", "", p.strip(), flags=re.I) for p in _COMMA.split(inner)]
    return [i for i in items if i]


_ACA = re.compile(r"all\s+correct\s+answers\s*:\s*(\[[^\]\n]*\])", re.I)
_EXPLANATION = re.compile(r"explanation\s*:\s*(.*)", re.I | re.S)
_ACA_LABEL = re.compile(r"^\W*(?P<label>(?:all\s+)?(?:the\s+)?(?:correct|final|valid)\s+answers?|all\s+answers|answers)"
                        r"\W*?(?:\s*[:：=-]\s*|\s*$)(?P<v>.*)$", re.I)
_NEXT_LABEL = re.compile(r"^\W*(?:explanation|reasoning|reason|analysis|justification|notes?)\b\s*:?", re.I)


def _answer_items(items: list[str]) -> list[str]:
    """The answers, unknowns dropped; Markdown and wrapping quotes removed, the text otherwise kept ("D.C.")."""
    return [a for a in (ct.plain(i).strip().strip('"“”').strip() for i in items) if a and not is_idk(a)]


def _sentence_end(listing: str) -> str:
    """A bare listing without the full stop that ends its sentence ("a, b." -> "a, b"; "Washington, D.C." kept)."""
    listing = listing.strip()
    return listing if re.search(r"(?:\b\w\.){2,}$", listing) else listing.rstrip(".").strip()


@ct.bounded
def parse_all_correct_answers(text: str, **_fields) -> Parsed[tuple[list[str], str]]:
    """``All Correct Answers: ["a", "b"]. Explanation: ...`` -> (answers without unknowns, explanation). Lenient:
    Markdown, a preamble or closing remark, another label ("Correct answers", "Final answers"), answers not in a
    bracketed list ("a, b"), a bulleted / numbered list or a table under the label, a JSON object
    (``{"all_correct_answers": [...], "explanation": ...}``), a reply cut off inside the list (the items whose
    quotes closed). Unreadable: no such label (-> no answer: unknown)."""
    raw = (text or "").strip()
    if not raw:
        return unreadable(([], ""), "empty reply; the method used its default: no answer (unknown)")
    m = _ACA.search(raw)
    if m and raw[m.start():].startswith("All Correct Answers:") and not ct.has_markup(raw) and not ct.has_chatter(raw):
        em = _EXPLANATION.search(raw[m.end():])                         # the format asked for
        return exact(([a for a in _split_list(m.group(1)) if not is_idk(a)], em.group(1).strip() if em else ""))
    found = _json_value(raw, "all_correct_answers", "correct_answers", "answers", "answer")
    if found is not None:
        obj = ct.json_object(raw) or {}
        listed = found[1] if isinstance(found[1], list) else _split_list(str(found[1] or ""))
        expl = next((str(v) for k, v in obj.items() if str(k).lower() in ("explanation", "reasoning", "reason")), "")
        return _read((_answer_items([str(a) for a in listed]), expl), [f"read the {found[0]!r} key of a JSON object"],
                     raw)
    body, notes = _prepare(raw)
    lines = body.split("\n")
    hit = next(((i, lm) for i, lm in enumerate(map(_ACA_LABEL.match, lines)) if lm), None)
    inline = _ACA.search(body) or re.search(r"all\s+correct\s+answers\s*:\s*(.*)", body, re.I)
    if hit is None and inline is None:
        return unreadable(([], raw), "no 'All Correct Answers:' found; the method used its default: no answer "
                                     "(unknown)")
    if hit is not None and (inline is None or hit[0] <= body[:inline.start()].count("\n")):
        i, lm = hit
        listing, label, start = lm.group("v").strip(), lm.group("label"), i + 1
        if lines[i].lstrip().startswith("|"):          # the label is a table's column header: read the table
            listing, start = "", i
    else:
        listing, label, start = inline.group(1).strip(), "All Correct Answers", body[:inline.end()].count("\n") + 1
    if label.strip() != "All Correct Answers":
        notes.append(f"read the label {label.strip()!r}")
    rest = "\n".join(lines[start:])
    if listing.startswith("["):
        answers = _split_list(re.match(r"\[[^\]\n]*\]?", listing).group(0))
    elif listing:
        answers = _split_list(_sentence_end(re.split(r"\s+explanation\s*:", listing, maxsplit=1, flags=re.I)[0]))
        notes.append("answers were not a bracketed list")
    else:
        block = []
        for line in rest.split("\n"):
            if _NEXT_LABEL.match(line) or (block and not line.strip()):
                break
            block.append(line)
        answers, kind = ct.read_list("\n".join(block))
        if not answers:
            answers = [line.strip() for line in block if line.strip()]
            kind = "lines"
        notes.append(f"answers as {kind} under the label" if kind != "lines" else
                     "answers on the lines under the label")
    em = _EXPLANATION.search(listing) or _EXPLANATION.search(rest)
    expl = em.group(1).strip() if em else ct.after_label(rest, "Explanation", "Reasoning", "Reason") or ""
    return _read((_answer_items(answers), expl), notes, raw)


#: A short reply (fewer words than this) that contains "I don't know" is a refusal, not a passage (Astute P4).
IDK_SHORT_WORDS = 25

_IDK_PHRASE = re.compile(r"\bi\s+(?:don'?t|do\s+not)\s+know\b")
_DOC_TAG = re.compile(r"<DOC>(.*?)(?:</DOC>|\Z)", re.S | re.I)
_PASSAGE_HEAD = re.compile(r"^[ \t]*(?:\*\*)?[ \t]*(?:document|passage|doc)[ \t]*#?[ \t]*\d+[ \t]*(?:\*\*)?[ \t]*"
                           r"(?:[:.)-]|$)", re.I | re.M)
_PASSAGE_LABEL = re.compile(r"^[ \t]*(?:passage|document|doc)[ \t]*(?:#?[ \t]*\d{1,3})?[ \t]*(?:[:.)-][ \t]*|\n)", re.I)
#: A refusal at a passage's start ("I'm sorry, but I don't have reliable information about this."): not a passage.
_REFUSAL_START = re.compile(r"^\W*(?:i'?m\s+sorry|i\s+am\s+sorry|i\s+apologi[sz]e|unfortunately|as\s+an\s+ai"
                            r"|i\s+(?:do\s*n[o']?t|don't)\s+have|i\s+(?:cannot|can't|am\s+unable|'m\s+unable"
                            r"|am\s+not\s+able|could\s*n[o']?t)|there\s+is\s+no\b)", re.I)
REFUSAL_MAX_WORDS = 60


@dataclass(frozen=True)
class Passages:
    kept: list[str]                   # the passages, at most ``max_passages``
    dropped: list[tuple[str, str]]    # (text, why it was dropped)
    hedged: list[int]                 # indices into ``kept`` of passages that still contain "I don't know"


def _idk_kind(text: str) -> str | None:
    """"drop" for an "I don't know" statement (P4), "refusal" for a chat model's refusal ("I'm sorry, but I don't
    have reliable information…"), "hedged" for a passage that contains an "I don't know", else None."""
    t = re.sub(r"[\"“”‘`*]", "", text.replace("’", "'")).strip().lower()
    if not _IDK_PHRASE.search(t):
        if is_idk(text):
            return "drop"
        refuses = _REFUSAL_START.match(t) and _REFUSAL.search(t) and len(t.split()) < REFUSAL_MAX_WORDS
        return "refusal" if refuses else None
    if re.match(r"^\W*i\s+(?:don'?t|do\s+not)\s+know", t) or len(t.split()) < IDK_SHORT_WORDS:
        return "drop"
    return "hedged"


def _passage_blocks(raw: str, max_passages: int) -> tuple[list[str], list[str]]:
    """The reply's passages before any is dropped, and what reading them assumed."""
    found = _json_value(raw, "passages", "passage", "documents", "text") if raw.lstrip()[:1] in "{`" else None
    if found is not None:
        value = found[1] if isinstance(found[1], list) else [found[1]]
        return [str(v).strip() for v in value], [f"read the {found[0]!r} key of a JSON object"]
    tags = _DOC_TAG.findall(raw)
    if tags:
        outside = _DOC_TAG.sub("", raw).replace("</DOC>", "").strip()
        return [t.strip() for t in tags], ["ignored the text outside the <DOC> blocks"] if outside else []
    exact_shape = not ct.has_markup(raw) and not ct.has_chatter(raw)
    body, notes = (raw, []) if exact_shape else _prepare(raw)
    if len(_PASSAGE_HEAD.findall(body)) > 1:
        return [b.strip() for b in _PASSAGE_HEAD.split(body)], notes
    label = _PASSAGE_LABEL.match(body)
    if label and body[label.end():].strip():
        body = body[label.end():].strip()
        notes = notes + ["dropped the 'Passage:' label"]
    if max_passages > 1:
        items, kind = ct.read_list(body)
        if kind == "numbered" and len(items) > 1:
            return items, notes + ["passages as a numbered list"]
        return [b.strip() for b in re.split(r"\n\s*\n", body)], notes
    return [body], notes


@ct.bounded
def parse_passages(text: str, max_passages: int = 1, drop_idk: bool = True, **_fields) -> Parsed[Passages]:
    """Passages written from memory (``generate_passage``; Astute's call 1, BRIDGE's K_int): ``<DOC>`` blocks;
    else, when ``max_passages`` > 1, ``Document k:`` / ``Passage k:`` headers or blank lines; else the whole reply
    as one passage. A passage that is an "I don't know" statement is dropped (Astute P4; an "I don't know" reply
    reads as no passage); passages past ``max_passages`` are dropped. Lenient: Markdown (headings, bold), a
    preamble or closing remark ("Here is a passage…", "Let me know if…"), a "Passage:" label, passages as a
    numbered list or a JSON object, a refusal ("I'm sorry, but I don't have reliable information…", dropped as
    "I don't know"), a reply cut off. Unreadable: an empty reply (-> no passage from memory)."""
    raw = (text or "").strip()
    if not raw:
        return unreadable(Passages([], [], []), "empty reply; the method used its default: no passage from memory")
    blocks, notes = _passage_blocks(raw, max_passages)
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    hedged: list[int] = []
    for block in (b for b in blocks if b):
        kind = _idk_kind(block)
        if kind in ("drop", "refusal") and drop_idk:
            dropped.append((block, "an \"I don't know\" statement, not a passage" if kind == "drop" else
                            "a refusal, not a passage"))
            if kind == "refusal":
                notes.append("read a refusal as \"I don't know\"")
        elif len(kept) >= max_passages:
            dropped.append((block, f"past the limit of m̂ = {max_passages} passages"))
        else:
            if kind == "hedged":
                hedged.append(len(kept))
            kept.append(block)
    extra = sum(1 for _, why in dropped if why.startswith("past"))
    if extra:
        notes.append(f"{extra} passage{'s' if extra > 1 else ''} past the limit of {max_passages} dropped")
    return _read(Passages(kept, dropped, hedged), notes, raw)
