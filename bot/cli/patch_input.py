"""The change `rtcbot review` reads: a patch file, stdin, or `git diff BASE..HEAD`, refused
before it is parsed when it is over a documented size, in bounded memory.

A patch is read in chunks while its file and hunk headers are counted; the first limit passed
(bytes, files, hunks) stops the read with one message, so a 50 MB diff costs what was read up
to the limit, never a parse of it all. Bad input — a missing path, a folder, an empty or
oversized diff — is `BadInput`: one line, exit 2 (`rtcbot review --help`)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

import click

from analyzers.context import HeadFileTooLarge
from bot.cli.commands._git import git_stream
from bot.cli.commands._git import run as git_run

MAX_PATCH_BYTES = 16 * 2**20  # 16 MiB: what a review of a change can read (a large PR's diff is a few MB)
MAX_PATCH_FILES = 3_000  # GitHub lists at most 3,000 files of a pull request
MAX_PATCH_HUNKS = 10_000  # each hunk is LLM work (EditingRTC: 5 requests a hunk)
CHUNK = 1 << 20


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class BadInput(click.ClickException):
    """Input the command cannot take: one line on stderr, exit 2."""

    exit_code = 2


def limits_line() -> str:
    """The limits in words (the help and the refusals say them alike)."""
    return (f"at most {MAX_PATCH_BYTES // 2**20} MiB, {MAX_PATCH_FILES:,} files and {MAX_PATCH_HUNKS:,} hunks")


@dataclass
class Counter:
    """File and hunk headers counted line by line over chunks (a line may span two)."""

    name: str
    size: int = 0
    files: int = 0
    hunks: int = 0
    _tail: bytes = b"\n"  # what followed the last newline: the start of a line still open

    def feed(self, chunk: bytes) -> None:
        """Count `chunk`; BadInput as soon as a limit is passed."""
        self.size += len(chunk)
        if self.size > MAX_PATCH_BYTES:
            self.refuse(f"larger than {MAX_PATCH_BYTES // 2**20} MiB")
        cut = chunk.rfind(b"\n")
        if cut < 0:
            self._tail = (self._tail + chunk)[:17]  # the line's start is what is counted
            return
        text = self._tail + chunk[:cut + 1]
        self.files += text.count(b"\ndiff --git ")
        self.hunks += text.count(b"\n@@ -")
        self._tail = b"\n" + chunk[cut + 1:][:16]
        if self.files > MAX_PATCH_FILES:
            self.refuse(f"more than {MAX_PATCH_FILES:,} files")
        if self.hunks > MAX_PATCH_HUNKS:
            self.refuse(f"more than {MAX_PATCH_HUNKS:,} hunks")

    def refuse(self, why: str) -> None:
        raise BadInput(f"{self.name}: {why}; not read (a review reads {limits_line()}; split the change)")


def read_bounded(stream: Readable, name: str) -> bytes:
    """All of `stream`, counted as it is read; BadInput at the first limit passed."""
    counter = Counter(name)
    data = bytearray()
    while chunk := stream.read(CHUNK):
        counter.feed(chunk)
        data += chunk
    return bytes(data)


def read_patch(path: str, stdin: BinaryIO) -> bytes:
    """PATCH_FILE ('-': stdin), within the limits."""
    if path == "-":
        data = read_bounded(stdin, "stdin")
        if not data.strip():
            raise BadInput("stdin: the input is empty, not a diff")
        return data
    p = Path(path)
    if not p.exists():
        raise BadInput(f"{path}: no such file")
    if p.is_dir():
        raise BadInput(f"{path}: is a directory, not a patch file")
    if p.stat().st_size > MAX_PATCH_BYTES:
        Counter(path).refuse(f"larger than {MAX_PATCH_BYTES // 2**20} MiB")
    try:
        with p.open("rb") as fh:
            data = read_bounded(fh, path)
    except OSError as e:
        raise BadInput(f"cannot read {path}: {e.strerror}") from None
    if not data.strip():
        raise BadInput(f"{path}: the input is empty, not a diff")
    return data


def read_range(git_range: str, cwd: Path) -> bytes:
    """`git diff BASE..HEAD` in `cwd`, within the limits (git is stopped at the first passed)."""
    if ".." not in git_range:
        raise click.BadParameter("expected BASE..HEAD", param_hint="--git")
    data = git_stream(["diff", "--no-color", "--no-ext-diff", "--no-textconv", git_range], cwd,
                      lambda out: read_bounded(out, f"git diff {git_range}"))
    if not data.strip():
        raise BadInput(f"git diff {git_range} is empty: nothing to review")
    return data


def git_loader(cwd: Path, head: str, limit: int) -> Callable[[str], str | None]:
    """A file at `head`; one over `limit` bytes is never read (HeadFileTooLarge)."""
    def load(path: str) -> str | None:
        try:  # its size, then the blob as stored (`cat-file` applies no textconv filter)
            size = git_run(["cat-file", "-s", f"{head}:{path}"], cwd)
            if size.returncode != 0 or not size.stdout.strip().isdigit():
                return None
            if int(size.stdout) > limit:
                raise HeadFileTooLarge(int(size.stdout), limit)
            out = git_run(["cat-file", "blob", f"{head}:{path}"], cwd)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.decode("utf-8", errors="replace") if out.returncode == 0 else None

    return load


def read_change(patch: str | None, git_range: str | None, repo: Path | None, limit: int,
                stdin: BinaryIO) -> tuple[bytes, Callable[[str], str | None] | None]:
    """The diff, and a file at the head (at most `limit` bytes) where a git range names it."""
    if not git_range:
        assert patch is not None
        return read_patch(patch, stdin), None
    cwd = repo or Path.cwd()
    data = read_range(git_range, cwd)
    return data, git_loader(cwd, git_range.split("..")[-1].lstrip(".") or "HEAD", limit)
