"""bot/app/delivery_body.py, pure: a delivery's signature, its bounded read, and its JSON parsed
once with a bound on nesting (the web service's tests drive the same code through HTTP)."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import urllib.parse

import pytest

from bot.app.delivery_body import (
    MAX_JSON_DEPTH,
    TooLarge,
    UnsupportedType,
    decode_payload,
    json_depth,
    loads_bounded,
    read_bounded,
    verify_signature,
)

SECRET = "s3cret"
BODY = b'{"action": "opened", "number": 1}'


def sign(body: bytes, secret: str = SECRET, prefix: str = "sha256=") -> str:
    return prefix + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_only_a_sha256_signature_of_these_bytes_with_this_secret_passes() -> None:
    assert verify_signature(BODY, sign(BODY), SECRET)
    assert not verify_signature(BODY, None, SECRET)
    assert not verify_signature(BODY, "", SECRET)
    assert not verify_signature(BODY + b" ", sign(BODY), SECRET)  # a byte changed
    assert not verify_signature(BODY, sign(BODY, "other"), SECRET)  # another secret
    sha1 = "sha1=" + hmac.new(SECRET.encode(), BODY, hashlib.sha1).hexdigest()
    assert not verify_signature(BODY, sha1, SECRET)  # the weaker header is not enough


def test_a_body_is_read_whole_up_to_the_limit_and_refused_past_it() -> None:
    assert read_bounded(io.BytesIO(b"x" * 100).read, 100) == b"x" * 100
    with pytest.raises(TooLarge):
        read_bounded(io.BytesIO(b"x" * 101).read, 100)
    big = io.BytesIO(b"y" * 10_000_000)
    with pytest.raises(TooLarge):
        read_bounded(big.read, 1000)
    assert big.tell() <= 1001  # it stopped reading at the limit, not at the end


def test_nesting_is_counted_without_recursion_and_brackets_in_strings_do_not_count() -> None:
    assert json_depth('{"a": [1, {"b": 2}]}') == 3
    assert json_depth('{"a": "[[[[{{{{"}') == 1
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(ValueError, match="nested"):
        loads_bounded(deep)
    assert loads_bounded("[" * 50 + "]" * 50) is not None


def test_json_and_the_form_payload_parse_to_the_same_document() -> None:
    doc, text = decode_payload("application/json; charset=utf-8", BODY)
    assert doc == json.loads(BODY) and text == BODY.decode()
    form = urllib.parse.urlencode({"payload": BODY.decode()}).encode()
    assert decode_payload("application/x-www-form-urlencoded", form)[0] == doc
    latin = '{"title": "café"}'.encode("latin-1")
    assert decode_payload('application/json; charset="latin-1"', latin)[0] == {"title": "café"}


@pytest.mark.parametrize(("content_type", "body", "error"), [
    ("text/plain", BODY, UnsupportedType),
    ("application/json; charset=nonesuch", BODY, ValueError),
    ("application/x-www-form-urlencoded", b"other=1", ValueError),
    ("application/json", b"{not json", ValueError),
])
def test_anything_else_is_refused_with_its_own_error(content_type: str, body: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        decode_payload(content_type, body)
