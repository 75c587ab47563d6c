"""Messages about input that name the field and the problem, never the input; addresses with their secrets masked.

* ``describe`` turns a pydantic ``ValidationError`` into ``"field.path: problem"`` lines. ``str(err)`` must never
  reach a user: it prints each ``input_value`` (a credentials file opened as a trace showed its ``client_secret``).
  The messages used are pydantic's templates, which name the expected values (``Input should be 'csv' or
  'jsonl'``), not the given one; the few that embed input (a discriminator's tag, a validator's own words) are
  rewritten or scrubbed of every string of the input.
* A key of the input the schema does not have is never named (a file a user names may be a secrets file, whose keys
  are content too): the problem is placed at the object holding it (``where``), and ``expected_fields`` lists the
  names the schema has there.
* ``mask_secrets`` masks what a message might carry in an address: the password of ``user:pw@``, and the value of any
  secret-looking parameter (``?password=``, ``&token=``, ``sslpassword=``, ``api_key=`` …) in a URL or a
  ``key=value`` connection string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

#: a key of the input shown as a field name only when it reads like one: long or odd keys may be data (a token)
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\- ]{0,31}")
#: the shortest string of the input scrubbed wherever it appears in a message (shorter ones only when quoted)
_SCRUB_MIN = 6
#: at most this many strings of the input are scrubbed from one message (a message is short; the input may not be)
_SCRUB_MAX = 2000
#: pydantic error types whose message is a fixed template naming only the rule (limits, types, expected values):
#: nothing of the input to scrub. Any other type (a validator's ``value_error``, a parser's words) is scrubbed.
_TEMPLATED = frozenset({
    "missing", "extra_forbidden", "json_invalid", "union_tag_invalid", "union_tag_not_found", "literal_error", "enum",
    "string_type", "string_too_short", "string_too_long", "string_pattern_mismatch", "int_type", "int_parsing",
    "int_from_float", "float_type", "float_parsing", "finite_number", "bool_type", "bool_parsing", "list_type",
    "tuple_type", "set_type", "frozen_set_type", "dict_type", "model_type", "model_attributes_type", "dataclass_type",
    "none_required", "too_short", "too_long", "greater_than", "greater_than_equal", "less_than", "less_than_equal",
    "multiple_of", "is_instance_of", "datetime_type", "date_type", "time_type", "timedelta_type", "url_type",
    "bytes_type", "frozen_instance", "frozen_field", "invalid_key",
})
MASK = "***"


def kind(value: Any) -> str:
    """A JSON value's type in words ("a number", "a list"): what a message may say about a value."""
    if value is None:
        return "null"
    for types, name in ((bool, "a boolean"), ((int, float), "a number"), (str, "a string"), ((list, tuple), "a list"),
                        (dict, "an object")):
        if isinstance(value, types):
            return name
    return type(value).__name__


def field_path(loc: Sequence[Any], prefix: str = "") -> str:
    """``("documents", 0, "text")`` as ``documents[0].text`` (after ``prefix``); a key that does not read like a
    field name is shown as ``…``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        name = str(part) if _FIELD_NAME.fullmatch(str(part)) else "…"
        out += f".{name}" if out else name
    return out


def where(error: dict[str, Any]) -> tuple[Any, ...]:
    """The location to name for one pydantic error: its ``loc``, but for an unknown field the object holding it,
    never the input's own key."""
    loc = tuple(error.get("loc", ()))
    return loc[:-1] if error.get("type") == "extra_forbidden" else loc


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds (``Document``, ``list[Document]``, ``Document | None``), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found := _model_in(arg)) is not None:
            return found
    return None


def expected_fields(model: type[BaseModel], loc: Sequence[Any]) -> tuple[str, ...]:
    """The field names ``model`` has at ``loc`` (``()``: its own; ``("documents", 0)``: a document's), as the input
    spells them (aliases); () when ``loc`` leads out of the models (a dict's values, a union)."""
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part)) or next(
            (f for f in model.model_fields.values() if f.alias == part), None)
        if field is None or (model := _model_in(field.annotation)) is None:
            return ()
    return tuple(f.alias or name for name, f in model.model_fields.items())


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    """Every string in ``value`` (keys too), for scrubbing; bounded so a huge input cannot make a message slow."""
    if depth > 20:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in list(value.items())[:1000]:
            if not _FIELD_NAME.fullmatch(str(k)):  # a key that reads like a field name is named, not scrubbed
                yield str(k)
            yield from _strings(v, depth + 1)
    elif isinstance(value, (list, tuple, set)):
        for v in list(value)[:1000]:
            yield from _strings(v, depth + 1)


