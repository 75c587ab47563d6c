"""Reading RC-RAG's replies and judging them (docs/methods/counterfactual.md §3.2, §3.4, §3.6;
§8.2, §8.3, §8.6, §8.7, §8.9).

Two readings of every reply (``backend.methods.reading``; ``CounterfactualRAG`` decides through ``ctx.readings``):

* tolerant (the default): ``read_cf_reply``, ``parse_keep_discard``, ``parse_probability`` return ``Parsed``
  (``backend.llm.formats``): exact in the prompt's format, lenient for a chat model's shapes of it (Markdown,
  chatter, JSON, percentages…: ``backend.llm.chat_text``), unreadable with the default named in the note: an empty
  answer, a discard, or probability 0.0;
* paper: the released code's parsers (ict-bigdatalab/RC-RAG @ 33e0aef, ``code/utils.py``), one small function each:
  ``read_cf_reply_released`` (``deal_prediction_with_evidence``), ``released_refusal`` (its refusal phrases),
  ``released_keep_discard`` (``deal_fusion``) and ``released_probability`` (``deal_fusion_probability`` over the
  answer part of ``deal_prediction_with_evidence``, as ``run_llm_ours.fusion`` calls it). Each docstring gives the
  spec section and what is [ours].

None of them raises.
"""

from __future__ import annotations

import re
import unicodedata

from backend.answers import RC_RAG_THRESHOLD, rc_rag_match, rouge_l_recall  # noqa: F401 - rouge_l_recall re-exported
from backend.answers import rouge_scorer as _rouge  # noqa: F401 - method.py warms it
from backend.llm import chat_text as ct
from backend.llm.formats import Parsed, exact, lenient, schema_object, unreadable
from backend.schema import CFMatch, CFReply

#: The released code's refusal phrases (``deal_prediction_with_evidence``, spec §3.2 step 2): the paper reading's.
RELEASED_REFUSAL_PHRASES = ("no specific", "unconfirmed", "uncertain", "unavailable", "sorry", "not have access",
                            "no information", "not provide", "no clear", "not mentioned", "not mention", "no mention",
                            "no answer", "N/A", "unclear", "not clear", "unknown", "partially correct",
                            "partially incorrect", "not correct", "cannot determine", "cannot answer", "not incorrect",
                            "incomplete")
#: The tolerant reading's: the released phrases plus [ours] "don't know" / "do not know": the project's models say
#: "I don't know" where the paper's said "unknown".
REFUSAL_PHRASES = RELEASED_REFUSAL_PHRASES + ("don't know", "do not know")
THRESHOLD = RC_RAG_THRESHOLD   # θ for token F1 and ROUGE-L recall (the released code; missing from the paper's text)


def _tokens(text: str) -> list[str]:
    """NFD-normalised, lower-cased alphanumeric runs and single non-space symbols."""
    t = unicodedata.normalize("NFD", text or "").lower()
    return re.findall(r"[^\W_]+|[^\w\s]|_", t)


def _spaced(phrases: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(p, f" {' '.join(_tokens(p))} ") for p in phrases]


_PHRASES = _spaced(REFUSAL_PHRASES)
_RELEASED_PHRASES = _spaced(RELEASED_REFUSAL_PHRASES)


def _first_phrase(text: str, phrases: list[tuple[str, str]]) -> str | None:
    joined = f" {' '.join(_tokens(text))} "
    return next((phrase for phrase, spaced in phrases if spaced in joined), None)


def refusal(text: str) -> str | None:
    """The first refusal phrase occurring in ``text`` as a whole token sequence, else None (the tolerant reading's
    phrases). Tokens hold no space, so the phrase's tokens space-joined inside the text's is the same test, one
    linear search per phrase."""
    return _first_phrase(text, _PHRASES)


