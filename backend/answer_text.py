"""Answers inside text: find an answer where a passage states it, replace it by another without leaking the old
one, tell a name from a phrase, type a question by its wh-phrase, and make plausible wrong numbers.

Used at run time by the what-if edits and the attack (``backend.whatif``) and at build time by the sample builders
(``backend.sample``). Answer substitution follows RA-RAG §5's entity substitution; every substituted passage is
checked so that the replaced answer does not leak (docs/methods/ra_rag.md).
"""

from __future__ import annotations

import re

import numpy as np

#: a number as answers write it ("3,559", "1.5")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_WH = ("how many", "how much", "how long", "how old", "who", "whom", "whose", "when", "where", "which",
       "what", "how")
_SMALL = {"of", "the", "and", "de", "da", "van", "von", "la", "le", "in", "on", "at", "for", "a", "an"}
_SKIP = {"is", "was", "are", "were", "the", "a", "an", "does", "did", "do", "of", "type", "kind", "primary",
         "main", "modern", "day"}


# --- text helpers ---------------------------------------------------------------------------------

def _pattern(s: str) -> re.Pattern[str]:
    # Word-bounded, case-insensitive: "Football" matches "football team" but not "footballer".
    return re.compile(r"(?<!\w)" + re.escape(s.strip()) + r"(?!\w)", re.IGNORECASE)


def norm(s: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", s.lower()).split())


def _cores(answer: str) -> list[str]:
    """Number tokens of an answer that are distinctive enough to leak it ("3,559" of "3,559 people")."""
    return [t.rstrip(",") for t in NUMBER.findall(answer) if len(t.rstrip(",")) >= 3]


def mentions(text: str, answer: str, unless: str = "") -> bool:
    """Does ``text`` state ``answer`` (whole string, or one of its distinctive numbers that ``unless``
    does not share: "2018" does not tell "March 23, 2018" from "April 20, 2018")?"""
    cores = set(_cores(answer)) - set(_cores(unless))
    return bool(_pattern(answer).search(text)) or any(_pattern(c).search(text) for c in sorted(cores))


def substitute(text: str, old: str, new: str) -> str | None:
    """``text`` with every mention of ``old`` replaced by ``new``; None if ``old`` still leaks or ``new``
    does not appear (numbers are swapped token by token, so "3,559" in a table follows "3,559 people")."""
    out = _pattern(old).sub(lambda _: new.strip(), text)
    old_c, new_c = _cores(old), _cores(new)
    if len(old_c) == len(new_c):
        for o, n in zip(old_c, new_c):
            if o != n:
                out = _pattern(o).sub(n, out)
    if out == text or mentions(out, old, unless=new) or not _pattern(new).search(out):
        return None
    return out


def sentences(text: str) -> list[str]:
    # Split after . ! ? before a capital, but not after an initial ("A. A. Milne", "U.S.").
    return [s.strip() for s in re.split(r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[A-Z\"'(])", text) if s.strip()]


_JUNK = re.compile(r"\[ ?edit ?\]|\||Wikipedia|Privacy policy|Cookie|Toggle|Retrieved|ISBN", re.IGNORECASE)


def readable(passage: str, max_words: int = 60) -> bool:
    """A passage fit to show alone: 8–60 words, no page furniture, not a table of numbers."""
    words = passage.split()
    numeric = sum(bool(re.fullmatch(r"[\W\d]+", w)) for w in words)
    return 8 <= len(words) <= max_words and not _JUNK.search(passage) and numeric <= 0.25 * len(words)


def short_passage(text: str, answer: str) -> str | None:
    """The sentence stating ``answer`` (plus the next one when very short), for 1–2 sentence passages."""
    sents = sentences(text)
    for i, s in enumerate(sents):
        if not mentions(s, answer):
            continue
        passage = f"{s} {sents[i + 1]}" if len(s.split()) < 12 and i + 1 < len(sents) else s
        if readable(passage):
            return passage
    return None


def is_name(answer: str) -> bool:
    """Title-like answers ("Frank Oz", "Rugby Union") vs common phrases ("gangster thriller")."""
    words = [w for w in re.findall(r"[^\W\d_][\w'-]*", answer) if w.lower() not in _SMALL]
    return bool(words) and all(w[0].isupper() for w in words)


def question_keys(question: str) -> list[str]:
    """Answer-type keys, specific to general: the wh-word with its next 3 words, with its next 2 unless they
    start with a function word, then the bare who/when/where (a type on its own) or, for what/which, the
    type noun ("what sport is ..." -> "what … sport")."""
    toks = norm(question).split()
    for start, t in enumerate(toks):
        if t in _WH or " ".join(toks[start:start + 2]) in _WH:
            break
    else:
        return []
    keys = [" ".join(toks[start:start + 4])]
    if len(toks) > start + 2 and toks[start + 2] not in _SKIP:  # "what sport is", not "what is the"
        keys.append(" ".join(toks[start:start + 3]))
    if toks[start] in ("who", "whom", "when", "where"):
        keys.append(toks[start])
    elif toks[start] in ("what", "which"):
        noun = next((w for w in toks[start + 1:] if w not in _SKIP), None)
        # The type noun follows the wh-word ("what sport is ...") or ends the question ("Jon Hill's profession?").
        for word in (noun, toks[-1] if toks[-2:-1] == ["s"] else None):
            if word and word not in ("name", "other"):  # too generic to type an answer
                keys.append(f"{toks[start]} … {word}")
    return list(dict.fromkeys(keys))


def perturb_number(answer: str, rng: np.random.Generator, k: int) -> list[str]:
    """Up to ``k`` wrong answers made by changing the answer's last number (years shift by a few years,
    small counts by a few units, other numbers scale by 0.5–1.9), keeping the words around it."""
    matches = list(NUMBER.finditer(answer))
    if not matches:
        return []
    m = matches[-1]
    tok = m.group().rstrip(",")
    value = float(tok.replace(",", ""))
    is_year = re.fullmatch(r"1\d{3}|20\d{2}", tok) is not None
    out: list[str] = []
    for _ in range(50):
        if is_year:
            new = int(value) + int(rng.choice([-1, 1])) * int(rng.integers(1, 13))
            new = min(new, 2024)
        elif value < 20 and "." not in tok:
            new = max(1, int(value) + int(rng.choice([-1, 1])) * int(rng.integers(1, 5)))
        else:
            f = float(rng.choice([0.5, 0.6, 0.7, 0.8, 1.25, 1.4, 1.6, 1.9]))
            new = round(value * f, 1) if "." in tok else int(round(value * f * (1 + rng.uniform(-0.05, 0.05))))
        text = f"{new:,}" if "," in tok else str(new)
        cand = answer[:m.start()] + text + answer[m.start() + len(tok):]
        if norm(cand) != norm(answer) and cand not in out:
            out.append(cand)
        if len(out) == k:
            break
    return out
