"""Files rtcbot reads or writes by a fixed name in a checkout (`.rtcbot/qualification.json`,
`.github/rtcbot.yml`, the Action's SARIF file), whose folder a pull request's author may have
filled with anything Git can hold: a symbolic link to `/dev/zero` or to a file of the user's,
a folder where a file should be. (A FIFO or a device cannot be committed, but a checkout is a
folder anyone may have touched.) Here, one rule:

- every component below the checkout's root is opened without following a symbolic link (a
  link anywhere on the way is refused, never followed, even one that stays inside);
- only a regular file is read, and at most `limit` bytes of it (more is refused, not cut);
- a write goes to a new temporary file beside the target, renamed over it in the same folder
  (opened through the same link-free chain), so a reader never sees half a file and a link
  committed in the target's place is refused, never written through; a results log that grows
  a line at a time (`rtcbot eval`'s, to resume) is appended to through the same chain, never
  through a link;
- every refusal is `CheckoutFileError`, one line that names the file as it was asked for.

The checkout's root itself is trusted (the operator named it: `--repo`, the workspace); it is
resolved once, and everything below it is held to the rule.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from analyzers.code.paths import path_problem, printable

MiB = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class CheckoutFileError(ValueError):
    """A fixed-name file in a checkout that rtcbot will not read or write (one line)."""


def _shown(rel: str) -> str:
    return f"`{printable(rel)}`"


def _size(limit: int) -> str:
    if limit % MiB == 0:
        return f"{limit // MiB} MiB"
    return f"{limit // 1024} KiB" if limit % 1024 == 0 else f"{limit} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link (rtcbot follows no link in a checkout)"
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    return "not a regular file"


def split(path: Path) -> tuple[Path, str]:
    """(root, rel) for a path given on a command line: a relative path of plain components is
    held to the rule from the working folder down; any other (absolute, with `..`) from its
    own folder, so that only its last component is."""
    rel = path.as_posix()
    if not path.is_absolute() and path_problem(rel) is None:
        return Path.cwd(), rel
    return path.parent, path.name


def _parts(rel: str, shown: str) -> list[str]:
    problem = path_problem(rel)
    if problem is not None:
        raise CheckoutFileError(f"{shown}: {problem}")
    return rel.split("/")


def _folder(root: Path, shown: str, parts: list[str], create: bool) -> int | None:
    """An open descriptor of the folder that holds `rel` (each component below `root` opened
    without following links; made when `create`); None when one is missing and not `create`."""
    try:
        if create:  # the root is the operator's to name: made when missing
            root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root.resolve(), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            return None
        raise CheckoutFileError(f"{shown}: no folder {printable(str(root))}") from None
    except OSError as e:
        raise CheckoutFileError(f"{shown}: the checkout {printable(str(root))} cannot be opened "
                                f"({e.strerror or type(e).__name__})") from None
    try:
        for i, part in enumerate(parts):
            where = "/".join(parts[:i + 1])
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: opened below like any other
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise CheckoutFileError(f"{shown}: {_shown(where)} is {_kind(st.st_mode)}")
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:  # replaced by a link since the stat
                why = _kind(stat.S_IFLNK) if e.errno in (errno.ELOOP, errno.ENOTDIR) else e.strerror
                raise CheckoutFileError(f"{shown}: {_shown(where)} is {why}") from None
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_regular(dfd: int, name: str, shown: str, flags: int) -> int | None:
    """`name` in the folder `dfd`, opened with `flags` when it is a regular file (None: it is
    missing and `flags` do not create it). Never through a link (O_NOFOLLOW), never held by a
    FIFO swapped in since the check (O_NONBLOCK); the open file is checked again."""
    after = "" if flags & os.O_ACCMODE == os.O_RDONLY else ": not written"
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise CheckoutFileError(f"{shown} is {_kind(st.st_mode)}{after}")
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            return None
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o644, dir_fd=dfd)
    except OSError as e:
        why = _kind(stat.S_IFLNK) if e.errno == errno.ELOOP else f"not to be opened ({e.strerror})"
        raise CheckoutFileError(f"{shown} is {why}{after}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise CheckoutFileError(f"{shown} is {_kind(mode)}{after}")
    return fd


def read_bytes(root: Path, rel: str, *, limit: int = MiB, name: str | None = None) -> bytes | None:
    """The bytes of the regular file `rel` under `root`, None when there is none; at most
    `limit` bytes. CheckoutFileError (one line) for a link on the way, a file that is not
    regular, one over `limit`, one that cannot be read. `name`: the file as messages show it
    (default `rel`)."""
    shown = _shown(name or rel)
    parts = _parts(rel, shown)
    dfd = _folder(root, shown, parts[:-1], create=False)
    if dfd is None:
        return None
    try:
        fd = _open_regular(dfd, parts[-1], shown, os.O_RDONLY)
    finally:
        os.close(dfd)
    if fd is None:
        return None
    try:
        if os.fstat(fd).st_size > limit:
            raise CheckoutFileError(f"{shown} is over {_size(limit)}")
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:  # grew since the stat
            raise CheckoutFileError(f"{shown} is over {_size(limit)}")
        return b"".join(chunks)
    except OSError as e:
        raise CheckoutFileError(f"{shown} cannot be read ({e.strerror})") from None
    finally:
        os.close(fd)


def read_text(root: Path, rel: str, *, limit: int = MiB, name: str | None = None) -> str | None:
    """`read_bytes` as UTF-8 text; CheckoutFileError when it is not UTF-8."""
    data = read_bytes(root, rel, limit=limit, name=name)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckoutFileError(f"{_shown(name or rel)} is not UTF-8 text") from None


def check_writable(root: Path, rel: str, *, name: str | None = None) -> None:
    """Refuse now what `write_text` would refuse (a link on the way or in the file's place, a
    non-regular file there), before a long run whose result it would write; writes nothing."""
    shown = _shown(name or rel)
    parts = _parts(rel, shown)
    dfd = _folder(root, shown, parts[:-1], create=False)
    if dfd is None:
        return  # folders still to be made: nothing in the way
    try:
        st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return
    finally:
        os.close(dfd)
    if not stat.S_ISREG(st.st_mode):
        raise CheckoutFileError(f"{shown} is {_kind(st.st_mode)}: not written")


def append_text(root: Path, rel: str, text: str, *, name: str | None = None) -> None:
    """Append `text` (UTF-8) to the regular file `rel` under `root` (made when missing, with the
    folders between), in one write; CheckoutFileError as `write_text`."""
    shown = _shown(name or rel)
    parts = _parts(rel, shown)
    dfd = _folder(root, shown, parts[:-1], create=True)
    assert dfd is not None  # made when missing
    try:
        fd = _open_regular(dfd, parts[-1], shown, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    finally:
        os.close(dfd)
    assert fd is not None  # O_CREAT
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def write_text(root: Path, rel: str, text: str, *, name: str | None = None) -> Path:
    """Write `text` (UTF-8) as the regular file `rel` under `root`: into a new temporary file
    in its folder, renamed over it; the folders between are made. The path written (under the
    resolved root). CheckoutFileError for a link on the way or in the file's place, or a
    non-regular file there; OSError when the disk refuses."""
    shown = _shown(name or rel)
    parts = _parts(rel, shown)
    dfd = _folder(root, shown, parts[:-1], create=True)
    assert dfd is not None  # made when missing
    name = parts[-1]
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    try:
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise CheckoutFileError(f"{shown} is {_kind(st.st_mode)}: not written")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
        try:
            try:
                data = text.encode("utf-8")
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                if st is not None:  # the file it replaces keeps its mode
                    os.fchmod(fd, stat.S_IMODE(st.st_mode))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    finally:
        os.close(dfd)
    return root.resolve().joinpath(*parts)
