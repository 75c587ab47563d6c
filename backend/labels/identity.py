"""What a label is keyed by: the dataset's identity, ``<name>@<12 hex>``, the name with a hash of the content the
analyst judges, so two different files never share labels (``teamA/questions.jsonl`` and
``teamB/questions.jsonl`` are both named ``questions``, and have different identities unless they hold the same
questions), while a copy of a file, or the same file moved or renamed to the same name, keeps its labels.

What is hashed is what the Label page shows an analyst: each question's id and text and its documents' ids,
sources and texts (``question_fingerprint``; the dataset's hash is over every question's fingerprint, in id order,
so reordering the questions changes nothing). Gold answers, wrong answers, document truth labels and ``meta`` are
left out: the analyst never sees them, and correcting them changes nothing about the label.

**When the file changes** (a question edited, added or removed, or the file renamed to another name) its identity
changes, and the labels of the old version stay in the store under the old identity: nothing is moved or deleted
behind the analyst's back. The Label page and ``python -m backend labels info --dataset PATH`` then say "N labels
were saved for another version of <name>", and **carry over** (the page's button, or ``python -m backend labels
carry --dataset PATH``) copies, as new label versions with a note, the labels of the questions whose id and content
are unchanged (each label keeps the fingerprint of the question it was saved on). Labels saved before identities
existed are stored under the bare name and have no fingerprint: they carry over by question id only, and the page
says so.

Question ids are never altered: ``"q1 "`` and ``"q1"`` are two ids, a label names exactly one of them.
"""

from __future__ import annotations

import hashlib
import json
import re

from backend.schema import Dataset, Question

DIGEST_CHARS = 12
#: The store's dataset column holds 200 characters: a longer name is cut (the hash still tells versions apart).
MAX_NAME = 200 - 1 - DIGEST_CHARS
_KEY = re.compile(rf"^(?P<name>.*)@(?P<digest>[0-9a-f]{{{DIGEST_CHARS}}})$", re.DOTALL)


def question_fingerprint(q: Question) -> str:
    """The sha256 (hex) of what an analyst judges of one question: its id and text, its documents' ids, sources and
    texts, in the order shown. Truth (gold/wrong answers, document labels, meta) is not part of it."""
    shown = {"id": q.id, "question": q.question, "documents": [[d.id, d.source, d.text] for d in q.documents]}
    return _sha256(json.dumps(shown, ensure_ascii=False, separators=(",", ":"), sort_keys=True))


def content_digest(dataset: Dataset) -> str:
    """The 12-hex hash of the dataset's questions as analysts see them (question order does not matter)."""
    lines = sorted(json.dumps([q.id, question_fingerprint(q)], ensure_ascii=False) for q in dataset.questions)
    return _sha256("\n".join(lines))[:DIGEST_CHARS]


def dataset_key(dataset: Dataset) -> str:
    """The identity a dataset's labels are saved, read, queued, exported and scored under: ``<name>@<hash>``."""
    return f"{dataset.name[:MAX_NAME]}@{content_digest(dataset)}"


def is_key(text: str) -> bool:
    """Whether ``text`` is a dataset identity (``name@`` twelve hex digits) rather than a bare name."""
    return bool(_KEY.match(text))


def name_of(key: str) -> str:
    """The dataset name of an identity; a bare name (labels saved before identities existed) is itself."""
    m = _KEY.match(key)
    return m.group("name") if m else key


def same_name(key: str, other: str) -> bool:
    """Whether two identities (or bare names) are versions of one dataset name."""
    return name_of(key) == name_of(other)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["question_fingerprint", "content_digest", "dataset_key", "is_key", "name_of", "same_name"]
