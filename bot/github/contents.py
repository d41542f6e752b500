"""A repository's files through GitHub's contents API: a head file's text (read only up to a
limit, whatever its size) and a settings file's text (at most 1 MB, UTF-8, never silently the
defaults). The path is percent-encoded (`#`, `?`, `%`, spaces, non-ASCII)."""

from __future__ import annotations

import base64
import logging
from urllib.parse import quote

from analyzers.context import HeadFileTooLarge
from bot.github.errors import GitHubError
from bot.github.transport import Transport

log = logging.getLogger("bot.github.client")  # the client's lines, under the name they always had

RAW = "application/vnd.github.raw+json"
MAX_CONFIG_BYTES = 1024 * 1024


def file_text(transport: Transport, repo: str, path: str, ref: str, *, limit: int | None = None) -> str | None:
    """A file's text at `ref`, or None when there is no such file, it is a folder (or a
    submodule), or it is over GitHub's 100 MB (`too_large`); other failures raise
    GitHubError.

    The JSON form comes first: a file of up to 1 MB in it, a larger one described by its
    `size` alone (`encoding: none`), then read with the raw media type. Over `limit` bytes
    (None: GitHub's 100 MB) it raises HeadFileTooLarge: by the `size` GitHub gives, before
    its bytes are asked for, and a raw read stops one byte past the limit whatever the
    size said (a branch `ref` may move between the two requests)."""
    url = f"/repos/{repo}/contents/{quote(path)}"
    try:
        data = transport.json("GET", url, params={"ref": ref})
        if not isinstance(data, dict) or data.get("type") != "file":
            return None  # a folder is a list; a submodule, or a symlink out of the tree, a description
        size = int(data.get("size") or 0)
        if limit is not None and size > limit:
            raise HeadFileTooLarge(size, limit)
        if data.get("encoding") == "base64":
            return base64.b64decode(str(data.get("content") or "")).decode("utf-8", "replace")
        return _raw_text(transport, url, ref, size, limit)
    except GitHubError as e:
        if e.status == 404:
            return None
        if e.status == 403 and "too_large" in e.codes:
            log.warning("GitHub will not serve %s at %s: %s", path, ref[:12], e.message)
            return None
        raise


def _raw_text(transport: Transport, url: str, ref: str, size: int, limit: int | None) -> str:
    """A file's text with the raw media type, read only up to `limit` bytes."""
    got = bytearray()
    r = transport.request("GET", url, params={"ref": ref}, accept=RAW, stream=True)
    try:
        for chunk in r.iter_bytes():
            got += chunk
            if limit is not None and len(got) > limit:
                sent = "" if "content-encoding" in r.headers else r.headers.get("content-length", "")
                raise HeadFileTooLarge(max(len(got), size, int(sent) if sent.isdigit() else 0), limit)
    finally:
        r.close()  # the rest of a file over the limit is never read: its connection goes
    return got.decode("utf-8", "replace")


def config_text(transport: Transport, repo: str, path: str, ref: str) -> str | None:
    """A settings file's text at `ref` (the JSON form, ≤ 1 MB, UTF-8), None when there is no
    such file; any other failure raises GitHubError (never silently the defaults)."""
    try:
        r = transport.request("GET", f"/repos/{repo}/contents/{quote(path)}", params={"ref": ref})
    except GitHubError as e:
        if e.status == 404:
            return None
        raise
    data = r.json()
    where = f"{path} at {ref[:12]}"
    if not isinstance(data, dict) or data.get("type") != "file":
        raise GitHubError(r.status_code, f"{where} is not a file")
    if data.get("encoding") != "base64" or int(data.get("size") or 0) > MAX_CONFIG_BYTES:
        raise GitHubError(
            r.status_code, f"{where} is larger than {MAX_CONFIG_BYTES // 1024} KB"
        )
    try:
        return base64.b64decode(str(data.get("content") or "")).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise GitHubError(r.status_code, f"{where} is not UTF-8 text") from None
