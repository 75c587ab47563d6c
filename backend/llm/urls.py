"""One URL, parsed once (issue 36): every address a user or an admin gives for a server the project sends requests to
(a model's ``api_base``, a chroma server; the text of a label-store URL) is read here, by the parser that sends the
request (``httpx.URL``: litellm and openai send with httpx), and nowhere else.

An address is refused (``BadURL``, one line that never repeats the address: it may hold a password) when

* it holds whitespace, a control or format character (a zero-width space, a bidi mark) or a backslash anywhere;
* it is not ``http://`` or ``https://``, names no host, or its port is outside 1-65535;
* it holds a user name or password (httpx would send them as a Basic credential), a query or a fragment (litellm
  appends its own path after them);
* its path holds an encoded slash or backslash (``%2F``, ``%5C``: servers read them differently);
* ``urllib.parse.urlsplit`` and httpx disagree on its scheme, host, port or path: two parsers, two servers.

What is left has one canonical form (``Endpoint``): scheme, IDNA host in lower case without a trailing dot, explicit
port, and the path with percent-encoded unreserved characters decoded (``%2e`` is ``.``), dot segments removed and no
trailing slash. The request is sent to that endpoint (``Endpoint.url``), the reply cache names the model by a hash of it
(``endpoint_hash``) and the deployment's ``key_endpoints`` are compared with it (``Endpoint.within``): whatever is
checked or hashed is what is requested.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

#: Every refusal's message says this (``backend.llm.failures`` shows such a failure in its own words).
REFUSED = "is refused:"

HTTP_PORTS = {"http": 80, "https": 443}
#: chroma's own defaults (``chroma run`` listens on 8000): an address without a port means these.
CHROMA_PORTS = {"http": 8000, "https": 443}

_UNRESERVED_ESCAPE = re.compile(r"%(2[dDeE]|5[fF]|7[eE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA])")
_ENCODED_SEPARATOR = re.compile(r"%(2[fF]|5[cC])")
_HOST = re.compile(r"[a-z0-9_.-]+")


class BadURL(ValueError):
    """An address that is not sent to (the module's rules); the message is one line naming the rule, not the URL."""


@dataclass(frozen=True)
class Endpoint:
    """An address in its canonical form: ``host`` in IDNA lower case (an IPv6 address without brackets), ``port``
    explicit, ``path`` normalised ("" for none)."""
    scheme: str
    host: str
    port: int
    path: str
    default_port: int

    @property
    def canonical(self) -> str:
        """What is hashed and compared: ``scheme://host:port/path`` (as the reply cache has named endpoints since
        issue 25, so the replies cached for an ordinary api_base stay valid)."""
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"

    @property
    def url(self) -> str:
        """What is requested (and shown): the same endpoint as a URL, the scheme's default port left out."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == self.default_port else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path}"

    def within(self, prefix: Endpoint) -> bool:
        """Whether this endpoint is ``prefix`` or below it: same scheme, host and port, and its path is the prefix's
        or continues it after a ``/`` (both normalised: ``/v1/../x`` is ``/x``, never below ``/v1``)."""
        if (self.scheme, self.host, self.port) != (prefix.scheme, prefix.host, prefix.port):
            return False
        return not prefix.path or self.path == prefix.path or self.path.startswith(prefix.path + "/")


def parse(text: str, what: str = "api_base", ports: dict[str, int] = HTTP_PORTS) -> Endpoint:
    """The canonical endpoint ``text`` names, or ``BadURL`` (``what`` names the setting in the message)."""
    import httpx

    def refuse(why: str) -> BadURL:
        return BadURL(f"the {what} {REFUSED} {why}")

    if not isinstance(text, str) or not text:
        raise refuse("it is empty")
    if any(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Zs") for c in text):
        raise refuse("it holds whitespace or a control character")
    if "\\" in text:
        raise refuse("it holds a backslash (parsers and servers read it differently)")
    if "?" in text or "#" in text:
        raise refuse("it holds a query or a fragment (litellm adds its own path after the address)")
    try:
        sent = httpx.URL(text)
        split = urlsplit(text)
        split_port = split.port
    except (httpx.InvalidURL, ValueError):
        raise refuse("it is not a URL with a valid host and port") from None
    scheme = sent.scheme.lower()
    if scheme not in ports:
        raise refuse(f"it must start with {' or '.join(f'{s}://' for s in ports)}")
    if sent.userinfo or split.username is not None or split.password is not None or "@" in split.netloc:
        raise refuse("it holds a user name or password (a key goes in its own field)")
    host = sent.raw_host.decode("ascii").lower()
    if split.scheme.lower() != scheme or _idna(split.hostname or "") != host:
        raise refuse("httpx and urllib read its host differently")
    port = ports[scheme] if sent.port is None else sent.port
    if (ports[scheme] if split_port is None else split_port) != port or not 1 <= port <= 65535:
        raise refuse("its port is not one both parsers read, from 1 to 65535")
    host = host[:-1] if host.endswith(".") else host  # the DNS root: the same host, sent without it
    if not host or not (_HOST.fullmatch(host) or ":" in host):  # a ':' only in an IPv6 address httpx checked
        raise refuse("it names no host (letters, digits, '-', '.', or an IP address)")
    raw_path = sent.raw_path.decode("ascii")
    if _ENCODED_SEPARATOR.search(raw_path):
        raise refuse("its path holds an encoded slash or backslash")
    path = normal_path(raw_path)
    if normal_path(split.path) != path:
        raise refuse("httpx and urllib read its path differently")
    return Endpoint(scheme, host, port, path, ports[scheme])


def _idna(host: str) -> str:
    """``host`` as httpx sends it (lower case; IDNA for a non-ASCII name); "" when it cannot be encoded."""
    import idna

    host = host.lower()
    if host.isascii():
        return host
    try:
        return idna.encode(host).decode("ascii")
    except idna.IDNAError:
        return ""


def normal_path(path: str) -> str:
    """``path`` with percent-encoded unreserved characters decoded (RFC 3986 §6.2.2.2), dot segments removed
    (§5.2.4) and no trailing slash."""
    decoded = _UNRESERVED_ESCAPE.sub(lambda m: unquote(m.group(0)), path)
    out: list[str] = []
    for segment in decoded.split("/")[1:] if decoded.startswith("/") else decoded.split("/"):
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    return ("/" + "/".join(out)).rstrip("/") if out else ""


def problem(text: str | None, what: str = "api_base") -> str | None:
    """Why ``text`` is refused, in one line (the sidebar and the command line say it before any run), or None."""
    try:
        parse(text or "", what)
    except BadURL as err:
        return str(err)
    return None


def sendable(text: str | None) -> bool:
    """Whether ``text`` is an address this module lets a request go to."""
    return problem(text) is None


def request_url(api_base: str) -> str:
    """The URL a call to ``api_base`` is sent to (``Endpoint.url``), or ``BadURL``."""
    return parse(api_base).url


def endpoint_hash(api_base: str) -> str:
    """A short hash of the endpoint ``api_base`` names (its canonical form: scheme, IDNA host, explicit port,
    normalised path), or ``BadURL``: the reply cache's name for where a reply came from, never the URL itself."""
    return hashlib.sha256(parse(api_base).canonical.encode()).hexdigest()[:16]


def endpoint(api_base: str) -> str:
    """``api_base`` as error messages name it: where the call went (``Endpoint.url``); for an address that is refused,
    its scheme, host, port and path as far as they can be read, never a user, password or query."""
    try:
        return parse(api_base).url
    except BadURL:
        pass
    try:
        parts = urlsplit(api_base)
        host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname or ""
        netloc = host + (f":{parts.port}" if host and parts.port else "")
    except ValueError:
        netloc = ""
    if not netloc:  # unparsable (a bad port): still no user, password, query or fragment
        return api_base.split("#")[0].split("?")[0].rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def allows(api_base: str | None, prefixes: tuple[str, ...] | list[str]) -> bool:
    """Whether ``api_base`` lies within one of ``prefixes`` (``Endpoint.within``); a refused address, or a refused
    prefix, matches nothing."""
    try:
        wanted = parse(api_base or "")
    except BadURL:
        return False
    for prefix in prefixes:
        try:
            if wanted.within(parse(prefix.strip() if isinstance(prefix, str) else prefix)):
                return True
        except BadURL:
            continue
    return False


def chroma_server(url: str) -> tuple[bool, str, int]:
    """(https?, host, port) of a chroma server given as ``host[:port]`` or ``http(s)://host[:port]`` (chroma's
    defaults: 8000, or 443 over https), or ``BadURL``: the allow-list check and the connection both read this."""
    text = url.strip() if isinstance(url, str) else url
    found = parse(text if "://" in (text or "") else f"http://{text}", "chroma server", CHROMA_PORTS)
    return found.scheme == "https", found.host, found.port


def check_text(text: str, what: str) -> None:
    """``BadURL`` when ``text`` (a URL handed to another parser, e.g. a label store's database URL, where a password
    is allowed) holds whitespace, a control or format character."""
    if any(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Zs") for c in text):
        raise BadURL(f"the {what} {REFUSED} it holds whitespace or a control character")
