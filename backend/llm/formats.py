"""Parsers for every output format the methods ask a model for. Tolerant, loud and total.

Each parser takes raw model text and returns ``Parsed(value, ok, note)``: it never raises, ``ok`` is False
when it had to fall back, and ``note`` says how (shown in traces). The offline model emits exactly these
formats; hosted models drift, hence the fallbacks (after the seeds' bugs in STYLE.md: no silent fallback).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

IDK = "I don't know"
_IDK_RE = re.compile(
    r"^\W*(i\s+(do\s*n[o']?t|dont|don’t)\s+know|unknown|no\s+answer|not\s+(stated|mentioned|provided|given)"
    r"|cannot\s+(be\s+)?(determined|answered)|n/?a|none)\W*$", re.I)


@dataclass(frozen=True)
class Parsed(Generic[T]):
    value: T
    ok: bool = True
    note: str | None = None


def is_idk(text: str | None) -> bool:
    """True for "I don't know" and its usual variants (and for empty text)."""
    return text is None or not text.strip() or bool(_IDK_RE.match(text.strip()))


def _clean(text: str) -> str:
    return text.strip().strip('"“”').strip().rstrip(".").strip()


def parse_short_answer(text: str) -> Parsed[str | None]:
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


def parse_yes_no(text: str) -> Parsed[bool | None]:
    m = re.search(r"\b(yes|no)\b", text or "", re.I)
    if not m:
        return Parsed(None, False, "no yes/no found")
    return Parsed(m.group(1).lower() == "yes", m.start() < 3, None if m.start() < 3 else "yes/no found late")


_ANSWER_EXPL = re.compile(r"answer\s*:\s*(?P<answer>.*?)\s*(?:\.?\s*explanation\s*:\s*(?P<expl>.*))?$", re.I | re.S)


def parse_agent_response(text: str) -> Parsed[tuple[str | None, str]]:
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


def parse_all_correct_answers(text: str) -> Parsed[tuple[list[str], str]]:
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


def parse_answer_evidence(text: str) -> Parsed[tuple[str | None, list[int]]]:
    """RC-RAG ``Answer: X.\\nEvidence: ## Passage-i ##`` (or a bare answer line) -> (X, [i, ...])."""
    raw = (text or "").strip()
    passages = [int(n) for n in re.findall(r"passage[-\s]*(\d+)", raw, re.I)]
    m = re.search(r"answer\s*:\s*(.*)", raw, re.I)
    line = m.group(1) if m else (raw.splitlines()[0] if raw else "")
    line = re.split(r"\bevidence\s*:", line, flags=re.I)[0]
    ans = _clean(line)
    ok = bool(m) and (bool(passages) or is_idk(ans))  # "I don't know" needs no evidence
    note = None if ok else ("no 'Answer:' found; used the first line" if not m else "no evidence passage cited")
    return Parsed((None if is_idk(ans) else ans, passages), ok, note)


def parse_keep_discard(text: str) -> Parsed[bool | None]:
    """``$$ keep $$`` / ``$$ discard $$`` -> True (keep) / False (discard)."""
    raw = text or ""
    m = re.search(r"\$\$\s*(keep|discard)\s*\$\$", raw, re.I)
    if m:
        return Parsed(m.group(1).lower() == "keep")
    words = re.findall(r"\b(keep|discard)\b", raw, re.I)
    if len({w.lower() for w in words}) == 1:
        return Parsed(words[0].lower() == "keep", False, "no $$ markers; found one bare keep/discard word")
    return Parsed(None, False, "no keep/discard judgment found")


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def parse_probability(text: str) -> Parsed[float | None]:
    """``Probability: 0.xx`` (or ``85%``) -> a float in [0, 1]."""
    raw = text or ""
    m = re.search(r"probability\s*[:=]?\s*([0-9]*\.?[0-9]+)\s*(%)?", raw, re.I) or \
        re.search(r"([0-9]*\.?[0-9]+)\s*(%)", raw)
    if not m:
        return Parsed(None, False, "no probability found")
    value = _number(m.group(1))
    if value is None:
        return Parsed(None, False, f"unreadable number {m.group(1)!r}")
    if m.group(2) or value > 1:
        value /= 100
    if not 0 <= value <= 1:
        return Parsed(None, False, f"probability out of range: {m.group(0)!r}")
    return Parsed(value, "probability" in m.group(0).lower(), None if "probability" in m.group(0).lower()
                  else "bare percentage read as the probability")


def parse_soft_bias(text: str) -> Parsed[tuple[float, float] | None]:
    """BRIDGE allocator -> (p_retrieve, p_direct), renormalised to sum to 1."""
    raw = text or ""
    r = re.search(r"retriev\w*\s+external\s+knowledge\s*:\s*([0-9.]+)\s*%?", raw, re.I)
    g = re.search(r"answer\w*\s+directly\s*:\s*([0-9.]+)\s*%?", raw, re.I)
    if not r and not g:
        return Parsed(None, False, "no soft-bias probabilities found")
    rv = _number(r.group(1)) if r else None
    gv = _number(g.group(1)) if g else None
    scale = 100.0 if any(v is not None and v > 1 for v in (rv, gv)) else 1.0
    rv = rv / scale if rv is not None else None
    gv = gv / scale if gv is not None else None
    if rv is None:
        rv = 1 - gv
    if gv is None:
        gv = 1 - rv
    total = rv + gv
    if total <= 0:
        return Parsed(None, False, "probabilities sum to zero")
    ok = bool(r and g) and abs(total - 1) < 0.011
    note = None if ok else "one probability missing or they did not sum to 1; renormalised"
    return Parsed((rv / total, gv / total), ok, note)


