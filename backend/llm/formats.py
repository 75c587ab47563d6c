"""Readers of the general tasks' replies (``backend.llm.tasks``) and the helpers readers share. Tolerant, loud and
total.

A method-specific format is read beside its method (``backend/methods/<method>/parse.py`` or the method module),
and the method's ``TaskSpec`` names that reader; this module keeps only what several methods, or a method and the
offline model, read alike. MADAM-RAG's two formats are here for that reason: the offline model reads the agents'
earlier replies with the same readers, and ``backend.llm`` never imports ``backend.methods``.

Each reader takes raw model text (and, as a ``TaskSpec`` reader, the call's fields as keywords, ignoring those it
does not need) and returns ``Parsed(value, ok, note)``: it never raises, ``ok`` is False when it had to fall
back, and ``note`` says how (shown in traces). The offline model emits exactly these formats; hosted models drift,
hence the fallbacks (never a silent one: the papers' released code fell back silently, and wrong).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from backend.answers import IDK, is_idk  # noqa: F401 - re-exported: readers and handlers use them

T = TypeVar("T")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    value: T
    ok: bool = True
    note: str | None = None


def _clean(text: str) -> str:
    return text.strip().strip('"“”').strip().rstrip(".").strip()


def parse_short_answer(text: str, **_fields) -> Parsed[str | None]:
    """A keyword answer (``None`` = "I don't know"). Takes the first line; drops an "Answer:" prefix."""
    if text is None or not text.strip():
        return Parsed(None, False, "empty reply read as I don't know")
    first = text.strip().splitlines()[0]
    m = re.match(r"^\s*(final\s+)?answer\s*:\s*(.*)$", first, re.I)
    body = _clean(m.group(2) if m else first)
    if is_idk(body):
        return Parsed(None)
    note = None if len(text.strip().splitlines()) == 1 else "kept the first line only"
    return Parsed(body, note is None, note)


def parse_yes_no(text: str, **_fields) -> Parsed[bool | None]:
    m = re.search(r"\b(yes|no)\b", text or "", re.I)
    if not m:
        return Parsed(None, False, "no yes/no found")
    return Parsed(m.group(1).lower() == "yes", m.start() < 3, None if m.start() < 3 else "yes/no found late")


_ANSWER_EXPL = re.compile(r"answer\s*:\s*(?P<answer>.*?)\s*(?:\.?\s*explanation\s*:\s*(?P<expl>.*))?$", re.I | re.S)


def parse_agent_response(text: str, **_fields) -> Parsed[tuple[str | None, str]]:
    """``Answer: X. Explanation: Y`` -> (X or None for unknown, Y)."""
    raw = (text or "").strip()
    m = _ANSWER_EXPL.search(raw)
    if not m:
        first = raw.splitlines()[0] if raw else ""
        ans = _clean(first)
        return Parsed((None if is_idk(ans) else ans, raw), False, "no 'Answer:' found; used the first line")
    ans = _clean(m.group("answer").splitlines()[0] if m.group("answer") else "")
    expl = (m.group("expl") or "").strip()
    return Parsed((None if is_idk(ans) else ans, expl), bool(m.group("expl")),
                  None if m.group("expl") else "no 'Explanation:' found")


def _split_list(body: str) -> list[str]:
    body = body.strip()
    try:
        value = json.loads(body)
        if isinstance(value, list):
            return [str(v).strip() for v in value if str(v).strip()]
    except (json.JSONDecodeError, ValueError):
        pass
    inner = body.strip("[]")
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([^,]+)', inner)
    return [p.strip() for groups in parts for p in groups if p and p.strip()]


def parse_all_correct_answers(text: str, **_fields) -> Parsed[tuple[list[str], str]]:
    """``All Correct Answers: ["a", "b"]. Explanation: ...`` -> (answers without unknowns, explanation)."""
    raw = (text or "").strip()
    m = re.search(r"all\s+correct\s+answers\s*:\s*(\[[^\]]*\]|[^\n]*)", raw, re.I)
    if not m:
        return Parsed(([], raw), False, "no 'All Correct Answers:' found")
    listing = m.group(1)
    answers = [a for a in _split_list(listing) if not is_idk(a)]
    rest = raw[m.end():]
    em = re.search(r"explanation\s*:\s*(.*)", rest, re.I | re.S)
    note = None if listing.strip().startswith("[") else "answers were not a bracketed list"
    return Parsed((answers, em.group(1).strip() if em else ""), note is None, note)


#: A short reply (fewer words than this) that contains "I don't know" is a refusal, not a passage (Astute P4).
IDK_SHORT_WORDS = 25

_IDK_PHRASE = re.compile(r"\bi\s+(?:don'?t|do\s+not)\s+know\b")
_DOC_TAG = re.compile(r"<DOC>(.*?)(?:</DOC>|\Z)", re.S | re.I)
_PASSAGE_HEAD = re.compile(r"^\s*(?:\*\*)?\s*(?:document|passage|doc)\s*#?\s*\d+\s*(?:\*\*)?\s*[:.)-]", re.I | re.M)


@dataclass(frozen=True)
class Passages:
    kept: list[str]                   # the passages, at most ``max_passages``
    dropped: list[tuple[str, str]]    # (text, why it was dropped)
    hedged: list[int]                 # indices into ``kept`` of passages that still contain "I don't know"


def _idk_kind(text: str) -> str | None:
    """"drop" for an "I don't know" statement (P4), "hedged" for a passage that contains one, else None."""
    t = re.sub(r"[\"“”‘`*]", "", text.replace("’", "'")).strip().lower()
    if not _IDK_PHRASE.search(t):
        return "drop" if is_idk(text) else None
    if re.match(r"^\W*i\s+(?:don'?t|do\s+not)\s+know", t) or len(t.split()) < IDK_SHORT_WORDS:
        return "drop"
    return "hedged"


def parse_passages(text: str, max_passages: int = 1, drop_idk: bool = True, **_fields) -> Parsed[Passages]:
    """Passages written from memory (``generate_passage``; Astute's call 1, BRIDGE's K_int): ``<DOC>`` blocks;
    else, when ``max_passages`` > 1, ``Document k:`` / ``Passage k:`` headers or blank lines; else the whole reply
    as one passage. A passage that is an "I don't know" statement is dropped (Astute P4; an "I don't know" reply
    reads as no passage); passages past ``max_passages`` are dropped."""
    raw = (text or "").strip()
    blocks = [b.strip() for b in _DOC_TAG.findall(raw)]
    if not blocks and max_passages > 1 and len(_PASSAGE_HEAD.findall(raw)) > 1:
        blocks = [b.strip() for b in _PASSAGE_HEAD.split(raw)]
    elif not blocks and max_passages > 1:
        blocks = [b.strip() for b in re.split(r"\n\s*\n", raw)]
    elif not blocks:
        blocks = [raw]
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    hedged: list[int] = []
    for block in (b for b in blocks if b):
        kind = _idk_kind(block)
        if kind == "drop" and drop_idk:
            dropped.append((block, "an \"I don't know\" statement, not a passage"))
        elif len(kept) >= max_passages:
            dropped.append((block, f"past the limit of m̂ = {max_passages} passages"))
        else:
            if kind:
                hedged.append(len(kept))
            kept.append(block)
    extra = sum(1 for _, why in dropped if why.startswith("past"))
    note = f"{extra} passage{'s' if extra > 1 else ''} past the limit of {max_passages} dropped" if extra else None
    return Parsed(Passages(kept, dropped, hedged), note is None, note)
