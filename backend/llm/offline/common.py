"""Helpers shared by the offline model's task handlers: reading passages, grouping answers, memory,
sources and a crude notion of "which entity a text is about".

Everything is a pure function of its arguments (no randomness, no ground truth).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from backend.answers import cluster, normalize
from backend.llm.formats import is_idk
from backend.llm.reader import Reading, analyse, atype, read_batch

Fields = dict[str, Any]

#: Source labels read as the model's own memory; anything else (external, a website...) is external.
MEMORY_SOURCES = frozenset({"memory", "internal", "generated", "parametric", "llm"})

_STOP = frozenset("""a an the of in on at to for from by with and or but is are was were be been being
do does did has have had it its this that these those which who whom whose what when where why how
not no as into than then so such""".split())


# --------------------------------------------------------------------------------------------- inputs

def passages(fields: Fields) -> list[dict[str, Any]]:
    """The passages as dicts (a bare string is accepted as a passage with no id/source)."""
    out = []
    for p in fields.get("passages") or []:
        out.append(dict(p) if isinstance(p, dict) else {"id": "", "source": "", "text": str(p)})
    return out


def passage_texts(fields: Fields) -> list[str]:
    return [str(p.get("text") or "") for p in passages(fields)]


def read_texts(question: str, texts: list[str]) -> list[Reading]:
    """One reading per text, batched (one embedding call for all)."""
    return read_batch([(question, t) for t in texts]) if texts else []


def type_gap(readings: list[Reading], question: str) -> str | None:
    """Why nothing answers, when it is that no passage holds an answer of the question's type: the reader's reason
    ("no person named", "no date given"); None when some passage answers or abstained for another reason."""
    q = analyse(question)
    if not readings or q.qtype not in atype.CHECKED:
        return None
    reason = atype.missing(q.qtype, question)
    return reason if all(r.answer is None and r.signals.get("reason") == reason for r in readings) else None


def read_passages(fields: Fields) -> list[Reading]:
    """One reading per passage, batched (one embedding call for all)."""
    return read_texts(fields["question"], passage_texts(fields))


def memory_text(fields: Fields) -> str | None:
    """The simulated internal knowledge, or None when the model "doesn't know" (absent, empty, "None")."""
    memory = fields.get("memory")
    if memory is None:
        return None
    text = str(memory).strip()
    return None if is_idk(text) else text


_RECENCY = re.compile(r"\b(latest|most\s+recent|current|currently|newest|as\s+of)\b", re.I)
_YEAR = re.compile(r"\b(\d{4})\b")
RECENT_YEAR = 2023


def recency_cue(question: str) -> str | None:
    """The word (or recent year) by which a question asks for up-to-date information, else None: a model's
    memory is dated, so such a question favours retrieved passages."""
    m = _RECENCY.search(question)
    if m:
        return m.group(1).lower()
    years = [int(y) for y in _YEAR.findall(question) if int(y) >= RECENT_YEAR]
    return str(years[0]) if years else None


def is_memory_source(source: Any) -> bool:
    s = str(source or "").strip().lower()
    return s in MEMORY_SOURCES or s.startswith("memory")


def known(answer: str | None) -> bool:
    return bool(answer) and not is_idk(answer)


def as_int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def sentence(text: str) -> str:
    """One line ending in exactly one full stop (or ! / ?)."""
    t = one_line(text)
    return t if not t or t[-1] in ".!?" else t + "."


# ------------------------------------------------------------------------------------ answer groups

@dataclass(frozen=True)
class AnswerGroup:
    """Items (indices into the caller's list) whose answers cluster together."""

    answer: str          # representative: the most frequent normalised form, ties first seen
    members: list[int]   # indices into the caller's list, ascending


def group_answers(answers: list[str | None]) -> list[AnswerGroup]:
    """Cluster the known answers (``answers.cluster``); unknowns (None / "I don't know") are left out.
    Groups come in order of their first member."""
    idx = [i for i, a in enumerate(answers) if known(a)]
    groups = []
    for c in cluster([answers[i] for i in idx]):
        members = sorted(idx[j] for j in c)
        forms = Counter(normalize(answers[i]) for i in members)
        top = max(forms.values())
        rep = next(answers[i] for i in members if forms[normalize(answers[i])] == top)
        groups.append(AnswerGroup(str(rep).strip(), members))
    return sorted(groups, key=lambda g: g.members[0])


def best_answer(readings: list[Reading]) -> tuple[str | None, list[int]]:
    """The answer most passages support (ties: summed relevance, then first seen) and its passage indices.
    The answer text is the supporting passages' most relevant wording."""
    groups = group_answers([r.answer for r in readings])
    if not groups:
        return None, []
    best = max(groups, key=lambda g: (len(g.members), sum(readings[i].relevance for i in g.members),
                                      -g.members[0]))
    top = max(best.members, key=lambda i: (readings[i].relevance, -i))
    return readings[top].answer, best.members


def supporting(readings: list[Reading], answer: str | None) -> list[int]:
    """Indices of the readings whose answer clusters with ``answer`` (same rule as ``answers.cluster``)."""
    if not known(answer):
        return []
    return [i for i, r in enumerate(readings) if known(r.answer) and len(cluster([answer, r.answer])) == 1]


def join_numbers(nums: list[int], word: str = "Agent") -> str:
    """[1] -> 'Agent 1'; [1, 3] -> 'Agents 1 and 3'; [1, 2, 4] -> 'Agents 1, 2 and 4'."""
    nums = list(nums)
    if not nums:
        return f"no {word.lower()}s"
    if len(nums) == 1:
        return f"{word} {nums[0]}"
    return f"{word}s " + ", ".join(map(str, nums[:-1])) + f" and {nums[-1]}"


# -------------------------------------------------------------------------------------- entities

_NAME_TOKEN = re.compile(r"[A-Za-z0-9\u00C0-\u024F][\w\u00C0-\u024F'\u2019.&-]*")
_NAME_CONNECT = {"of", "de", "du", "da", "van", "von", "la", "le", "del", "bin", "al"}


def _tokens(text: str) -> list[str]:
    return [w for w in normalize(text).split() if w]


def focus_words(question: str) -> frozenset[str]:
    """Lower-case words of the question's subject (quoted titles and capitalised names), minus stop words."""
    return frozenset(w for f in analyse(question).focus for w in _tokens(f) if w not in _STOP)


def entity_of(text: str, question: str) -> tuple[str, ...] | None:
    """The name a text gives the question's subject: the longest capitalised run sharing a word with
    the question's subject ("Michael Irwin Jordan" for "When was Michael Jordan born?"). None when the
    question has no recognisable subject or the text names none."""
    focus = focus_words(question)
    if not focus:
        return None
    best: list[str] = []
    run: list[str] = []

    def flush():
        nonlocal best
        while run and run[-1].lower() in _NAME_CONNECT:
            run.pop()
        toks = [w for t in run for w in _tokens(t)]
        if toks and focus & set(toks) and len(toks) > len(best):
            best = toks
        run.clear()

    prev_end = 0
    for m in _NAME_TOKEN.finditer(text or ""):
        t = m.group(0)
        if not re.fullmatch(r"[A-Z]\.", t):   # keep initials ("Michael I. Jordan") whole
            t = t.rstrip(".'\u2019")
        if run and text[prev_end:m.start()].strip(" -"):   # punctuation such as "(" or "," ends a name
            flush()
        prev_end = m.start() + len(t)
        if t[:1].isupper():
            run.append(t)
        elif run and t.lower() in _NAME_CONNECT:
            run.append(t)
        else:
            flush()
    flush()
    return tuple(best) or None


def same_entity(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> bool:
    """Unknown entities count as the same; known ones are the same when one name's words contain the other's
    ("Michael Jordan" ~ "Michael Jeffrey Jordan", but not "Michael Irwin Jordan" ~ "Michael Jeffrey Jordan")."""
    if not a or not b:
        return True
    return set(a) <= set(b) or set(b) <= set(a)


def entity_name(entity: tuple[str, ...] | None) -> str:
    return " ".join(w.capitalize() for w in entity) if entity else ""


def content_words(text: str) -> set[str]:
    return {w for w in _tokens(text) if w not in _STOP}
