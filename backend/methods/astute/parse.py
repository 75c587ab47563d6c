"""Tolerant readers of Astute RAG's three outputs (docs/methods/astute.md §3.6, P4, P7-P10). None of them raises: a
malformed reply degrades to fewer groups, missing confidences or a fallback answer, and every fallback is
written down in the returned notes. A consolidation and a final answer are ``Parsed`` reads (``backend.llm.formats``):
``exact`` in the format asked for (the tags; ``Document k (source: …; original documents: …)`` blocks and ``Group k:
answer (confidence …)`` lines in paper mode), ``lenient`` when read through what chat models write instead
(Markdown, groups as a numbered list or all on one line, a JSON object, no ``<ANSWER>`` tag…; the note says what),
``unreadable`` when nothing could be read (the note names the method's default).

Fallback order:

* generated passages (``split_generation``, reading with ``backend.llm.formats.parse_passages``, the one reader
  of the general ``generate_passage`` task, which BRIDGE's K_int shares): ``<DOC>`` blocks; else, when m̂ > 1,
  ``Document k:`` / ``Passage k:`` headers or blank lines; else the whole reply as one passage. A passage that is
  an "I don't know" statement is dropped (P4); passages past m̂ are dropped.
* groups (``parse_consolidation``): ``<GROUP>`` / ``<CANDIDATE>`` / ``<EXCLUDED>`` tags (``structured``);
  else a JSON object with a list of groups; else ``Document k`` / ``Group k`` header blocks in Step 1 (Markdown
  removed, several on one line split apart), or the items of a numbered / bulleted list (``lenient``), with
  citations, a stated source and a confidence read from each block and the candidates from Step 2 lines linked
  by group id (by order when they name none); else one pseudo-group ``unparsed`` holding the reply (``failed``).
* confidence (``confidence``): ``85%`` -> 0.85, ``8/10`` -> 0.8, ``0.7`` -> 0.7, a bare number in (1, 100]
  -> /100, high / medium / low -> 0.9 / 0.6 / 0.3 (flagged heuristic), anything else -> None.
* the answer (``parse_answer``, the tolerant reading): the last non-empty ``<ANSWER>`` tag (all of them in multi
  mode; an unclosed tag at the end of a cut-off reply counts) -> a JSON object's final answer -> a ``Final
  Answer:`` / ``Answer:`` label, the lines under a "Final Answer:" heading, or "the final answer is X" (in Step 3
  when there is one) -> when no group could be read from the reply (it has no structure at all), its last non-empty
  line -> nothing (``failed``: an abstention). Only the model picks: a reply whose groups were read but which names
  no final answer gives no answer; the reader never takes the most confident candidate in its place (it did until
  the two readings were introduced: ``answer_parse="top_candidate"`` in older traces). An "I don't know" answer is
  an abstention.
* the answer, paper reading (``parse_answer_paper``): the ``<ANSWER> … </ANSWER>`` tag only (the paper's one
  fixed format); without it, no answer (the method abstains). Its rules and sources are in its docstring.

Two readings (``backend.methods.reading``; ``AstuteRAG`` decides through ``ctx.readings``): the final answer is a
decision read both ways (``parse_answer`` / ``parse_answer_paper``), compared by its normalised answers. The
consolidation has no literal format in the paper (groups, sources, citations and confidences are free text the
prompt describes; the ``<GROUP>`` tags of ``prompt_mode="structured"`` are ours), so each round's groups are read
by one rule for both readings (``Readings.same``); so are the generated passages (the "I don't know" rule, P4, is
inferred from the paper's passage counts, not stated as a format).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from backend.answers import cluster, contains_match, normalize
from backend.llm import chat_text as ct
from backend.llm.chat_text import has_markup, json_object, plain, table_rows, truncated
from backend.llm.formats import IDK, Parsed, Status, is_idk, parse_passages, refusal
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

@dataclass(frozen=True)
class Consolidation(Parsed[list[AstuteGroup]]):
    """The groups of one consolidation (``value``), read as ``status`` says (``note``: what was assumed, or the
    default used)."""

    excluded: list[int] = field(default_factory=list)
    split: list[int] = field(default_factory=list)
    conflict: bool = False
    parse: str = "failed"         # structured | lenient | failed
    notes: list[str] = field(default_factory=list)

    @property
    def groups(self) -> list[AstuteGroup]:
        return self.value


_ATTR = r'(\w+)\s*=\s*"([^"]*)"'
_GROUP_TAG = re.compile(r"<GROUP\b([^>]*)>(.*?)(?:</GROUP>|(?=<GROUP\b)|\Z)", re.S | re.I)
_CANDIDATE_TAG = re.compile(r"<CANDIDATE\b([^>]*)>(.*?)</CANDIDATE>", re.S | re.I)
_EXCLUDED_TAG = re.compile(r"<EXCLUDED>(.*?)</EXCLUDED>", re.S | re.I)
_HEADER = re.compile(r"^[ \t]*(?:[-*#>•]+[ \t]*)?(?:\*\*[ \t]*)?(?P<new>new\s+|consolidated\s+)?(?P<word>document|group|doc)\b"
                     r"\s*#?\s*(?P<id>[A-Za-z]?\d+|[A-Z])\b\s*(?:\*\*)?", re.I)
#: a header inside a line, after a sentence ("… born in 1869. Document 2 (source: …): …"): groups written on one line
_INLINE_HEADER = re.compile(r"(?<=[.;!?)])[ \t]+(?=(?:new[ \t]+|consolidated[ \t]+)?(?:document|group)[ \t]*#?[ \t]*"
                            r"[A-Za-z]?\d+\b[ \t]*[(:\-–])", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:\(?(?P<n>\d{1,2})[.)]|[-*•])\s+(?P<text>\S.*)$")
_IRRELEVANT = re.compile(r"\birrelevant\b|\bnot\s+relevant\b|\bexclud|\bunrelated\b|\bdoes\s+not\s+(?:answer|mention)",
                         re.I)
_STEP = re.compile(r"^[^\w\n]*step\s*(\d)\b[^:\n]*:?", re.I | re.M)
_NOTHING_RELEVANT = re.compile(r"\bno (?:document|passage)s?\b|\bnone of the (?:documents|passages)\b", re.I)
_CITATION = re.compile(r"(?:original\s+)?(?:documents?|docs?|passages?|sources?)\s*(?:numbers?|ids?)?\s*[:#=]?\s*"
                       r"(#?\d+(?:\s*(?:,\s*and|,|and|&|/|-|–|to)\s*#?\d+)*)", re.I)
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


# a JSON reply: {"groups": [{"documents": [1, 3], "source": "memory", "summary": …, "answer": …, "confidence": …}],
# "final_answer": …}; keys as chat models name them
_JSON_FIELDS = {"id": r"^(?:id|group(?:_?id)?|name|number)$",
                "documents": r"doc|original|citation|passage|^sources?_?(?:ids?|numbers?)$",
                "source": r"^source(?:_?type)?$|^origin$",
                "summary": r"summary|content|text|information|description|consolidated",
                "answer": r"answer|candidate|proposed", "confidence": r"confiden|score"}


def _json_pick(item: dict, what: str):
    return next((v for k, v in item.items() if re.search(_JSON_FIELDS[what], str(k), re.I)), None)


def _json_lists(value, key: str = "") -> list[tuple[str, list[dict]]]:
    """(key, list of objects) at any depth of a JSON value."""
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in _json_lists(v, str(k))]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [(key, value)]
    return []


def _json_groups(raw: str) -> list[AstuteGroup] | None:
    """The groups of a JSON reply (with their candidates and confidences), or None."""
    found = json_object(raw)
    lists = _json_lists(found) if found else []
    items = next((v for k, v in lists if re.search(r"group|document|consolidat|cluster|context", k, re.I)), None)
    if not items:
        return None
    groups = []
    for k, item in enumerate(items, start=1):
        docs = _json_pick(item, "documents")
        source = _json_pick(item, "source")
        g = AstuteGroup(id=str(_json_pick(item, "id") or k), summary=str(_json_pick(item, "summary") or "").strip(),
                        documents=_numbers(" ".join(map(str, docs)) if isinstance(docs, list) else str(docs or "")),
                        stated_source=_stated_source(f"source: {source}") if source else None)
        answer, conf = _json_pick(item, "answer"), _json_pick(item, "confidence")
        g.answer = str(answer).strip() or None if isinstance(answer, (str, int, float)) else None
        _set_confidence(g, str(conf) if conf is not None else None)
        groups.append(g)
    by_id = {g.id.lower(): g for g in groups}
    candidates = next((v for k, v in lists if re.search(r"candidate|proposed|answers", k, re.I) and v is not items), [])
    for k, item in enumerate(candidates):
        ref = next((str(v) for key, v in item.items() if re.search(r"group|^id$", str(key), re.I)), "")
        g = by_id.get(ref.lower()) or by_id.get(re.sub(r"\D", "", ref)) or (groups[k] if k < len(groups) else None)
        answer, conf = _json_pick(item, "answer"), _json_pick(item, "confidence")
        if g is not None and isinstance(answer, (str, int, float)):
            _apply_candidate(g, str(answer).strip() or None, str(conf) if conf is not None else None)
    return groups


def _candidate_text(rest: str) -> tuple[str | None, str | None]:
    """(answer, raw confidence) from the rest of a Step 2 line after its group id."""
    conf = _CONF_IN_TEXT.search(rest)
    text = rest[:conf.start()] + " " + rest[conf.end():] if conf else rest
    text = re.sub(r"\(\s*\)|\*\*", " ", text)
    text = re.sub(r"^\W*(?:proposed\s+|possible\s+|candidate\s+)?answer\s*(?:is)?\s*[:\-]?", "", text.strip(" :-–\t"),
                  flags=re.I)
    text = text.strip(" :;,.-–()[]\t")
    return (text or None), (conf.group(1) if conf else None)


def _one_per_line(text: str) -> str:
    """Groups (or Step 2 candidates) written on one line, one per line (a list item's own number left alone)."""
    lines = []
    for line in text.split("\n"):
        marker = _LIST_ITEM.match(line)
        start = marker.start("text") if marker else 0
        lines.append(line[:start] + _INLINE_HEADER.sub("\n", line[start:]))
    return "\n".join(lines)


def _blocks(section: str) -> list[tuple[str, str]]:
    """(id, block text after the header) per ``Document k`` / ``Group k`` header in a section."""
    out: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        m = _HEADER.match(line)
        if m:
            out.append((m.group("id"), [line[m.end():]]))
        elif out and line.strip():
            out[-1][1].append(line)
    return [(gid, "\n".join(lines).strip()) for gid, lines in out]


def _group_blocks(section: str) -> list[tuple[str, str]]:
    """``_blocks`` minus a header that only says a document is irrelevant ("Document 4 is irrelevant"; P10)."""
    return [(gid, block) for gid, block in _blocks(section)
            if _CITATION.search(block) or not _IRRELEVANT.search(block)]


def _item_header(item: str) -> tuple[str | None, str]:
    """(group id, text) of a list item that opens with a header naming its group (``Group 2``, ``New Document 2``,
    or ``Document 2`` followed by the original documents it cites); else (None, the item): a plain ``Document 2
    (…): …`` item cites document 2."""
    m = _HEADER.match(item)
    if m and (m.group("new") or m.group("word").lower() == "group" or
              re.search(r"original\s+doc|\bdocs?\s*[:=]|documents?\s*[:=]", item[m.end():], re.I)):
        return m.group("id"), item[m.end():]
    return None, item


def _list_blocks(section: str) -> list[tuple[str, str]]:
    """(id, item text) per top-level item of a numbered or bulleted list, when some item cites documents; an item
    that only says documents are irrelevant is no group."""
    items: list[tuple[str, list[str]]] = []
    indent, open_item = None, False
    for line in section.splitlines():
        m = _LIST_ITEM.match(line)
        depth = len(line) - len(line.lstrip())
        if m and (indent is None or depth <= indent):
            indent = depth if indent is None else indent
            gid, text = _item_header(m.group("text"))
            items.append((gid or m.group("n") or str(len(items) + 1), [text]))
            open_item = True
        elif open_item and line.strip() and depth > (indent or 0):    # the item goes on, indented
            items[-1][1].append(line.strip())
        elif line.strip():                                             # text after the list ends the item
            open_item = False
    blocks = [(gid, "\n".join(lines)) for gid, lines in items if not _IRRELEVANT.search(" ".join(lines))]
    return blocks if any(_CITATION.search(text) for _, text in blocks) else []


def _table_blocks(section: str) -> list[tuple[str, str]]:
    """(id, block) per row of a Markdown table of groups (a row needs a documents column), in the shape the header
    blocks have: "(documents …; source: …) summary", then "answer: …" and "confidence: …" lines."""
    out = []
    for k, row in enumerate(table_rows(section), start=1):
        def cell(pattern: str) -> str:
            return next((v for h, v in row.items() if re.search(pattern, h) and v), "")
        docs = cell(r"original|citation|passage") or cell(r"^(?!new|consolidated).*doc")
        if not docs:
            continue
        gid = re.sub(r"^(?:group|new document|document)\s*", "", cell(r"^(?:#|id|no\.?|group|new document)$"),
                     flags=re.I) or str(k)
        block = f"(documents {docs}; source: {cell(r'^source|origin') or '?'}) {cell(r'summary|content|informat|text')}"
        block += "".join(f"\n{name}: {v}" for name, v in (("answer", cell(r"answer|candidate")),
                                                          ("confidence", cell(r"confiden"))) if v)
        out.append((gid, block))
    return out


_SUMMARY_LINE = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?:summary|content|information|consolidated[ \t]+information)"
                           r"[ \t]*[:=][ \t]*(?P<v>\S.*)$", re.I | re.M)
