"""One way to show a URL: without its userinfo and without its query's values, so that an
endpoint's credentials (`http://user:PASSWORD@host/v1?api-key=SECRET`) never reach a check run,
an output, a log line or a health answer. Every place rtcbot shows or logs a URL goes through
here: LLM errors (analyzers/llm/client.py), the log formatters (bot/core/logs.py), the database's and the
queue's places (bot/store/db.py, bot/app/queue.py), /healthz (bot/app/web.py). Pure; in the
lowest layer, so that every other may import it.

    redact_url("http://user:pw@host:8080/v1?api-key=s3&x")  # 'http://***@host:8080/v1?api-key=***&x'
    redact_urls("cannot reach http://u:p@h/v1 (model 'm')")    # "cannot reach http://***@h/v1 (model 'm')"

The fragment is kept (`rtcbot qualify URL#NAME` names a model with it; a client never sends it).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

HIDDEN = "***"
UNREADABLE = "(a URL that cannot be read)"
# a scheme, "://", then anything up to a space, a quote or an angle bracket (a URL in prose)
_URL = re.compile(r"""\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>`]+""")


def redact_url(url: str) -> str:
    """`url` with its userinfo replaced by `***` and each query value by `***` (the keys kept,
    to say which parameter was set)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:  # an unreadable port or IPv6 host: shown as nothing of itself
        return UNREADABLE
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rpartition('@')[2]}"
    query = "&".join(_hide_value(p) for p in parts.query.split("&")) if parts.query else ""
    out = url if netloc == parts.netloc else url.replace(parts.netloc, netloc, 1)  # the first: the authority
    return out if query == parts.query else out.replace(f"?{parts.query}", f"?{query}", 1)  # else as written


def _hide_value(pair: str) -> str:
    key, eq, value = pair.partition("=")
    return f"{key}={HIDDEN}" if eq and value else pair


def redact_urls(text: str) -> str:
    """`text` with every URL in it redacted (`redact_url`)."""
    return _URL.sub(lambda m: redact_url(m.group()), text) if "://" in text else text


def redact_data(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings, scalars) with every URL in its strings redacted."""
    if isinstance(value, str):
        return redact_urls(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value