def parse_numbered_list(text: str, expected: int | None = None) -> Parsed[list[str]]:
    """``1. ...`` / ``1) ...`` lines -> items in order (un-numbered lines are ignored)."""
    items = [m.group(1).strip() for m in re.finditer(r"^\s*\d+\s*[.):]\s*(.+?)\s*$", text or "", re.M)]
    if not items:
        return Parsed([], False, "no numbered items found")
    if expected is not None and len(items) != expected:
        return Parsed(items, False, f"expected {expected} items, got {len(items)}")
    return Parsed(items)


def parse_option(text: str, n_options: int = 4) -> Parsed[int | None]:
    """``Correct Option: X`` -> 0-based option index."""
    raw = text or ""
    letters = "ABCDEFGH"[:n_options]
    m = re.search(rf"correct\s+option\s*:?\s*\(?([{letters}])\b", raw, re.I)
    if m:
        return Parsed(letters.index(m.group(1).upper()))
    m = re.search(rf"\b([{letters}])[.)]", raw)
    if m:
        return Parsed(letters.index(m.group(1)), False, "no 'Correct Option:'; used the first option letter")
    return Parsed(None, False, "no option letter found")


_DOC_BLOCK = re.compile(r"<DOC>(.*?)</DOC>", re.S | re.I)


def parse_passages(text: str) -> Parsed[list[str]]:
    """Astute p_gen: ``<DOC>..</DOC>`` blocks or one plain passage; "I don't know" -> []."""
    raw = (text or "").strip()
    blocks = [b.strip() for b in _DOC_BLOCK.findall(raw) if b.strip()]
    if not blocks:
        blocks = [raw] if raw else []
    kept = [b for b in blocks if not is_idk(b)]
    return Parsed(kept)


_GROUP_LINE = re.compile(
    r"^\s*(?:document|group)\s*(\d+)\s*\(\s*source\s*:\s*(memory|external|both)[^;)]*"
    r"(?:;\s*original\s+documents?\s*:\s*([\d,\s]*))?\)\s*:?\s*(.*)$", re.I)


@dataclass(frozen=True)
class Group:
    number: int
    source: str            # memory | external | both
    documents: list[int]   # original document numbers (1-based, as numbered in the prompt)
    text: str


def parse_groups(text: str, n_documents: int | None = None) -> Parsed[list[Group]]:
    """Astute consolidation: ``Document k (source: external; original documents: 1, 3): summary`` lines."""
    groups, dropped = [], 0
    for line in (text or "").splitlines():
        m = _GROUP_LINE.match(line)
        if not m:
            continue
        docs = [int(x) for x in re.findall(r"\d+", m.group(3) or "")]
        if n_documents is not None:
            valid = [d for d in docs if 1 <= d <= n_documents]
            dropped += len(docs) - len(valid)
            docs = valid
        groups.append(Group(int(m.group(1)), m.group(2).lower(), docs, m.group(4).strip()))
    if not groups:
        return Parsed([], False, "no consolidated groups found")
    return Parsed(groups, dropped == 0, f"dropped {dropped} out-of-range document numbers" if dropped else None)


_CANDIDATE = re.compile(r"^\s*(?:group|document)\s*(\d+)\s*[:\-]\s*(?:answer\s*:?\s*)?(.+?)\s*"
                        r"\(\s*confidence\s*:?\s*([0-9.]+\s*%?|high|medium|low)\s*\)", re.I | re.M)
_WORD_CONF = {"high": 0.9, "medium": 0.6, "low": 0.3}


def parse_candidates(text: str) -> Parsed[list[tuple[int, str, float]]]:
    """Astute step 2: ``Group k: answer X (confidence 0.67)`` -> [(k, X, confidence in [0,1])]."""
    out, notes = [], []
    for m in _CANDIDATE.finditer(text or ""):
        raw_conf = m.group(3).strip().lower()
        if raw_conf in _WORD_CONF:
            conf = _WORD_CONF[raw_conf]
            notes.append(f"word confidence {raw_conf!r} mapped to {conf}")
        else:
            conf = _number(raw_conf.rstrip("%").strip()) or 0.0
            if raw_conf.endswith("%") or conf > 1:
                conf /= 100
                notes.append("percentage confidence normalised")
        out.append((int(m.group(1)), _clean(m.group(2)), max(0.0, min(1.0, conf))))
    if not out:
        return Parsed([], False, "no candidate answers with confidence found")
    return Parsed(out, not notes, "; ".join(notes) or None)


def parse_tagged_answers(text: str) -> Parsed[list[str]]:
    """``<ANSWER> x </ANSWER>`` (one or more) -> answers; falls back to an ``All Correct Answers`` line."""
    tagged = [_clean(a) for a in re.findall(r"<ANSWER>(.*?)</ANSWER>", text or "", re.S | re.I)]
    found = [a for a in tagged if a and not is_idk(a)]
    if tagged:
        return Parsed(found)  # an explicit <ANSWER>I don't know</ANSWER> is a well-formed abstention
    fallback = parse_all_correct_answers(text)
    if fallback.value[0]:
        return Parsed(fallback.value[0], False, "no <ANSWER> tag; used the 'All Correct Answers' line")
    return Parsed([], False, "no <ANSWER> tag found")


PARSERS: dict[str, Any] = {
    "short_answer": parse_short_answer,
    "yes_no": parse_yes_no,
    "agent_response": parse_agent_response,
    "all_correct_answers": parse_all_correct_answers,
    "answer_evidence": parse_answer_evidence,
    "keep_discard": parse_keep_discard,
    "probability": parse_probability,
    "soft_bias": parse_soft_bias,
    "numbered_list": parse_numbered_list,
    "option": parse_option,
    "passages": parse_passages,
    "groups": parse_groups,
    "candidates": parse_candidates,
    "tagged_answers": parse_tagged_answers,
}
