"""One way to show a URL: without its userinfo and without its query's values, so that an
endpoint's credentials (`http://user:PASSWORD@host/v1?api-key=SECRET`) never reach a check run,
an output, a log line or a health answer. Every place rtcbot shows or logs a URL goes through
here: LLM errors (analyzers/llm/errors.py), the log formatters (bot/core/logs.py), the database's
and the queue's places (bot/store/db.py, bot/app/queue.py), /healthz (bot/app/web.py), `doctor`.
Pure; in the lowest layer, so that every other may import it.

    redact_url("http://user:pw@host:8080/v1?api-key=s3&x")  # 'http://***@host:8080/v1?api-key=***&x'
    redact_urls("cannot reach http://u:p'w@h/v1 (model 'm')")  # "cannot reach http://***@h/v1 (model 'm')"

Where a URL starts is plain (a scheme and `://`); where it ends is not, in prose, so each part
is read the way that hides more (docs/security.md, "Credentials in URLs"):

- the authority runs to the first `/`, `?` or `#` on the line, and its userinfo to the last `@`
  before that, whatever it holds (quotes, brackets, backticks, spaces: a password may hold any
  character but those three, which end the authority for every parser and a client sends encoded);
  a host without userinfo ends at a space, a quote, a bracket or a comma;
- the path, query and fragment run to the next space (to the last matching quote or bracket
  when one opens the URL); then urllib's `urlsplit` parses what is left, and every query value
  is hidden, and a bare parameter too unless it is a short word (`?x&verbose`; not `?sk-3f9a…`).

The fragment is kept (`rtcbot qualify URL#NAME` names a model with it; a client never sends it),
its values hidden where it has `key=value` pairs.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

HIDDEN = "***"
UNREADABLE = "(a URL that cannot be read)"
_SCHEME = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://")
_AUTHORITY_END = re.compile(r"[/?#\n]")
_HOST_END = re.compile(r"""[\s'"<>`(){}\[\],;]""")  # [ and ] only outside an IPv6 literal (below)
_SPACE = re.compile(r"\s")
_CLOSER = {"'": "'", '"': '"', "<": ">", "(": ")", "[": "]", "{": "}", "`": "`"}
_TRAILING = ".,;:!)"  # sentence punctuation after a URL without a query
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]{0,15}")  # a bare query parameter shown as it is (a flag)


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _host_end(text: str, host: int, limit: int) -> int:
    if text.startswith("[", host):  # an IPv6 literal, to its bracket
        close = text.find("]", host, limit)
        host = close + 1 if close >= 0 else host + 1
    m = _HOST_END.search(text, host, limit)
    return m.start() if m else limit


def _span_end(text: str, start: int, authority: int) -> int:
    """Where the URL whose scheme starts at `start` (its authority at `authority`) ends."""
    line = _line_end(text, authority)
    m = _AUTHORITY_END.search(text, authority, line)
    auth_end = m.start() if m else line
    at = text.rfind("@", authority, auth_end)
    host_end = _host_end(text, at + 1 if at >= 0 else authority, auth_end)
    if host_end < auth_end or auth_end == line:
        return host_end
    space = _SPACE.search(text, auth_end, line)
    end = space.start() if space else line
    closer = _CLOSER.get(text[start - 1]) if start else None
    if closer is not None and (last := text.rfind(closer, auth_end, end)) >= 0:
        end = last
    if "?" not in text[auth_end:end]:
        while end > auth_end and text[end - 1] in _TRAILING:
            end -= 1
    return end


def url_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each URL-like span of `text`: a scheme, `://`, and as much after it as
    the rules in the module's docstring take."""
    spans: list[tuple[int, int]] = []
    for m in _SCHEME.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue
        spans.append((m.start(), _span_end(text, m.start(), m.end())))
    return spans


def redact_url(url: str) -> str:
    """`url` with its userinfo replaced by `***`, each query value by `***` (the keys kept, to say
    which parameter was set) and a bare parameter that is not a short word by `***`."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    m = _AUTHORITY_END.search(rest)
    auth_end = m.start() if m else len(rest)
    userinfo, at, host = rest[:auth_end].rpartition("@")
    try:
        parts = urlsplit(f"{scheme}://{host}{rest[auth_end:]}")
        parts.port  # noqa: B018  (an unreadable port raises here)
    except ValueError:  # an unreadable port or IPv6 host: shown as nothing of itself
        return UNREADABLE
    out = f"{scheme}://{HIDDEN + '@' if at else ''}{host}{parts.path}"
    tail = rest[auth_end:]
    if "?" in tail.split("#", 1)[0]:
        out += "?" + _hide_values(parts.query)
    if "#" in tail:
        out += "#" + (_hide_values(parts.fragment) if "=" in parts.fragment else parts.fragment)
    return out


def _hide_values(query: str) -> str:
    return "&".join(_hide_value(p) for p in query.split("&")) if query else ""


def _hide_value(pair: str) -> str:
    key, eq, value = pair.partition("=")
    if not eq:
        return pair if not pair or _WORD.fullmatch(pair) else HIDDEN
    return f"{key}={HIDDEN}" if value else pair


def redact_urls(text: str) -> str:
    """`text` with every URL-like span in it redacted (`redact_url`)."""
    if "://" not in text:
        return text
    out, at = [], 0
    for start, end in url_spans(text):
        out += [text[at:start], redact_url(text[start:end])]
        at = end
    return "".join(out) + text[at:]


def redact_data(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings, scalars) with every URL in its strings redacted."""
    if isinstance(value, str):
        return redact_urls(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value