_FIELD_LINE = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?:source|origin|original[ \t]+documents?|documents?|docs?|"
                         r"citations?|confidence(?:[ \t]+score)?|(?:proposed[ \t]+|candidate[ \t]+)?answer)[ \t]*[:=]", re.I)
_LEADING_FIELDS = re.compile(r"^[ \t]*(?:(?:source|original[ \t]+documents?|documents?)[ \t]*:[^;—–\n]*?[;—–][ \t]*)+", re.I)


def _summary(block: str) -> str:
    """A group's summary: its "Summary:" field; else its text without the "(source: …; documents …)" note, the
    field lines (source, documents, confidence, answer) and a leading "Source: …; Original documents: … —"."""
    labelled = _SUMMARY_LINE.search(block)
    if labelled:
        return labelled.group("v").strip()
    text = re.sub(r"^\s*\([^)]*\)\s*", "", block)          # the "(source: ...; documents ...)" note
    text = "\n".join(line for line in text.split("\n") if not _FIELD_LINE.match(line))
    text = _LEADING_FIELDS.sub("", text)
    return re.sub(r"confidence[^\n.;]*", "", text, flags=re.I).strip(" :-–*\n")


def _lenient(text: str) -> tuple[list[AstuteGroup], list[str]]:
    """Groups from ``Document k`` / ``Group k`` blocks (or list items) in Step 1 and their Step 2 candidates; and
    what was assumed to read them."""
    assumed: list[str] = []
    sections = _sections(text)
    step1 = sections.get(1, sections[0] if len(sections) == 1 else sections.get(0, ""))
    blocks = _group_blocks(_one_per_line(step1))
    if len(blocks) > len(_group_blocks(step1)):
        assumed.append("groups written on one line were split at each 'Document k' / 'Group k'")
    if not blocks:
        blocks = _list_blocks(step1)
        if blocks:
            assumed.append("groups read from the items of a list")
    if not blocks:
        blocks = _table_blocks(step1)
        if blocks:
            assumed.append("groups read from the rows of a Markdown table")
    groups: list[AstuteGroup] = []
    for gid, block in blocks:
        cites = [n for m in _CITATION.finditer(block) for n in _numbers(m.group(1))]
        earlier = next((g for g in groups if g.id.lower() == gid.lower()), None)
        if earlier is not None and not cites:  # "Group 1: answer (confidence)" after the groups, no Step headers
            _apply_candidate(earlier, *_candidate_text(block))
            continue
        summary = _summary(block)
        g = AstuteGroup(id=gid, summary=summary, documents=list(dict.fromkeys(cites)),
                        stated_source=_stated_source(block))
        answer = re.search(r"(?<!final )\banswer\s*[:\-]\s*([^\n;]+)", block, re.I)
        if answer:
            g.answer = _candidate_text(answer.group(1))[0]
        conf = _CONF_IN_TEXT.search(block)
        _set_confidence(g, conf.group(1) if conf else None)
        groups.append(g)
    if sections.get(2):
        _link_candidates(groups, sections[2])
    return groups, assumed


