"""Tolerant readers of Astute RAG's three outputs (docs/methods/astute.md §3.6, P4, P7-P10). None of them raises: a
malformed reply degrades to fewer groups, missing confidences or a fallback answer, and every fallback is
written down in the returned notes.

Fallback order:

* generated passages (``split_generation``, reading with ``backend.llm.formats.parse_passages``, the one reader
  of the general ``generate_passage`` task, which BRIDGE's K_int shares): ``<DOC>`` blocks; else, when m̂ > 1,
  ``Document k:`` / ``Passage k:`` headers or blank lines; else the whole reply as one passage. A passage that is
  an "I don't know" statement is dropped (P4); passages past m̂ are dropped.
* groups (``parse_consolidation``): ``<GROUP>`` / ``<CANDIDATE>`` / ``<EXCLUDED>`` tags (``structured``);
  else ``Document k`` / ``Group k`` header blocks in Step 1 (``lenient``), with citations, a stated source
  and a confidence read from each block and the candidates from Step 2 lines linked by group id (by order
  when they name none); else one pseudo-group ``unparsed`` holding the reply (``failed``).
* confidence (``confidence``): ``85%`` -> 0.85, ``8/10`` -> 0.8, ``0.7`` -> 0.7, a bare number in (1, 100]
  -> /100, high / medium / low -> 0.9 / 0.6 / 0.3 (flagged heuristic), anything else -> None.
* the answer (``parse_answer``): the last non-empty ``<ANSWER>`` tag (all of them in multi mode; an
  unclosed tag at the end of a cut-off reply counts) -> a ``Final Answer:`` / ``Answer:`` label (in Step 3
  when there is one) -> the final round's candidate with the highest confidence -> the last non-empty line
  -> nothing (``failed``). An "I don't know" answer is an abstention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from backend.answers import cluster, contains_match, normalize
from backend.llm.formats import IDK, is_idk, parse_passages
from backend.schema import AstuteDropped, AstuteGeneration, AstuteGroup, AstutePassage

WORD_CONFIDENCE = {"high": 0.9, "medium": 0.6, "moderate": 0.6, "low": 0.3}


# ------------------------------------------------------------------------------------------- generation

def split_generation(raw: str, m_hat: int, drop_idk: bool = True) -> AstuteGeneration:
    """The passages the model generated from memory (call 1): at most ``m_hat``, "I don't know" dropped (P4),
    read by ``parse_passages`` and kept in the trace."""
    read = parse_passages(raw or "", max_passages=m_hat, drop_idk=drop_idk).value
    return AstuteGeneration(raw=raw or "", kept=read.kept, hedged=read.hedged,
                            dropped=[AstuteDropped(text=text, reason=why) for text, why in read.dropped])


# ------------------------------------------------------------------------------------------- confidence

_CONF_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(%|/\s*100\b|/\s*10\b)?")
_CONF_IN_TEXT = re.compile(r"confidence(?:\s+score)?\s*(?:level|of|is|=|:|-|\(|\*)*\s*"
                           r"(\d+(?:\.\d+)?\s*(?:%|/\s*100\b|/\s*10\b)?|high|medium|moderate|low)", re.I)


def confidence(raw: str | None) -> tuple[float | None, bool]:
    """(normalised value in [0, 1] or None, heuristic?) for a confidence as the model wrote it."""
    text = (raw or "").strip().lower()
    if text in WORD_CONFIDENCE:
        return WORD_CONFIDENCE[text], True
    m = _CONF_NUMBER.fullmatch(text) or _CONF_NUMBER.match(text)
    if not m:
        return None, False
    value, unit = float(m.group(1)), (m.group(2) or "").replace(" ", "")
    if unit == "%" or unit == "/100" or (not unit and 1 < value <= 100):
        value /= 100
    elif unit == "/10":
        value /= 10
    return (round(value, 4), False) if 0 <= value <= 1 else (None, False)


def _set_confidence(group: AstuteGroup, raw: str | None) -> None:
    if raw is None:
        return
    group.confidence_raw = raw.strip()
    group.confidence, group.confidence_heuristic = confidence(raw)


# ---------------------------------------------------------------------------------------- consolidation

@dataclass
class Consolidation:
    groups: list[AstuteGroup]
    excluded: list[int]
    split: list[int]
    conflict: bool
    parse: str                    # structured | lenient | failed
    notes: list[str] = field(default_factory=list)


_ATTR = r'(\w+)\s*=\s*"([^"]*)"'
_GROUP_TAG = re.compile(r"<GROUP\b([^>]*)>(.*?)(?:</GROUP>|(?=<GROUP\b)|\Z)", re.S | re.I)
_CANDIDATE_TAG = re.compile(r"<CANDIDATE\b([^>]*)>(.*?)</CANDIDATE>", re.S | re.I)
_EXCLUDED_TAG = re.compile(r"<EXCLUDED>(.*?)</EXCLUDED>", re.S | re.I)
_HEADER = re.compile(r"^\s*(?:[-*#>•]+\s*)?(?:\*\*)?\s*(?:new\s+|consolidated\s+)?(?:document|group|doc)\b\s*#?\s*"
                     r"([A-Za-z]?\d+|[A-Z])\b\s*(?:\*\*)?", re.I)
_STEP = re.compile(r"^\W*step\s*(\d)\b[^:\n]*:?", re.I | re.M)
_NOTHING_RELEVANT = re.compile(r"\bno (?:document|passage)s?\b|\bnone of the (?:documents|passages)\b", re.I)
_CITATION = re.compile(r"(?:original\s+)?(?:documents?|docs?|passages?|sources?)\s*(?:numbers?|ids?)?\s*[:#=]?\s*"
                       r"(#?\d+(?:\s*(?:,|and|&|/|-|–|to)\s*#?\d+)*)", re.I)
_STATED_SOURCE = re.compile(r"source\s*[:=]\s*\"?([^\";)\n]+)", re.I)


def _numbers(text: str) -> list[int]:
    """"1, 3-5 and 7" -> [1, 3, 4, 5, 7]."""
    out: list[int] = []
    for a, b in re.findall(r"(\d+)(?:\s*(?:-|–|to)\s*(\d+))?", text):
        lo, hi = int(a), int(b or a)
        out.extend(range(lo, hi + 1) if lo <= hi and hi - lo < 100 else [lo, int(b or a)])
    return list(dict.fromkeys(out))


def _stated_source(text: str) -> str | None:
    m = _STATED_SOURCE.search(text)
    words = (m.group(1) if m else text).lower()
    mem = bool(re.search(r"memor|internal|generated|parametric", words))
    ext = bool(re.search(r"extern|retriev|web|search", words))
    if re.search(r"\bboth\b|\bmixed\b", words) or (mem and ext):
        return "both"
    return "memory" if mem else "external" if ext else (m.group(1).strip() if m else None)


def _sections(raw: str) -> dict[int, str]:
    """Text per "Step k" header; {0: whole text} when there is none."""
    marks = list(_STEP.finditer(raw))
    if not marks:
        return {0: raw}
    out = {0: raw[:marks[0].start()]}
    for m, nxt in zip(marks, marks[1:] + [None]):
        text = raw[m.end(): nxt.start() if nxt else len(raw)]
        head, _, rest = text.partition("\n")
        if len(head.split()) <= 6 and not re.search(r"[.<>\d]", head):  # a title ("Select the final answer")
            text = rest
        out[int(m.group(1))] = text
    return out


def _structured(raw: str) -> tuple[list[AstuteGroup], list[int] | None] | None:
    tags = _GROUP_TAG.findall(raw)
    if not tags:
        return None
    groups = []
    for k, (attrs, body) in enumerate(tags, start=1):
        a = {key.lower(): v for key, v in re.findall(_ATTR, attrs)}
        g = AstuteGroup(id=a.get("id") or str(k), summary=body.strip(), documents=_numbers(a.get("docs", "")),
                        stated_source=_stated_source(f"source: {a['source']}") if "source" in a else None)
        groups.append(g)
    by_id = {g.id.lower(): g for g in groups}
    for k, (attrs, body) in enumerate(_CANDIDATE_TAG.findall(raw)):
        a = {key.lower(): v for key, v in re.findall(_ATTR, attrs)}
        g = by_id.get(a.get("group", "").lower()) or (groups[k] if k < len(groups) else None)
        if g is not None:
            g.answer = body.strip() or None
            _set_confidence(g, a.get("confidence"))
    excluded = _EXCLUDED_TAG.findall(raw)
    return groups, (_numbers(" ".join(excluded)) if excluded else None)


def _candidate_text(rest: str) -> tuple[str | None, str | None]:
    """(answer, raw confidence) from the rest of a Step 2 line after its group id."""
    conf = _CONF_IN_TEXT.search(rest)
    text = rest[:conf.start()] + " " + rest[conf.end():] if conf else rest
    text = re.sub(r"\(\s*\)|\*\*", " ", text)
    text = re.sub(r"^\W*(?:proposed\s+|possible\s+|candidate\s+)?answer\s*(?:is)?\s*[:\-]?", "", text.strip(" :-–\t"),
                  flags=re.I)
    text = text.strip(" :;,.-–()[]\t")
    return (text or None), (conf.group(1) if conf else None)


def _blocks(section: str) -> list[tuple[str, str]]:
    """(id, block text after the header) per ``Document k`` / ``Group k`` header in a section."""
    out: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        m = _HEADER.match(line)
        if m:
            out.append((m.group(1), [line[m.end():]]))
        elif out and line.strip():
            out[-1][1].append(line)
    return [(gid, "\n".join(lines).strip()) for gid, lines in out]


def _lenient(raw: str) -> list[AstuteGroup]:
    sections = _sections(raw)
    step1 = sections.get(1, sections[0] if len(sections) == 1 else sections.get(0, ""))
    groups: list[AstuteGroup] = []
    for gid, block in _blocks(step1):
        cites = [n for m in _CITATION.finditer(block) for n in _numbers(m.group(1))]
        earlier = next((g for g in groups if g.id.lower() == gid.lower()), None)
        if earlier is not None and not cites:  # "Group 1: answer (confidence)" after the groups, no Step headers
            _apply_candidate(earlier, *_candidate_text(block))
            continue
        summary = re.sub(r"^\s*\([^)]*\)\s*", "", block)          # the "(source: ...; documents ...)" note
        summary = re.sub(r"confidence[^\n.;]*", "", summary, flags=re.I).strip(" :-–*\n")
        g = AstuteGroup(id=gid, summary=summary, documents=list(dict.fromkeys(cites)),
                        stated_source=_stated_source(block))
        answer = re.search(r"\banswer\s*[:\-]\s*([^\n;]+)", block, re.I)
        if answer:
            g.answer = _candidate_text(answer.group(1))[0]
        conf = _CONF_IN_TEXT.search(block)
        _set_confidence(g, conf.group(1) if conf else None)
        groups.append(g)
    if sections.get(2):
        _link_candidates(groups, sections[2])
    return groups


def _link_candidates(groups: list[AstuteGroup], step2: str) -> None:
    by_id = {g.id.lower(): g for g in groups}
    loose = []
    for line in step2.splitlines():
        if not line.strip():
            continue
        m = _HEADER.match(line)
        answer, conf = _candidate_text(line[m.end():] if m else line)
        if answer is None and conf is None:
            continue
        g = by_id.get(m.group(1).lower()) if m else None
        if g is None:
            loose.append((answer, conf))
        else:
            _apply_candidate(g, answer, conf)
    unanswered = [g for g in groups if g.answer is None]
    for g, (answer, conf) in zip(unanswered, [c for c in loose if c[1] is not None]):
        _apply_candidate(g, answer, conf)


def _apply_candidate(group: AstuteGroup, answer: str | None, conf: str | None) -> None:
    group.answer = answer or group.answer
    _set_confidence(group, conf)


def parse_consolidation(raw: str, passages: list[AstutePassage]) -> Consolidation:
    """The groups of one consolidation (a p_con reply, or Step 1-2 of the p_ans reply) against D0."""
    raw = raw or ""
    notes: list[str] = []
    structured = _structured(raw)
    if structured is not None:
        groups, excluded_tag = structured
        mode = "structured"
    else:
        groups, excluded_tag = _lenient(raw), None
        mode = "lenient" if groups else "failed"
    if not groups and _NOTHING_RELEVANT.search(raw):
        notes.append("the model found no relevant document")
        return Consolidation([], [p.number for p in passages], [], False, mode if structured else "lenient", notes)
    if not groups:
        notes.append("no consolidated groups could be read; the whole reply is kept as one unparsed group")
        groups = [AstuteGroup(id="unparsed", summary=raw.strip())] if raw.strip() else []
        return Consolidation(groups, [], [], False, "failed", notes)
    _check(groups, passages, notes)
    cited = [n for g in groups for n in g.documents]
    numbers = [p.number for p in passages]
    excluded = sorted(set(numbers) - set(cited) | set(n for n in (excluded_tag or []) if n in numbers))
    split = sorted({n for n in cited if cited.count(n) > 1})
    answers = [g.answer for g in groups if g.answer and not is_idk(g.answer)]
    # with candidate answers: do they differ? A p_con round proposes none; there, consistent passages share a
    # group by the prompt's own rule, so two groups mean conflicting information
    conflict = len(cluster(answers)) > 1 if answers else len(groups) > 1
    return Consolidation(groups, excluded, split, conflict, mode, notes)


def _check(groups: list[AstuteGroup], passages: list[AstutePassage], notes: list[str]) -> None:
    """P8: drop citations of passages that do not exist, renumber duplicate ids, derive each group's source."""
    origin = {p.number: p.origin for p in passages}
    seen: dict[str, int] = {}
    for g in groups:
        key = g.id.lower()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            notes.append(f"two groups are both called {g.id!r}; the second is shown as {g.id}#{seen[key]}")
            g.id = f"{g.id}#{seen[key]}"
        bad = [n for n in g.documents if n not in origin]
        if bad:
            g.invalid_citations = bad
            g.documents = [n for n in g.documents if n in origin]
            notes.append(f"group {g.id} cites document{'s' if len(bad) > 1 else ''} {', '.join(map(str, bad))}, "
                         f"which {'do' if len(bad) > 1 else 'does'} not exist (there are {len(passages)})")
        kinds = {origin[n] for n in g.documents}
        g.source = "unknown" if not kinds else "mixed" if len(kinds) > 1 else kinds.pop()
        if not g.documents:
            notes.append(f"group {g.id} cites no document, so its source is unknown")
        if g.answer is not None and g.confidence is None:
            raw = f" ({g.confidence_raw!r})" if g.confidence_raw else ""
            notes.append(f"group {g.id}: no readable confidence{raw}")
        if g.confidence_heuristic:
            notes.append(f"group {g.id}: the confidence {g.confidence_raw!r} is a word, read as {g.confidence}")