def _scrub(message: str, value: Any) -> str:
    """``message`` without any string of ``value`` in it (longest first, so a part never leaves the rest)."""
    strings = set()
    for text in _strings(value):
        strings.add(text)
        if len(strings) >= _SCRUB_MAX:
            break
    for text in sorted(strings, key=len, reverse=True):
        if not text.strip():
            continue
        for quoted in (f"'{text}'", f'"{text}"', f"`{text}`"):
            message = message.replace(quoted, "…")
        if len(text) >= _SCRUB_MIN:
            message = message.replace(text, "…")
    return message


def problem(error: dict[str, Any]) -> str:
    """One pydantic error (an item of ``err.errors()``) as words naming the problem, never the input."""
    kind_, msg = error.get("type", ""), str(error.get("msg", ""))
    ctx = error.get("ctx") or {}
    if kind_ == "missing":
        return "missing (required)"
    if kind_ == "extra_forbidden":
        return "unknown field"
    if kind_ == "union_tag_invalid":  # "Input tag 'x' found using …": the tag is the input
        msg = f"not one of the expected {ctx.get('discriminator', 'tags')}: {ctx.get('expected_tags', '')}".rstrip(": ")
    elif kind_ == "json_invalid":  # the parser's words say where, not what: "EOF while parsing a string at line 1 …"
        msg = f"not valid JSON ({ctx['error']})" if ctx.get("error") else "not valid JSON"
    msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind_ not in _TEMPLATED:  # a validator's own words, or a template with the input's parts in it
        msg = _scrub(msg, error.get("input"))
    if kind_.endswith("_type") or kind_ == "literal_error" or kind_ == "enum":
        msg += f" (got {kind(error.get('input'))})"
    return msg


def describe(err: ValidationError, prefix: str = "", limit: int | None = None) -> list[str]:
    """``"field.path: problem"`` for each error of ``err`` (the first ``limit``), ``prefix`` before every path; a
    problem of the whole object has no path (just the problem). Never an input value."""
    out = []
    for e in err.errors(include_url=False)[:limit]:
        at = field_path(where(e), prefix)
        out.append(f"{at}: {problem(e)}" if at else problem(e))
    return out


def first(err: ValidationError, prefix: str = "") -> str:
    """The first problem of ``err`` (``describe``), with how many more there are."""
    lines = describe(err, prefix)
    more = len(lines) - 1
    return (lines[0] if lines else "not valid") + (f" (and {more} more)" if more > 0 else "")


def text_of(err: BaseException) -> str:
    """Any exception as a user may read it: a ``ValidationError`` by its fields and problems (``first``), never its
    ``str()`` (which quotes the input); any other by its message, an address in it masked (``mask_secrets``)."""
    if isinstance(err, ValidationError):
        return f"{err.title}: {first(err)}" if err.errors() else f"{err.title}: not valid"
    return mask_secrets(str(err))


def fields_of(err: ValidationError, kind_: str) -> list[str]:
    """The field paths of ``err``'s errors of one type (``"missing"``, ``"extra_forbidden"``), for short summaries."""
    return [field_path(where(e)) for e in err.errors(include_url=False) if e["type"] == kind_]


# --- secrets in addresses ------------------------------------------------------------------------------------------

#: a parameter whose value is a secret: by name or by how the name ends (``sslpassword``, ``x-api-key``, ``authToken``)
_SECRET_NAME = (r"[\w.\-]*?(?:password|passwd|passphrase|pass|pwd|token|secret|key|signature|sig|auth|"
                r"credentials?|session)")
_PARAM = re.compile(rf"(?i)(?<![\w.\-])({_SECRET_NAME})(\s*=\s*)('[^']*'|\"[^\"]*\"|[^\s&#;'\"]+)")
#: ``scheme://user:password@``: the password runs to the last ``@`` before a space, so an unescaped ``@``, ``/`` or
#: ``:`` in it stays masked (an odd address loses a little more than its password: the safe side)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]*):(\S*)@")
#: ``scheme://token@host``: a lone user part of a web address is often a token (``https://ghp_…@github.com``)
_TOKEN_USER = re.compile(r"(?i)\b(https?://)([^\s/:@]{16,})@")


def mask_secrets(text: str) -> str:
    """``text`` with every password and secret-looking parameter of an address in it shown as ``***``: the password
    of ``postgresql://user:pw@host/db``, ``?password=``, ``&sslpassword=``, ``?token=``, ``?api_key=``,
    ``#access_token=``, libpq's ``password=…``. Everything else stays, so the address can still be recognised."""
    if not text:
        return text
    text = _USERINFO.sub(rf"\1:{MASK}@", text)
    text = _TOKEN_USER.sub(rf"\1{MASK}@", text)
    return _PARAM.sub(rf"\1\2{MASK}", text)


def mask_url(url: str) -> str:
    """An address as messages may show it (``mask_secrets`` of it, surrounding spaces dropped)."""
    return mask_secrets(str(url).strip())


__all__ = ["MASK", "describe", "field_path", "fields_of", "first", "kind", "mask_secrets", "mask_url", "problem",
           "text_of"]