def released_refusal(text: str) -> str | None:
    """The refusal test of the paper reading: the released code's rule (spec §3.2 step 2, ``has_answer`` over
    ``deal_prediction_with_evidence``'s phrase list): the first of ``RELEASED_REFUSAL_PHRASES`` occurring in
    ``text`` as a whole token sequence, case-insensitive on NFD text. No "don't know": "I don't know" is no refusal
    to the released code. [ours]: the released tokenizer keeps a letter and its combining marks in one token, ours
    splits the marks off; the phrases are ASCII, so only a phrase glued to an accented letter reads differently."""
    return _first_phrase(text, _RELEASED_PHRASES)


def _released_parts(raw: str) -> tuple[str, str]:
    """``deal_prediction_with_evidence``'s answer and evidence parts, verbatim (spec §3.2 steps 1, 3, 4): a leading
    "answer:" (any case) dropped, newlines made spaces, every "Answer: " removed; with "Evidence: " the answer part is
    the text before its first occurrence and the evidence part the text after its last, else both are the whole
    text; the answer part loses its ``##…##`` spans and is stripped."""
    text = raw[7:] if raw.lower().startswith("answer:") else raw
    flat = text.replace("\n", " ").replace("Answer: ", "")
    if "Evidence: " in flat:
        answer_part, evidence_part = flat[:flat.index("Evidence: ")], flat[flat.rindex("Evidence: ") + 10:]
    else:
        answer_part = evidence_part = flat
    return re.sub(r"##.*?##", "", answer_part).strip(), evidence_part


def _released(raw: str, n_passages: int, refusal_scope: str, released_phrases: bool = False) -> CFReply:
    """The released code's reading (§3.2). [ours]: passage ids of any length (the code reads one digit), and a
    trailing full stop is dropped from the answer. ``released_phrases``: the released refusal phrases only (the
    paper reading), else the tolerant reading's."""
    answer, evidence_part = _released_parts(raw)
    answer = re.sub(r"\s*\.$", "", answer).strip()
    groups = re.findall(r"##(.*?)##", evidence_part)
    mentions = list(dict.fromkeys(re.findall(r"Passage-\d+", evidence_part)))
    if groups:
        evidence = groups[-1].strip()
    elif mentions:
        evidence = ", ".join(mentions)
    else:
        evidence = evidence_part.strip()
    return _reply(raw, answer, evidence, n_passages, refusal_scope, released_phrases)


def _reply(raw: str, answer: str, evidence: str, n_passages: int, refusal_scope: str,
           released_phrases: bool = False) -> CFReply:
    ids = [int(n) for n in _PASSAGE_ID.findall(evidence)]
    passages = [i for i in dict.fromkeys(ids) if 0 <= i < n_passages]
    phrase = (released_refusal if released_phrases else refusal)(raw if refusal_scope == "output" else answer)
    return CFReply(raw=raw, answer=answer, evidence=evidence, passages=passages, internal=not passages,
                   reject=phrase is not None, reject_phrase=phrase)


_PASSAGE_ID = re.compile(r"\bPassage-(\d+)")
_LOOSE_ID = re.compile(r"\bpassages?[ \t]*(?:#|no\.?|number|id)?[ \t]*[-_]?[ \t]*(\d+)\b", re.I)
_GROUP = re.compile(r"(?<!#)##(?!#)([^\n]*?)(?<!#)##(?!#)")   # ## … ## on one line: not a "### Answer" heading
_SLOT = re.compile(r"\[\[evidence (\d+)\]\]")
_LABEL_LEFT = re.compile(r"\b(?:final\s+answer|answer|explanation|reasoning|evidence)\s*:", re.I)
_ANSWER_IS = re.compile(r"\b(?:the\s+|my\s+)?(?:final\s+|correct\s+|regenerated\s+|new\s+|revised\s+)?answer\s+"
                        r"(?:is|would\s+be|remains|stays)\s*:?\s+(?P<v>\S.*)$", re.I)