def _link_candidates(groups: list[AstuteGroup], step2: str) -> None:
    by_id = {g.id.lower(): g for g in groups}
    loose = []
    for line in _one_per_line(step2).splitlines():
        if not line.strip():
            continue
        item = _LIST_ITEM.match(line)
        gid, rest = _item_header(item.group("text")) if item else (None, line)
        m = None if item else _HEADER.match(line)
        gid = gid or (m.group("id") if m else item.group("n") if item else None)
        answer, conf = _candidate_text(line[m.end():] if m else rest)
        if answer is None and conf is None:
            continue
        g = by_id.get(gid.lower()) if gid else None
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


@ct.bounded
def parse_consolidation(raw: str, passages: list[AstutePassage]) -> Consolidation:
    """The groups of one consolidation (a p_con reply, or Step 1-2 of the p_ans reply) against D0."""
    raw = raw or ""
    notes: list[str] = []
    assumed: list[str] = []
    structured = _structured(raw)
    if structured is not None:
        groups, excluded_tag = structured
        mode = "structured"
    elif (from_json := _json_groups(raw)) is not None:
        groups, excluded_tag, mode = from_json, None, "lenient"
        assumed.append("read from a JSON object")
    else:
        groups, assumed = _lenient(plain(raw))
        if groups and has_markup(raw):
            assumed.insert(0, "Markdown removed")
        excluded_tag, mode = None, "lenient" if groups else "failed"
    if not groups and _NOTHING_RELEVANT.search(raw):
        notes.append("the model found no relevant document")
        return Consolidation(value=[], excluded=[p.number for p in passages], split=[], conflict=False,
                             parse=mode if structured else "lenient", notes=notes)
    if not groups:
        notes.append("no consolidated groups could be read; the whole reply is kept as one unparsed group")
        groups = [AstuteGroup(id="unparsed", summary=raw.strip())] if raw.strip() else []
        return Consolidation(value=groups, status="unreadable",
                             note="no consolidated groups found; the method used its default: the whole reply as "
                                  "one unparsed group (P8)", parse="failed", notes=notes)
    _check(groups, passages, notes)
    cited = [n for g in groups for n in g.documents]
    numbers = [p.number for p in passages]
    excluded = sorted(set(numbers) - set(cited) | set(n for n in (excluded_tag or []) if n in numbers))
    split = sorted({n for n in cited if cited.count(n) > 1})
    answers = [g.answer for g in groups if g.answer and not is_idk(g.answer)]
    # with candidate answers: do they differ? A p_con round proposes none; there, consistent passages share a
    # group by the prompt's own rule, so two groups mean conflicting information
    conflict = len(cluster(answers)) > 1 if answers else len(groups) > 1
    if _cut_off(raw):
        assumed.append("the reply looks cut off at the token limit")
    status: Status = "lenient" if assumed else "exact"
    return Consolidation(value=groups, status=status, note="; ".join(assumed) or None, excluded=excluded, split=split,
                         conflict=conflict, parse=mode, notes=notes)


