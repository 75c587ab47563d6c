"""Readers of BRIDGE's replies: the Soft Bias Allocator's probabilities, the numbered lists of sub-queries,
generated answers and reflections, and the responder's option. Each never raises: ``Parsed(value, ok, note)``
(``backend.llm.formats``), ``ok`` False when it fell back and ``note`` saying how. BRIDGE's ``TaskSpec`` names
these readers; ``method.py`` calls them."""

from __future__ import annotations

import re

from backend.llm.formats import Parsed


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def parse_soft_bias(text: str, **_fields) -> Parsed[tuple[float, float] | None]:
    """The allocator's reply -> (p_retrieve, p_direct), renormalised to sum to 1."""
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


def parse_reflection(text: str, expected: int | None = None) -> Parsed[tuple[str, list[str]]]:
    """A reflection reply -> (the analysis before "New questions", the numbered new questions after it)."""
    reply = text or ""
    analysis = reply.split("New questions", 1)[0].removeprefix("Analysis:").strip()
    body = reply.split("New questions", 1)[1] if "New questions" in reply else reply
    questions = parse_numbered_list(body, expected)
    return Parsed((analysis, questions.value), questions.ok, questions.note)


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