_LABEL_ONLY = re.compile(r"\W*(?:final\s+|regenerated\s+|new\s+)?answer\W*", re.I)
_EVIDENCE_WORD = r"(?:evidence|sources?|citations?|supporting\s+passages?|references?)"
_EVIDENCE_HEAD = re.compile(r"^[ \t]*" + _EVIDENCE_WORD + r"[ \t]*$\n?|(?:^|(?<=[\s.;,)]))" + _EVIDENCE_WORD
                            + r"[ \t]*[:\-–—][ \t]*", re.I | re.M)
_AFTER_ANSWER = re.compile(r"(?<!\s)\.?\s*\b(?:evidence|explanation|reasoning|reason|sources?|citations?|because)\s*:.*$",
                           re.I)
_CITATION = re.compile(r"(?<!\s)\s*[(\[](?:see\s+|from\s+|per\s+|based\s+on\s+|according\s+to\s+)?passages?[^)\]]{0,40}"
                       r"[)\]]\s*$", re.I)


def _exact_shape(raw: str, reply: CFReply, evidence: bool) -> bool:
    """The reply is in the prompt's format: ``[Answer:] X. Evidence: ## … ##`` (or ``X ## … ##``; without
    ``evidence``, CF-usage's, ``[Answer:] X`` on one line), no Markdown or chatter, an answer that is not a sentence
    about the answer."""
    shaped = bool(_GROUP.search(raw)) and raw.count("\n") <= 2 if evidence else "\n" not in raw.strip()
    shaped = shaped and not raw.lstrip().startswith("{")  # a one-line JSON object (structured output) is read below
    return (shaped and bool(reply.answer) and not ct.has_markup(raw) and not ct.has_chatter(raw)
            and not _LABEL_LEFT.search(reply.answer) and not _ANSWER_IS.search(reply.answer)
            and not _cut_off(raw))


def _cut_off(raw: str) -> bool:
    """The reply looked cut at the token limit (``chat_text.truncated``), or inside an evidence ``## … ##``."""
    return ct.truncated(raw) or len(re.findall(r"(?<!#)##(?!#)", raw.split("\n")[-1])) % 2 == 1