_STEP_2 = re.compile(r"^[^\w\n]*step\s*2\b", re.I | re.M)


def _cut_off(raw: str) -> bool:
    """Was the reply cut at the token limit? Only what the model wrote after restating the passages counts: Step 1
    quotes documents, and a document may itself be cut mid-sentence or hold an unclosed bracket (RAMDocs' are)."""
    if re.search(r"</ANSWER>\s*\Z", raw, re.I):
        return False
    steps = list(_STEP_2.finditer(raw))
    tail = raw[steps[-1].start():] if steps else raw
    return truncated(tail) or tail.count("(") > tail.count(")")


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

@dataclass(frozen=True)
class FinalAnswer(Parsed[list[str]]):
    """The final answer(s) (``value``; empty: an abstention), how they were found and the Step 3 rationale."""

    how: str = "failed"           # tag | label | last_line | failed (``top_candidate``: older traces only)
    rationale: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def answers(self) -> list[str]:
        return self.value


_ANSWER_TAG = re.compile(r"<ANSWER>(.*?)</ANSWER>", re.S | re.I)
_LABEL = re.compile(r"^[^\w\n]*(?P<final>final[ \t]+answers?|answers?)[ \t]*[:\-][ \t]*(?P<value>\S.*)$", re.I | re.M)
_FINAL_HEADING = re.compile(r"^\W*final[ \t]+answers?[ \t]*:?[ \t]*$", re.I)   # the answers on the lines below
#: "The most reliable answer is 1869." (a Step 3 in words)
_ANSWER_IS = re.compile(r"\b(?:final|correct|best[- ]supported|most\s+(?:accurate|reliable|likely|well[- ]supported)"
                        r"(?:\s+and\s+[\w-]+(?:\s+supported)?)?)\s+answers?\s+(?:is|are)\s*:?\s*(?P<value>[^\n]+?)"
                        r"\s*(?:[.;](?:\s|$)|,\s+(?:supported|backed|which|as|because|since|given|based|according|"
                        r"with|from)\b|$)", re.I | re.M)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip("*\"'` ").rstrip(".").strip()