# ---------------------------------------------------------------------------------------------- answer

@dataclass
class FinalAnswer:
    answers: list[str]
    how: str                      # tag | label | top_candidate | last_line | failed
    rationale: str
    notes: list[str] = field(default_factory=list)


_ANSWER_TAG = re.compile(r"<ANSWER>(.*?)</ANSWER>", re.S | re.I)
_LABEL = re.compile(r"^\W*(?:final\s+answers?|answers?)\s*[:\-]\s*(.+)$", re.I | re.M)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip("*\"'` ").rstrip(".").strip()


def _split_list(text: str) -> list[str]:
    return [a for a in (_clean(x) for x in re.split(r";|\n|\band\b(?=[^,]*$)|,(?![^()]*\))", text)) if a]


def parse_answer(raw: str, groups: list[AstuteGroup], answer_mode: str = "single") -> FinalAnswer:
    """The final answer(s) of the p_ans reply, with the fallback used and the Step 3 rationale."""
    raw = raw or ""
    notes: list[str] = []
    sections = _sections(raw)
    step3 = re.sub(r"^[ \t]*<ANSWER>[^\n]*?</ANSWER>[ \t]*$", "", sections.get(3, ""), flags=re.I | re.M)
    rationale = _ANSWER_TAG.sub(lambda m: m.group(1), step3).strip()
    tags = [_clean(t) for t in _ANSWER_TAG.findall(raw)]
    tail = re.search(r"<ANSWER>((?:(?!</?ANSWER>).)*)\Z", raw, re.S | re.I)  # cut off inside the tag
    if tail and _clean(tail.group(1)):
        tags.append(_clean(tail.group(1)))
        notes.append("the last <ANSWER> tag is not closed (the reply may be cut off); its text was used")
    tags = [t for t in tags if t]
    if tags:
        picked = tags if answer_mode == "multi" else tags[-1:]
        if answer_mode == "single" and len(set(map(normalize, tags))) > 1:
            notes.append(f"{len(tags)} different <ANSWER> tags in single-answer mode; the last one was used")
        return FinalAnswer(_known(picked), "tag", rationale, notes)
    where = sections.get(3) or raw
    labels = _LABEL.findall(where)
    if labels:
        notes.append("no <ANSWER> tag; the answer was read from an 'Answer:' line")
        value = _clean(labels[-1])
        return FinalAnswer(_known(_split_list(value) if answer_mode == "multi" else [value]), "label", rationale, notes)
    scored = [g for g in groups if g.answer and g.confidence is not None]
    if scored:
        best = max(scored, key=lambda g: g.confidence)
        notes.append(f"no <ANSWER> tag or 'Answer:' line; took group {best.id}'s candidate, the most confident")
        return FinalAnswer(_known([best.answer]), "top_candidate", rationale, notes)
    lines = [ln for ln in raw.splitlines() if ln.strip()]
    if lines:
        notes.append("no <ANSWER> tag, 'Answer:' line or scored candidate; took the reply's last line")
        return FinalAnswer(_known([_clean(lines[-1])]), "last_line", rationale, notes)
    notes.append("the reply is empty: no answer")
    return FinalAnswer([], "failed", rationale, notes)