@ct.bounded
def read_cf_reply(raw: str | None, n_passages: int, refusal_scope: str = "output",
                  evidence_asked: bool = True) -> Parsed[CFReply]:
    """Answer, evidence and refusal flag of one reply (§3.2), and how the read went. Exact: the released code's
    reading of a reply in the prompt's format. Lenient: Markdown (``**Answer:** Chicago Bulls\\n**Evidence:** …``),
    a preamble or closing remark, "The answer is X.", an explanation between answer and evidence, a JSON object
    with "answer" and "evidence", evidence without ``##`` marks or as a list, passage ids written "Passage 1",
    a citation after the answer ("X (Passage-1)"), no evidence at all (internal knowledge). Unreadable: no reply,
    or neither an answer nor evidence (-> an empty answer, judged as changed unless the evidence matches).
    ``evidence_asked``: False for CF-usage, whose prompt asks for the answer alone."""
    if raw is None:
        return unreadable(CFReply(raw="", reject=True, reject_phrase="(no reply)", internal=True),
                          "no reply; the method used its default: a refusal citing no passage (discard)")
    reply = _released(raw, n_passages, refusal_scope)
    if _exact_shape(raw, reply, evidence_asked):
        return exact(reply)
    if not raw.strip():
        return unreadable(reply, "empty reply; the method used its default: an empty answer (nothing to compare: "
                                 "changed, discard)")
    notes: list[str] = []
    found = ct.json_object(raw) if "{" in raw else None
    keys = {str(k).lower(): v for k, v in (found or {}).items()}
    if "answer" in keys:
        answer = str(keys["answer"] or "")
        cited = keys.get("evidence", keys.get("passages", keys.get("sources", "")))
        evidence = ", ".join(map(str, cited)) if isinstance(cited, list) else str(cited or "")
        evidence = (_GROUP.findall(evidence) or [evidence])[-1].strip()
        notes.append("read the 'answer' and 'evidence' keys of a JSON object")
    else:
        groups = [g.strip() for g in _GROUP.findall(raw)]
        slots = iter(range(len(groups)))
        protected = _GROUP.sub(lambda _: f" [[evidence {next(slots)}]] ", raw)
        body = ct.strip_chatter(ct.plain(protected))
        if ct.has_markup(protected):
            notes.append("removed Markdown")
        if body != ct.plain(protected).strip():
            notes.append("dropped a preamble or closing remark")
        head = _EVIDENCE_HEAD.search(body)
        answer_text, section = (body[:head.start()], body[head.end():]) if head else (body, body)
        lines = [ln.strip() for ln in answer_text.split("\n") if ln.strip() and not _SLOT.fullmatch(ln.strip())]
        answer = ct.labelled(answer_text, "Final Answer", "Answer", "Regenerated Answer", "New Answer") or ""
        if not answer and lines:
            said = next((m for m in map(_ANSWER_IS.search, lines) if m), None)
            answer = said.group("v") if said else lines[0]
            if said:
                notes.append("read the answer from 'The answer is …'")
            elif len(lines) > 1:
                notes.append("no 'Answer:' label; took the first line")
        elif len(lines) > 1:
            notes.append("ignored the lines between the answer and the evidence")
        said = _ANSWER_IS.search(answer)
        if said:
            answer = said.group("v")
            notes.append("read the answer from 'The answer is …'")
        cut = _AFTER_ANSWER.sub("", answer)
        if cut != answer:
            answer = cut
            notes.append("dropped the explanation after the answer")
        uncited = _CITATION.sub("", _SLOT.sub("", answer)).strip()
        if uncited != _SLOT.sub("", answer).strip():
            notes.append("dropped the passage citation after the answer")
        answer = "" if _LABEL_ONLY.fullmatch(uncited) else uncited
        used = [groups[int(i)] for i in _SLOT.findall(section)] or (groups if not head else [])
        if used:
            evidence = used[-1]
        else:
            cited = list(dict.fromkeys(f"Passage-{n}" for n in _LOOSE_ID.findall(section)))
            evidence = ", ".join(cited) if cited else " ".join(_SLOT.sub("", section).split()) if head else ""
            if cited and not _PASSAGE_ID.search(section):
                notes.append("passage ids written without 'Passage-N'")
            if not head and not cited:
                if evidence_asked:
                    notes.append("no evidence given: read as internal knowledge")
            elif not cited:
                notes.append("evidence without ## marks")
    answer = re.sub(r"\s*\.$", "", answer.strip().strip('"').strip()).strip()
    reply = _reply(raw, answer, evidence.strip(), n_passages, refusal_scope)
    if not answer and not reply.evidence:
        return unreadable(reply, "no answer or evidence found; the method used its default: an empty answer "
                                 "(nothing to compare: changed, discard)")
    if _cut_off(raw):
        notes.append("reply looked cut off")
    return lenient(reply, "; ".join(dict.fromkeys(notes)) or "not in the 'Answer: X. Evidence: ## … ##' format")


@ct.bounded
def parse_reply(raw: str | None, n_passages: int, refusal_scope: str = "output") -> CFReply:
    """Answer, evidence and refusal flag of one reply (``read_cf_reply`` without the read's status)."""
    return read_cf_reply(raw, n_passages, refusal_scope).value


NO_REPLY = CFReply(raw="", reject=True, reject_phrase="(no reply)", internal=True)