def _split_list(text: str) -> list[str]:
    return [a for a in (_clean(x) for x in re.split(r";|\n|\band\b(?=[^,]*$)|,(?![^()]*\))", text)) if a]


def _under_final_heading(text: str) -> list[str]:
    """The items of the list (or the one line) under a "Final Answer(s):" heading."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _FINAL_HEADING.match(line)), None)
    items: list[str] = []
    for line in lines[start + 1:] if start is not None else []:
        item = _LIST_ITEM.match(line)
        if item:
            items.append(item.group("text"))
        elif line.strip():
            items = items or [line.strip()]
            break
        elif items:
            break
    return [a for a in map(_clean, items) if a]


def _json_find(value, key: str):
    """The first value under a key matching ``key`` at any depth of a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            if re.search(key, str(k), re.I) and isinstance(v, (str, int, float, list)):
                return v
        for v in value.values():
            found = _json_find(v, key)
            if found is not None:
                return found
    return None


def _json_answers(raw: str) -> list[str] | None:
    """A JSON reply's final answer(s): a "final_answer(s)" key at any depth, else a top-level "answer(s)" key."""
    found = json_object(raw)
    if not found:
        return None
    value = _json_find(found, r"^final[_ ]?answers?$")
    if value is None:
        value = next((v for k, v in found.items() if re.fullmatch(r"answers?", str(k), re.I)), None)
    values = value if isinstance(value, list) else [value] if value is not None else []
    out = [str(v).strip() for v in values if isinstance(v, (str, int, float)) and str(v).strip()]
    return out or None


