"""A webhook delivery's body as GitHub sends it, checked before anything is done with it: its
`X-Hub-Signature-256` over the raw bytes (gidgethub.sansio), read whole but never past a limit
(a chunked body has no length to check beforehand), and parsed as JSON once — the body itself
or its `payload` form field, in its charset — with a bound on its nesting. Pure: no web
framework here (bot/app/web.py hands the bytes and headers in).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

from gidgethub import ValidationFailure
from gidgethub.sansio import validate_event


def verify_signature(body: bytes, signature: str | None, secret: str) -> bool:
    """True when `signature` (the X-Hub-Signature-256 header) signs `body` with `secret`."""
    if not signature:
        return False
    try:
        validate_event(body, signature=signature, secret=secret)
    except ValidationFailure:
        return False
    return signature.startswith("sha256=")


JSON_TYPES = ("application/json", "application/x-www-form-urlencoded")
MAX_JSON_DEPTH = 256  # GitHub's payloads nest about 10 deep; Python's json recurses per level
READ_CHUNK = 64 * 1024
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_BRACKETS = re.compile(r"[\[{]+|[\]}]+")


class UnsupportedType(ValueError):
    pass


class TooLarge(ValueError):
    pass


def read_bounded(read: Callable[[int], bytes], limit: int) -> bytes:
    """The whole body from `read` (a stream's read), refusing it (TooLarge) as soon as it has
    more than `limit` bytes: a chunked body has no Content-Length to check beforehand."""
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = read(min(READ_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"body over {limit} bytes")
        parts.append(chunk)


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in `text` (JSON), found without recursion: strings are
    blanked out, then runs of opening and closing brackets are counted."""
    depth = deepest = 0
    for m in _JSON_BRACKETS.finditer(_JSON_STRING.sub('""', text)):
        run = m.group()
        if run[0] in "[{":
            depth += len(run)
            deepest = max(deepest, depth)
        else:
            depth -= len(run)
    return deepest


def loads_bounded(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads, refusing (ValueError) a document nested deeper than `max_depth`, which would
    otherwise exhaust the interpreter's recursion limit."""
    depth = json_depth(text) if text.count("[") + text.count("{") > max_depth else 0
    if depth > max_depth:
        raise ValueError(f"JSON nested {depth} deep (at most {max_depth})")
    try:
        return json.loads(text)
    except RecursionError:  # not expected after the check; never a 500
        raise ValueError("JSON nested too deeply") from None


def decode_payload(content_type: str, body: bytes) -> tuple[Any, str]:
    """(the parsed JSON document of a delivery, its text): the body itself (application/json),
    or its `payload` field (application/x-www-form-urlencoded, GitHub's other content type),
    parsed once. Raises UnsupportedType for any other content type, ValueError for a body
    that is not JSON in its charset."""
    kind, _, params = content_type.partition(";")
    kind = kind.strip().lower()
    if kind not in JSON_TYPES:
        raise UnsupportedType(kind)
    charset = "utf-8"
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        text = body.decode(charset)
    except LookupError as e:
        raise ValueError(f"unknown charset {charset!r}") from e
    if kind == "application/x-www-form-urlencoded":
        fields = urllib.parse.parse_qs(text)
        if "payload" not in fields:
            raise ValueError("no payload field in the form")
        text = fields["payload"][0]
    return loads_bounded(text), text
