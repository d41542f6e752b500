"""Paths that come from strangers (a diff's file names, a model's answer) are data.

A name in a pull request may be Git's C-quoted form (`"b/\\303\\251vil.py"`), and it may try to
leave the folder it is written to (`../../x.py`, `/abs/x.py`, a symlink in a checkout). Here:

- `unquote_git` turns Git's quoted names back into text (octal escapes are UTF-8 bytes);
- `path_problem` says why a repository path is unsafe (absolute, `..`, `.`, empty component,
  a control character or NUL, a `.git` component, too long), or None;
- `safe_join(root, rel)` is the one way to build a path under a folder of ours: it refuses an
  unsafe `rel` and anything that resolves (symlinks followed) outside `root`;
- `printable` shows a name with its control characters escaped (one line, for a report).
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

# Linux's limits: 4096 bytes a path, 255 bytes a component.
MAX_PATH_BYTES = 4096
MAX_COMPONENT_BYTES = 255

# Git's quote_c_style escapes; any other byte is written as three octal digits.
_ESCAPES = {"a": 0x07, "b": 0x08, "t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D,
            '"': 0x22, "\\": 0x5C}
_OCTAL = re.compile(r"[0-3][0-7]{2}")


def unquote_git(name: str) -> str:
    """`name` without Git's C quoting (`"..."` with backslash escapes), else `name` itself.
    Raises ValueError for a malformed escape or bytes that are not UTF-8."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1: i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
            elif _OCTAL.fullmatch(body[i + 1: i + 4]):
                out.append(int(body[i + 1: i + 4], 8))
                i += 4
            else:
                raise ValueError(f"bad escape in the quoted name {printable(name)}")
        elif c == '"':
            raise ValueError(f"unescaped quote in the quoted name {printable(name)}")
        else:
            out += c.encode("utf-8", "surrogatepass")
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"the quoted name {printable(name)} is not UTF-8") from None


def _is_control(c: str) -> bool:
    return unicodedata.category(c) == "Cc"


def printable(name: str) -> str:
    """`name` on one line: control characters (NUL, newline, ESC, C1 …) as \\xNN escapes."""
    return "".join(f"\\x{ord(c):02x}" if _is_control(c) else c for c in name)


def path_problem(path: str) -> str | None:
    """Why `path` is not a safe relative path inside a repository, or None when it is."""
    if not path:
        return "empty path"
    if "\0" in path:
        return "NUL in the path"
    if any(_is_control(c) for c in path):
        return "control character in the path"
    if path.startswith("/"):
        return "absolute path"
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        return "the path is not valid Unicode"
    if size > MAX_PATH_BYTES:
        return f"path longer than {MAX_PATH_BYTES} bytes"
    for part in path.split("/"):
        if part == "":
            return "empty path component"
        if part in (".", ".."):
            return f"'{part}' component"
        if part.lower() == ".git":
            return "'.git' component"
        if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
            return f"path component longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def safe_join(root: Path, rel: str) -> Path:
    """`root / rel`, resolved, when `rel` is a safe relative path that stays inside `root`
    with symlinks followed; raises ValueError (one line) otherwise."""
    problem = path_problem(rel)
    if problem is not None:
        raise ValueError(f"unsafe path {printable(rel)!r}: {problem}")
    base = root.resolve()
    target = (base / rel).resolve()
    if target == base or not target.is_relative_to(base):
        raise ValueError(f"unsafe path {printable(rel)!r}: it resolves outside the work folder")
    return target


def write_inside(root: Path, rel: str, text: str) -> Path:
    """Write `text` (UTF-8) at `safe_join(root, rel)`, creating the folders between; returns
    the file written. Raises ValueError for an unsafe path, OSError when it cannot be written."""
    target = safe_join(root, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def private_file(path: Path) -> None:
    """Make `path` a file only its owner can read (0600), and its folder 0700 when this call
    creates it (a folder that exists, /tmp say, is left as it is)."""
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