def _final(answers: list[str], how: str, rationale: str, notes: list[str], status: Status = "lenient") -> FinalAnswer:
    note = "; ".join(notes) or None
    return FinalAnswer(value=_known(answers), status=status, note=note if status != "exact" else None, how=how,
                       rationale=rationale, notes=notes)


def _rationale(raw: str, sections: dict[int, str]) -> str:
    """Step 3's text without a line that is only the ``<ANSWER>`` tag (the tags' contents kept in place)."""
    step3 = re.sub(r"^[ \t]*<ANSWER>[^\n]*?</ANSWER>[ \t]*$", "", sections.get(3, ""), flags=re.I | re.M)
    return _ANSWER_TAG.sub(lambda m: m.group(1), step3).strip()


def _read_groups(groups: list[AstuteGroup]) -> bool:
    """Were groups read from the reply (not only the pseudo-group ``unparsed`` that keeps an unreadable one)?"""
    return any(g.id != "unparsed" for g in groups)


@ct.bounded
def parse_answer(raw: str, groups: list[AstuteGroup], answer_mode: str = "single") -> FinalAnswer:
    """The final answer(s) of the p_ans reply as the model chose them (the tolerant reading), with the fallback
    used and the Step 3 rationale. The reader never chooses for the model: a reply whose groups were read but which
    states no final answer (no tag, label, heading, JSON key or sentence naming it) gives no answer, however
    confident one of its candidates is. ``groups`` only tell such a reply from one with no structure at all, whose
    last line is what it says."""
    raw = raw or ""
    notes: list[str] = []
    sections = _sections(raw)
    rationale = _rationale(raw, sections)
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
        return _final(picked, "tag", rationale, notes, "lenient" if notes else "exact")
    from_json = _json_answers(raw)
    if from_json:
        notes.append("no <ANSWER> tag; the answer was read from a JSON object")
        return _final(from_json if answer_mode == "multi" else from_json[-1:], "label", rationale, notes)
    plain_raw = plain(raw)
    where = plain(sections.get(3) or "") or plain_raw
    labels = _LABEL.findall(where)
    finals = [value for final, value in labels if final.lower().startswith("final")]
    # outside Step 3, several "Answer:" lines are the groups' candidates (Step 2), not the final answer
    labels = finals or [value for _, value in labels if sections.get(3) or len(labels) == 1]
    below = [] if labels else _under_final_heading(where)
    if below:
        notes.append("no <ANSWER> tag; the answer was read from the lines under 'Final Answer:'")
        return _final(below if answer_mode == "multi" else below[:1], "label", rationale, notes)
    said = [m.group("value") for m in _ANSWER_IS.finditer(where)]
    if labels or said:
        notes.append("no <ANSWER> tag; the answer was read from " +
                     ("an 'Answer:' line" if labels else "the sentence naming the final answer"))
        value = _clean((labels or said)[-1])
        return _final(_split_list(value) if answer_mode == "multi" else [value], "label", rationale, notes)
    if _read_groups(groups):
        scored = sum(1 for g in groups if g.answer and g.confidence is not None)
        notes.append("no <ANSWER> tag, 'Answer:' line or sentence naming the final answer: the model chose no final "
                     "answer, and the reader does not choose for it" +
                     (f" (not even the most confident of the {scored} scored candidates)" if scored else "") +
                     "; no answer (abstained)")
        return FinalAnswer(value=[], status="unreadable", note="the reply names no final answer; the method used its "
                           "default: no answer (it abstains)", how="failed", rationale=rationale, notes=notes)
    lines = [ln for ln in plain_raw.splitlines() if ln.strip()]
    if lines and refusal(lines[-1]):
        notes.append("no <ANSWER> tag or 'Answer:' line; the reply's last line declines to answer: read as I don't "
                     "know")
        return _final([], "last_line", rationale, notes)
    if lines:
        notes.append("no <ANSWER> tag, 'Answer:' line or consolidated groups; took the reply's last line")
        return _final([_clean(lines[-1])], "last_line", rationale, notes)
    notes.append("the reply is empty: no answer")
    return FinalAnswer(value=[], status="unreadable", note="the reply is empty; the method used its default: no "
                       "answer (it abstains)", how="failed", rationale=rationale, notes=notes)