def _known(answers: list[str]) -> list[str]:
    """Answers minus "I don't know" (an abstention) and repeats."""
    out: list[str] = []
    for a in answers:
        if a and not is_idk(a) and normalize(a) not in {normalize(b) for b in out} and normalize(a) != normalize(IDK):
            out.append(a)
    return out


def answer_group(answer: str, groups: list[AstuteGroup]) -> AstuteGroup | None:
    """The group whose candidate equals or contains the answer (either way); ties: the more confident."""
    matching = [g for g in groups if g.answer and contains_match(g.answer, answer)]
    return max(matching, key=lambda g: (g.confidence if g.confidence is not None else -1.0), default=None)


# ----------------------------------------------------------------------------------- the TaskSpec readers

def passages_of(passages: list[dict] | None) -> list[AstutePassage]:
    """D0 back from a call's ``passages`` field (``method.passages_field``): numbered from 1 in prompt order,
    ``memory`` passages internal, the others external."""
    return [AstutePassage(number=k, origin="internal" if p.get("source") == "memory" else "external",
                          text=p.get("text") or "") for k, p in enumerate(passages or [], start=1)]


def read_consolidation(text: str, passages: list[dict] | None = None, **_fields) -> Consolidation:
    """The ``consolidate`` task's reader: ``parse_consolidation`` against the passages the call was given."""
    return parse_consolidation(text, passages_of(passages))


def read_final_answer(text: str, passages: list[dict] | None = None, answer_mode: str = "single",
                      **_fields) -> FinalAnswer:
    """The ``consolidate_answer`` task's reader, as ``AstuteRAG`` reads the reply: its groups
    (``parse_consolidation``), then the final answer(s) (``parse_answer``)."""
    return parse_answer(text, read_consolidation(text, passages).groups, answer_mode)
