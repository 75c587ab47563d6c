"""Text helpers shared by the reader: word tokens, a crude stemmer, stop words, sentence splitting.

Everything here is static (no corpus statistics), so a passage is always read the same way whatever
else is read in the same process or batch.
"""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset("""
a an the of in on at to for from by with without about as into onto over under than then and or nor but
is are was were be been being am do does did done has have had having will would shall should can could
may might must it its it's this that these those there here which who whom whose what when where why how
he she they them his her their him we us our you your i me my mine not no yes so such also very more most
much many any some each every all both either neither other another one ones s if while during after before
until since upon within between among against through via per
""".split())

#: Words that describe the *shape* of the question rather than its subject; they carry little evidence.
TEMPLATE_WORDS = frozenset("""
name named type kind associated association primary main known refer refers referred stand stands
located location situated place part belong belongs belonged current currently year years date
""".split())

_WORD = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['\u2019][A-Za-z]+)?")


def fold(text: str) -> str:
    """Accents removed (Mahmūd -> Mahmud) so spellings with and without diacritics match."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """Lower-cased word tokens, possessive 's dropped."""
    out = []
    for w in _WORD.findall(fold(text)):
        w = w.lower()
        if w.endswith(("'s", "\u2019s")):
            w = w[:-2]
        out.append(w)
    return out


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) for every word token, original case kept."""
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def stem(w: str) -> str:
    """A five-letter prefix: cheap, deterministic and good enough to pair director/directed,
    established/establishment, footballer/football. Short words are kept whole."""
    w = w.lower()
    return w[:5] if len(w) > 5 else w


def content_stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS}


# ---------------------------------------------------------------------------------------------- sentences

_ABBREV = frozenset("""mr mrs ms dr st jr sr no nos vol co inc ltd vs gen col lt sgt capt rev mt ft fr
prof hon gov sen rep jan feb mar apr jun jul aug sep sept oct nov dec approx ca c b d fl est op""".split())
_BOUNDARY = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9\u00C0-\u00DE])")
#: Windows for text with no sentence punctuation (tables, menus, lists): bounded so one "sentence"
#: never spans a whole page and every window still fits the embedding model comfortably.
MAX_SENTENCE_WORDS = 45


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``; abbreviations and initials (``J. Smith``, ``No. 2``) do not end a sentence,
    and very long runs are cut into windows of ``MAX_SENTENCE_WORDS`` words."""
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return []
    pieces, start = [], 0
    for m in _BOUNDARY.finditer(text):
        before = text[start:m.start()].rstrip()
        last = before.split(" ")[-1].lower().strip("\"'([") if before else ""
        if (len(last) == 1 and last.isalpha()) or last in _ABBREV or not last:
            continue  # an initial or an abbreviation, or a detached " . " right after another boundary
        pieces.append(text[start:m.end()].strip())
        start = m.end()
    pieces.append(text[start:].strip())
    out = []
    for p in pieces:
        toks = p.split(" ")
        for i in range(0, len(toks), MAX_SENTENCE_WORDS):
            chunk = " ".join(toks[i:i + MAX_SENTENCE_WORDS]).strip()
            if chunk:
                out.append(chunk)
    return out