#: The paper's answer tag, as its prompt writes it ("Highlight your exact answer within <ANSWER> your answer
#: </ANSWER>"): upper case, closed.
_PAPER_TAG = re.compile(r"<ANSWER>(.*?)</ANSWER>", re.S)


@ct.bounded
def parse_answer_paper(raw: str, answer_mode: str = "single", structured: bool = False) -> FinalAnswer:
    """The final answer(s) as the paper reads them (the paper reading, ``backend.methods.reading``).

    Paper (Astute RAG §3.5, App. A ``p_ans`` Step 3; the output and the metric, §4: "the answer is extracted from the
    special tokens"): the answer is the text inside ``<ANSWER> … </ANSWER>``, the only fixed format of the paper.
    A reply without a closed tag has no answer: the method outputs none, an abstention (``how="failed"``). No label,
    sentence, candidate or last line is read.
    [ours]: several tags in single mode -> the last (the paper asks for one); multi mode (MADAM-RAG App. E's Step 3
    with our one-tag-per-answer instruction) -> every tag; the text is stripped of spaces; "I don't know" (or a
    refusal) in the tag is an abstention, as in the tolerant reading; the tag is matched as the prompt writes it
    (upper case); a reply cut off inside the tag has no answer. ``structured``: the call asked for the project's
    JSON schema (``LLMConfig.structured_output``) instead of the paper's format, so the schema's own
    ``final_answers`` field is read, and nothing else."""
    raw = raw or ""
    rationale = _rationale(raw, _sections(raw))
    if structured:
        found = json_object(raw)
        values = found.get("final_answers") if isinstance(found, dict) else None
        answers = [str(v).strip() for v in values if isinstance(v, (str, int, float)) and str(v).strip()] \
            if isinstance(values, list) else []
        if not answers:
            return FinalAnswer(value=[], status="unreadable", note="no final_answers in the JSON reply; the method "
                               "used its default: no answer (it abstains)", how="failed", rationale=rationale,
                               notes=["structured reply without final_answers: no answer (abstained)"])
        return _final(answers if answer_mode == "multi" else answers[-1:], "label", rationale, [], "exact")
    tags = [t.strip() for t in _PAPER_TAG.findall(raw)]
    tags = [t for t in tags if t]
    if not tags:
        note = ("no <ANSWER> tag: the paper extracts the answer from the tag only, so the method used its default: "
                "no answer (it abstains)")
        return FinalAnswer(value=[], status="unreadable", note=note, how="failed", rationale=rationale,
                           notes=["no <ANSWER> … </ANSWER> tag (the paper's answer format): no answer (abstained)"])
    notes = []
    if answer_mode == "single" and len(set(map(normalize, tags))) > 1:
        notes.append(f"{len(tags)} different <ANSWER> tags in single-answer mode; the last one was used")
    return _final(tags if answer_mode == "multi" else tags[-1:], "tag", rationale, notes,
                  "lenient" if notes else "exact")