@ct.bounded
def read_cf_reply_released(raw: str | None, n_passages: int, refusal_scope: str = "output",
                           structured: bool = False) -> CFReply:
    """Answer, evidence and refusal flag of one reply as the paper reading reads it: the released code's rule
    (spec §3.2, ``deal_prediction_with_evidence``): no reply -> a refusal; a leading "answer:" dropped; newlines made
    spaces and every "Answer: " removed; the answer is the text before the first "Evidence: " without its ``##…##``
    spans, the evidence the last ``##…##`` group after the last "Evidence: " (else the ``Passage-N`` mentions, else
    that text); the refusal flag is ``released_refusal`` of the whole reply. Nothing else is read: Markdown, a
    preamble or "The answer is X." stay in the answer (``**Answer:** X`` is the answer "**Answer:** X"), and a JSON
    object is read as text.

    [ours], as in the tolerant reading's exact path (``_released``): a trailing full stop is dropped from the answer
    (the released code keeps "apple."; the normalised match ignores it, and the conversations then carry the same
    answer turns under both readings, so a reply in the paper's format costs the other reading no new call);
    passage ids of any length and in order of first mention (the code takes 9-character "Passage-N" slices, as a
    set); ``refusal_scope="answer"`` (a method option) is honoured; the reply wears every reader's guard first
    (``chat_text.bounded``: runs of three or more spaces, or of blank lines, cut short). ``structured``: the call
    asked for the task's JSON schema instead of the paper's format, so its "answer" and "evidence" fields are read,
    nothing else."""
    if raw is None:
        return NO_REPLY.model_copy()
    if structured:
        obj = schema_object(raw) or {}
        cited = obj.get("evidence", "")
        evidence = ", ".join(map(str, cited)) if isinstance(cited, list) else str(cited or "")
        return _reply(raw, str(obj.get("answer") or "").strip(), evidence.strip(), n_passages, refusal_scope,
                      released_phrases=True)
    return _released(raw, n_passages, refusal_scope, released_phrases=True)


def match(prediction: str, reference: str, threshold: float = THRESHOLD, substring: str = "faithful") -> CFMatch:
    """The released code's ``match`` against one reference: exact (normalised), the reference inside the
    prediction (raw and case-sensitive; ``substring="strict"``: normalised whole words), token F1 > θ, or
    ROUGE-L recall > θ (``answers.rc_rag_match``, the rule that also labels the benchmark). The first test that
    passes is ``fired``; every score is kept."""
    tests = rc_rag_match(prediction, reference, substring)
    tests = tests._replace(f1=round(tests.f1, 4), rouge_l=round(tests.rouge_l, 4))
    fired = tests.fired(threshold)
    return CFMatch(compared="answer", exact=tests.exact, substring=tests.substring, f1=tests.f1,
                   rouge_l=tests.rouge_l, threshold=threshold, fired=fired, same=fired is not None)


def judge(reply: CFReply, rag: CFReply, threshold: float = THRESHOLD, substring: str = "faithful") -> CFMatch:
    """Same as the RAG answer -> keep (§3.4): compare answers; when either is empty, compare evidence (unless the
    reply refused); otherwise changed."""
    if reply.answer and rag.answer:
        return match(reply.answer, rag.answer, threshold, substring)
    if not reply.reject and reply.evidence and rag.evidence:
        return match(reply.evidence, rag.evidence, threshold, substring).model_copy(update={"compared": "evidence"})
    return CFMatch(compared="nothing", threshold=threshold)


_TAG = re.compile(r"\$\$\s*(keep|discard)\s*\$\$", re.I)
_LOOSE_TAG = re.compile(r"(?<!\$)\\?\$+\s*(keep|discard)\s*\\?\$+", re.I)
_CHOICE = re.compile(r"\b(?:(?P<keep>keep|keeping|kept|keeps|retain|retaining|retained)"
                     r"|(?P<discard>discard|discarding|discarded|discards|reject|rejecting|rejected))\b", re.I)
_NEGATED = re.compile(r"(?:\brather\s+than|\binstead\s+of|\bnot|n't|\bnever|\bno\s+need\s+to|\bno\s+reason\s+to"
                      r"|\bagainst|\bwithout|\bavoid(?:ing)?)\s+(?:\w+\s+){0,2}$", re.I)
