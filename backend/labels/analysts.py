"""Who an analyst is, and when two names are the same analyst.

**A signed-in analyst is their issuer and subject** (``analyst_id``): the OpenID Connect provider's ``iss`` and the
``sub`` it gives the account, the one pair a provider promises never to give anyone else. An email is not an
identity: a provider that does not send ``email_verified`` (Microsoft Entra ID) lets an account's email claim say
anything, and two providers may each have an account claiming one address. The stored id reads
``<sub>@<issuer host>`` when the issuer is ``https://<host>`` (Google: ``1048...@accounts.google.com``), else
``<sub>@<issuer host>#<10 hex of the issuer's sha256>`` (Entra ID, Okta, a Keycloak realm, any issuer with a path,
a port or plain http: the tail tells two issuers on one host apart). A subject too long to fit the store's 100
characters is replaced by ``~`` and 32 hex of its sha256 (and, past a very long host, the whole id by ``~`` and 32 hex
of the pair's). The id is computed, never typed, and the same for an
account on every sign-in, so whoever runs the server copies it (the sidebar shows it) to name the leads.

**Two names are the same analyst** (``same_analyst``) when they are equal after stripping surrounding spaces and
Unicode canonical composition (NFC: an ``é`` typed as one code point or as ``e`` + combining accent is one name),
never otherwise: no case folding (``ß`` is not ``ss``, ``Ana`` is not ``ana``), no compatibility folding (NFKC would
make fullwidth ``ａｎａ`` and ``ana`` one name), and NFC's singleton replacements are not applied either (the Kelvin
sign stays itself, not ``K``; the Ohm and Ångström signs likewise): a look-alike is another name. Cyrillic ``а`` is
another letter than Latin ``a`` under every normalisation.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from urllib.parse import urlsplit

#: The store's analyst column holds 100 characters (``backend.labels.model.MAX_ANALYST``).
MAX_ID = 100
ISSUER_DIGEST = 10
SUBJECT_DIGEST = 32


def analyst_id(issuer: str, subject: str) -> str | None:
    """The stored identity of the account ``subject`` at the provider ``issuer`` (None: either is missing, or the
    issuer names no host). Two different (issuer, subject) pairs never give one id."""
    issuer, subject = (issuer or "").strip(), (subject or "").strip()
    try:
        host = (urlsplit(issuer).hostname or "") if issuer else ""
    except ValueError:
        host = ""
    if not subject or not host:
        return None
    # only the plain https://host issuer is shown as its host: any other (a path, a port, http, userinfo) gets the
    # digest of the whole issuer, so two issuers sharing a host stay two (the host part never holds '#' or '@')
    where = host if issuer.rstrip("/") == f"https://{host}" else f"{host}#{_sha256(issuer)[:ISSUER_DIGEST]}"
    for who in (subject, f"~{_sha256(subject)[:SUBJECT_DIGEST]}"):
        if len(who) + 1 + len(where) <= MAX_ID:
            return f"{who}@{where}"
    return f"~{_sha256(issuer + chr(0) + subject)[:SUBJECT_DIGEST]}"  # a very long host: no '@', so no clash


def name_key(name: str) -> str:
    """``name`` as two analysts' names compare: surrounding spaces stripped, canonically composed (NFC) except
    NFC's singletons (a character NFC replaces by another single character, e.g. the Kelvin sign), kept as they
    are so a look-alike never becomes the letter it imitates."""
    out, run = [], []
    for ch in name.strip():
        if _singleton(ch):
            out += [unicodedata.normalize("NFC", "".join(run)), ch]
            run = []
        else:
            run.append(ch)
    out.append(unicodedata.normalize("NFC", "".join(run)))
    return "".join(out)


def same_analyst(name: str, other: str) -> bool:
    """Whether two names are one analyst: equal after ``name_key`` (an empty name is nobody)."""
    a, b = name_key(name or ""), name_key(other or "")
    return bool(a) and a == b


def named(name: str, names: Iterable[str]) -> bool:
    """Whether ``name`` is one of ``names`` (as ``same_analyst`` compares)."""
    return any(same_analyst(name, other) for other in names)


def _singleton(ch: str) -> bool:
    decomposition = unicodedata.decomposition(ch)  # a canonical one has no <tag>; a singleton is one code point
    return bool(decomposition) and not decomposition.startswith("<") and " " not in decomposition


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["analyst_id", "name_key", "same_analyst", "named", "MAX_ID"]