def _known(answers: list[str]) -> list[str]:
    """Answers minus "I don't know" and refusals (an abstention) and repeats."""
    out: list[str] = []
    for a in answers:
        if a and not is_idk(a) and not refusal(a) and normalize(a) not in {normalize(b) for b in out} and \
                normalize(a) != normalize(IDK):
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


@ct.bounded
def read_consolidation(text: str, passages: list[dict] | None = None, **_fields) -> Consolidation:
    """The ``consolidate`` task's reader: ``parse_consolidation`` against the passages the call was given."""
    return parse_consolidation(text, passages_of(passages))


@ct.bounded
def read_final_answer(text: str, passages: list[dict] | None = None, answer_mode: str = "single",
                      **_fields) -> FinalAnswer:
    """The ``consolidate_answer`` task's reader, as ``AstuteRAG`` reads the reply: its groups
    (``parse_consolidation``), then the final answer(s) (``parse_answer``). An answer read exactly from a reply
    whose groups were not is a lenient read of the reply (the note says what the groups needed)."""
    groups = read_consolidation(text, passages)
    answer = parse_answer(text, groups.groups, answer_mode)
    if groups.status == "exact" or answer.status == "unreadable":
        return answer
    notes = [f"answer: {answer.note}" if answer.note else "", f"groups: {groups.note}"]
    return replace(answer, status="lenient", note="; ".join(n for n in notes if n))