_DECIDES = re.compile(r"(?:\b(?:choose|chose|decide|decided|opt|recommend|suggest|go\s+with|vote|verdict|decision|"
                      r"choice|final|conclusion)\b[^.\n]{0,12}|\bi(?:\s+(?:will|would|should|must|shall)|'ll|'d)\s+)$",
                      re.I)
_IDIOM = re.compile(r"^\s+(?:thinking|in\s+mind|going|track|reading|wondering|an\s+eye|up\b)", re.I)
_RESTATED = (re.compile(r"^\W{0,4}(?:or|/|and/or)\s", re.I), re.compile(r"(?:\bor|/|\bwhether\s+to)\W{0,4}$", re.I))


def _decision(text: str) -> tuple[str | None, str]:
    """The decision a sentence makes, not its first or last word: "I choose to keep it rather than discard it" is
    keep, "discard it instead of keeping it" and "I would not keep it" are discard. A word in a decision phrase
    ("I choose to", "Decision:") wins; else the affirmative mentions (the last, when they disagree); else a negated
    one read as its opposite. Idioms ("keep in mind") and the question restated ("keep or discard") do not count."""
    strong, plain, negated = [], [], []
    for m in _CHOICE.finditer(text):
        kind = "keep" if m.group("keep") else "discard"
        before = re.split(r"[.!?\n]", text[max(0, m.start() - 80):m.start()])[-1]
        after = text[m.end():m.end() + 20]
        if (kind == "keep" and _IDIOM.match(after)) or _RESTATED[0].match(after) or _RESTATED[1].search(before):
            continue
        if _NEGATED.search(before):
            negated.append("discard" if kind == "keep" else "keep")
        elif _DECIDES.search(before):
            strong.append(kind)
        else:
            plain.append(kind)
    if strong:
        return strong[0], "read the decision phrase"
    if plain:
        return plain[-1], "read the decision the wording makes" if len(set(plain)) == 1 else "took the last decision"
    if negated:
        return negated[0], "read a negated choice as its opposite"
    return None, ""


@ct.bounded
def parse_keep_discard(raw: str, **_fields) -> Parsed[str]:
    """Direct selection's choice. Exact: ``$$ keep $$`` or ``$$ discard $$`` (one of them, however often; not the
    released code's regex, which never matches: ``$`` is an anchor there). Lenient: both marks, or none (single
    ``$``, Markdown, bare words): the decision the sentence makes (``_decision``). Unreadable: neither word
    (-> discard, as the released code's fallback, which keeps only on "keep")."""
    text = raw or ""
    tags = {t.lower() for t in _TAG.findall(text)}
    if len(tags) == 1:
        return exact(tags.pop())
    obj = ct.json_object(text) if "{" in text else None
    key = next((k for k in (obj or {}) if str(k).lower() in ("decision", "choice", "answer", "verdict")), None)
    if key is not None and _decision(str(obj[key]))[0]:
        return lenient(_decision(str(obj[key]))[0], f"read the {key!r} key of a JSON object")
    words = ct.plain(_LOOSE_TAG.sub(lambda m: m.group(1), text))
    choice, how = _decision(words)
    if choice is None:
        return unreadable("discard", "no keep/discard in the reply; the method used its default: discard")
    marks = "both $$ keep $$ and $$ discard $$" if tags else "no $$ marks"
    return lenient(choice, f"{marks}; {how} ({choice!r})")


def released_keep_discard(raw: str | None, structured: bool = False) -> str:
    """Direct selection's choice as the paper reading reads it: the released code's rule (spec §3.6 step 2,
    ``deal_fusion``): its regex ``$$(.+)$$`` never matches (``$`` is an anchor), so the choice is "keep" when the
    reply contains "keep" (case-sensitive, anywhere: "keeping", "I would not keep it") and "discard" otherwise
    ("KEEP", "Keep" and no reply are discard). ``structured`` [ours]: the schema's "decision" field ("keep" in it)."""
    text = raw or ""
    if structured:
        text = str((schema_object(text) or {}).get("decision") or "")
    return "keep" if "keep" in text else "discard"


