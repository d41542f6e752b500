"""A chat completion's answer, read with a bound.

`max_tokens` is a request, not a guarantee: a server (or gateway) that ignores it can answer
megabytes, which would then be parsed, kept in a finding's evidence and cached. So the answer
is read with two byte caps derived from `max_tokens`:

- the body: at most `body_cap(max_tokens, n)` bytes are read from the connection (the
  response is streamed, never held whole); a body cut there is parsed as far as it goes
  (jiter's partial mode keeps the string it stops in);
- each answer: at most `answer_cap(max_tokens)` bytes of UTF-8, cut at a character, ending in
  CUT_MARK, so that the cut is stored (and cached) with the answer and says so wherever the
  answer is read back, from the cache or not.

An answer the server itself stopped at max_tokens (`finish_reason: "length"`) is whole as far
as it goes but unfinished: it is stored ending in LIMIT_MARK, read back the same way, so that
an analyzer that needs a finished answer (AutoFix's fix) can refuse it from the cache too.

BYTES_PER_TOKEN = 16 is generous on purpose: a token of English or code is about 4 bytes
(tokenizers' long tokens are runs of spaces, rare in an answer), so an answer that honours
max_tokens is far under the cap, and one over it has gone past max_tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import jiter

from analyzers.llm.transport import TIMEOUTS, TRANSPORT_ERRORS

BYTES_PER_TOKEN = 16  # an answer's bytes per token of max_tokens, four times the usual ~4
MIN_ANSWER_BYTES = 4096  # the cap of an answer whatever its max_tokens
JSON_ESCAPE = 6  # a byte of text is at most 6 bytes of JSON ("\u0001")
BODY_SLACK = 64 * 1024  # the rest of a completion's JSON: ids, roles, usage, finish reasons
READ_CHUNK = 64 * 1024
# what a cut answer ends with, in the cache too (a cached answer says it was cut)
CUT_MARK = "\n[rtcbot: answer cut here, the model wrote past max_tokens]"
# what an answer the server stopped at max_tokens ends with (finish_reason "length"), in the cache too
LIMIT_MARK = "\n[rtcbot: the server stopped this answer at max_tokens]"


class Streamed(Protocol):
    """What is read of a streamed HTTP response (httpx's)."""

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]: ...

    def close(self) -> None: ...


def answer_cap(max_tokens: int) -> int:
    """The most bytes (UTF-8) one answer keeps, CUT_MARK included."""
    return max(MIN_ANSWER_BYTES, max_tokens * BYTES_PER_TOKEN)


def body_cap(max_tokens: int, n: int) -> int:
    """The most bytes read of a response body that holds `n` answers."""
    return max(1, n) * answer_cap(max_tokens) * JSON_ESCAPE + BODY_SLACK


def read_bounded(response: Streamed, cap: int) -> tuple[bytes, bool]:
    """(at most `cap` bytes of the body, whether there was more). The connection is closed
    when the body is cut, so the rest is never read."""
    parts: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_bytes(READ_CHUNK):
            parts.append(chunk)
            size += len(chunk)
            if size > cap:
                return b"".join(parts)[:cap], True
    finally:
        response.close()
    return b"".join(parts), False


def transport_error(exc: Exception, request: Any) -> Exception:
    """An error of the connection while the body was read, as openai's own (its timeout or
    connection error, retried as such), whichever httpx package the client runs on (httpx
    and httpx2: transport.py); anything else as it is."""
    import openai  # here, not at the top: see analyzers/llm/__init__.py
    if isinstance(exc, TIMEOUTS):
        return openai.APITimeoutError(request=request)
    if isinstance(exc, TRANSPORT_ERRORS):
        return openai.APIConnectionError(request=request)
    return exc


def parse_body(body: bytes, truncated: bool) -> object:
    """The JSON of a body; of a cut body, as far as it goes (raises ValueError when it is not
    JSON)."""
    return jiter.from_json(body, partial_mode="trailing-strings" if truncated else "off")


def texts_reached(data: object, n: int) -> list[str]:
    """The texts of the first `n` choices a cut body reached, each as far as it goes ("" for a
    choice cut before its text); [] when it reached no choice."""
    choices = data.get("choices") if isinstance(data, dict) else None
    texts: list[str] = []
    for choice in (choices if isinstance(choices, list) else [])[:n]:
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        texts.append(content if isinstance(content, str) else "")
    return texts


def cut(text: str, cap: int, *, ended: bool = True) -> str:
    """`text` when it fits in `cap` bytes; else its start, cut at a character, and CUT_MARK.
    `ended`: whether the answer came whole (one that stops where its body was cut is marked
    cut whatever its size)."""
    data = text.encode("utf-8", "surrogatepass")
    if ended and len(data) <= cap:
        return text
    room = max(0, cap - len(CUT_MARK.encode()))
    return data[:room].decode("utf-8", "ignore") + CUT_MARK


def mark(text: str, cap: int, *, ended: bool = True, at_limit: bool = False) -> str:
    """`text` as it is stored: cut (`cut`), else, where the server stopped it at max_tokens
    (`at_limit`), ending in LIMIT_MARK, within `cap` bytes either way."""
    if not at_limit:
        return cut(text, cap, ended=ended)
    kept = cut(text, cap - len(LIMIT_MARK.encode()), ended=ended)
    return kept if kept.endswith(CUT_MARK) else kept + LIMIT_MARK


def uncut(text: str) -> tuple[str, bool]:
    """(the answer without CUT_MARK, whether it was cut)."""
    if text.endswith(CUT_MARK):
        return text[: -len(CUT_MARK)], True
    return text, False


def unmark(text: str) -> tuple[str, bool, bool]:
    """(the answer without its mark, whether it was cut, whether the server stopped it at
    max_tokens)."""
    if text.endswith(LIMIT_MARK):
        return text[: -len(LIMIT_MARK)], False, True
    return (*uncut(text), False)


def unfinished(cut: int, at_limit: int, max_tokens: int) -> str | None:
    """Why answers counted `cut` or `at_limit` (Usage's) are not whole, in words; None when
    none is."""
    if cut:
        return f"the answer ran past its {max_tokens}-token limit and was cut"
    if at_limit:
        return (f"the server stopped the answer at its {max_tokens}-token limit (finish_reason "
                '"length"), unfinished')
    return None


def cut_note(count: int) -> str:
    """What a report or a finding says when some of the model's answers were cut."""
    return (f"{count:,} of the model's answers went past max_tokens and {'was' if count == 1 else 'were'} cut "
            f"at {BYTES_PER_TOKEN} bytes per token of it.")