_PROBABILITY_LABELS = ("Probability", "Final Probability", "Confidence", "Probability of correctness", "Answer")
_PLAIN_PROBABILITY = re.compile(r"^\s*(?:probability\s*:\s*)?(?:0?\.\d+|0|1(?:\.0+)?)\s*\.?\s*$", re.I)


@ct.bounded
def parse_probability(raw: str, **_fields) -> Parsed[float]:
    """``Probability: 0.xx`` -> a value in [0, 1]. Exact: that, or the bare decimal. Lenient: Markdown, a preamble,
    another label ("Confidence:"), a JSON object, a percentage (``80%``, ``**70%**``, ``[80%]``), a fraction
    (``7/10``, ``8 out of 10``), a decimal comma (``0,8``), a number in (1, 100] (a percentage), out of range
    (clamped); the released code reads "1" and "95%" as 0.0. Unreadable: no number (-> 0.0, the released code's
    value for an unreadable reply)."""
    text = raw or ""
    if _PLAIN_PROBABILITY.match(text) and not ct.has_markup(text):
        value = ct.probability(re.sub(r"^\s*probability\s*:", "", text, flags=re.I))
        if value is not None:
            return exact(value[0])
    notes: list[str] = []
    obj = ct.json_object(text) if "{" in text else None
    key = next((k for k in (obj or {}) if str(k).lower() in ("probability", "confidence", "p")), None)
    if key is not None:
        read = ct.probability(str(obj[key]))
        notes.append(f"read the {key!r} key of a JSON object")
    else:
        body = ct.strip_chatter(ct.plain(text))
        if body != ct.plain(text).strip():
            notes.append("dropped a preamble or closing remark")
        value = ct.labelled(body, *_PROBABILITY_LABELS)
        read = ct.probability(value) if value else None
        if read is None:
            read = ct.probability(body)
            if read is not None:
                notes.append("no 'Probability:' label")
        if ct.has_markup(text):
            notes.append("removed Markdown")
    if read is None:
        return unreadable(0.0, "no probability in the reply; the method used its default: 0.0")
    value, note = read
    return lenient(value, "; ".join(notes + ([note] if note else []))
                   or "read the 'Probability:' line; ignored the rest of the reply")


# [code]'s patterns, anchored at the start of a digit run: the same first match (a match can only start where its
# run starts), without the quadratic backtracking of a long run of digits
_RELEASED_DECIMAL = re.compile(r"(?<!\d)\d+\.\d+")
_RELEASED_INTEGER_DOT = re.compile(r"(?<!\d)\d+\.")


def released_probability(raw: str | None, structured: bool = False) -> float:
    """``Probability: 0.xx`` as the paper reading reads it: the released code's rule (spec §3.6 step 3,
    ``deal_fusion_probability`` applied, as ``run_llm_ours.fusion`` does, to the answer part of
    ``deal_prediction_with_evidence``): a leading "probability: " (any case, with its space) dropped, the first
    ``\\d+\\.\\d+`` ("0.85"), failing that the first ``\\d+\\.`` ("1." -> 1.0, "95." -> 95.0, not clamped), failing that
    0.0. So "1", "95%", ".8", "0,8" and "7/10" are 0.0, and "8.5/10" is 8.5. ``structured`` [ours]: the schema's
    "probability" field (0.0 when it is missing or not a number)."""
    if structured:
        value = (schema_object(raw or "") or {}).get("probability")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
    if raw is None:
        return 0.0
    text = _released_parts(raw)[0]
    if text.lower().startswith("probability: "):
        text = text[13:]
    found = _RELEASED_DECIMAL.search(text) or _RELEASED_INTEGER_DOT.search(text)
    return float(found.group(0)) if found else 0.0
