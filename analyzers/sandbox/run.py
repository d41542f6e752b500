"""One sandboxed run's settings and what it gives back: its Limits, its RawRun, the
launcher's settings, the interpreter the sandbox runs, and the run's files (its folder
prepared, written private, read back: stdout, stderr, the launcher's status, collected
outputs). analyzers/sandbox/box.py starts runs, one-shot or in a warm runner
(analyzers/sandbox/runner.py)."""

from __future__ import annotations

import json
import marshal
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzers.code.paths import safe_join

JVM_OVERHEAD_MB = 256  # a JVM's memory beyond its -Xmx heap (metaspace, code cache, threads)


class SandboxUnavailable(RuntimeError):
    """No sandbox of the requested mode can run here; str() is the one line to show."""


@dataclass(frozen=True)
class Limits:
    """Limits of one run. memory_mb: the whole run's memory (every process together; for a
    JVM, its heap, plus JVM_OVERHEAD_MB for the whole run) and each Python process's address
    space; nproc: processes and threads of the run; fsize_mb: one file; disk_mb: what the run
    may add to its work folder, and the size of its /tmp; output_kb: stdout read back."""

    wall_s: float = 10.0
    cpu_s: float = 10.0
    memory_mb: int = 2048
    nproc: int = 64
    fsize_mb: int = 64
    output_kb: int = 16 * 1024
    disk_mb: int = 256


@dataclass
class RawRun:
    exit_code: int | None
    signal: int | None
    wall_s: float
    cpu_s: float
    max_rss_kb: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    output_truncated: bool
    network_isolated: bool
    notes: list[str]
    memory_exceeded: bool = False
    disk_exceeded: bool = False
    peak_memory_kb: int = 0  # all the run's processes together, as the watchdog saw them
    isolation: str = "bwrap"



def launcher_config(cfg: dict[str, object]) -> str:
    """The launcher's settings as one argument: marshal (format 4, read alike by every Python
    3.4+) in hex. The launcher runs before every sandboxed program, so its start-up is paid per
    test case: `marshal` and `_signal` are built into the interpreter, where importing `json`
    and `signal` (re, enum, ...) cost ~8 ms a run, half of the launcher's CPU."""
    return marshal.dumps(cfg, 4).hex()


def _others_can_exec(path: str) -> bool:
    """Whether a user who is neither owner nor group can run `path`."""
    real = os.path.realpath(path)
    try:
        if not os.stat(real).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(real)
        while True:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
            if parent == "/":
                return True
            parent = os.path.dirname(parent)
    except OSError:
        return False


def find_python(as_other: bool) -> str:
    """A Python 3 for the sandbox: the system's (under /usr, bound read-only) when there is
    one, else ours (its prefix is then bound read-only as well)."""
    for c in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        if c and os.path.exists(c) and (not as_other or _others_can_exec(c)):
            return os.path.realpath(c)
    raise SandboxUnavailable("no Python interpreter the sandbox can run")


def write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def prepare_folder(root: Path, files: Mapping[str, bytes], stdin: bytes, setup: Callable[[Path], None] | None,
                   uid: int | None, mode: str, runner: bool = False) -> Path:
    """The run's folder: work/ with `files` (and what `setup` puts there), stdin, and
    (userns) the new root's mount point; as root, owned by the run's uid. In a runner,
    the run's PID 1 opens the run's files itself: they are the run's uid's too."""
    work = root / "work"
    work.mkdir(mode=0o700)
    for name, data in files.items():
        p = safe_join(work, name)  # raises ValueError for a name that leads outside
        p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(p, data)
    if setup is not None:
        setup(work)
    newroot = root / "newroot"
    if mode == "userns":
        newroot.mkdir(mode=0o700)
    if uid is not None:
        os.chmod(root, 0o711)  # the run's uid passes through to its own folders only
        for dirpath, dirnames, filenames in os.walk(work):
            for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                os.lchown(n, uid, uid)
        if mode == "userns":
            os.lchown(newroot, uid, uid)
    os.chmod(work, 0o700)
    write_private(root / "stdin", stdin)
    for k in ("stdout", "stderr", "status"):
        write_private(root / k, b"")
        if runner and uid is not None:
            os.lchown(root / k, uid, uid)
    if runner and uid is not None:
        os.lchown(root / "stdin", uid, uid)
    return work


def read_status(text: bytes, fallback: tuple[int, float, int]) -> tuple[int, float, int]:
    """(exit code or -signal, CPU seconds, peak RSS in KiB) of the program, as the launcher
    wrote them; the launcher's own where it wrote nothing."""
    try:
        st = json.loads(text)
        return os.waitstatus_to_exitcode(int(st["wstatus"])), float(st["cpu"]), int(st["maxrss"])
    except (ValueError, KeyError, TypeError):
        return fallback


def read_outputs(root: Path, cap: int) -> tuple[bytes, bytes, bool]:
    """The run's stdout (at most `cap` bytes), the last 64 KiB of its stderr, and whether
    stdout was cut."""
    with open(root / "stdout", "rb") as f:
        out = f.read(cap + 1)
    with open(root / "stderr", "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - 64 * 1024))
        err = f.read()
    return out[:cap], err, len(out) > cap


def collect_files(work: Path, patterns: Sequence[str]) -> dict[str, bytes]:
    collected: dict[str, bytes] = {}
    for pattern in patterns:
        for p in sorted(work.glob(pattern)):
            if p.is_file() and not p.is_symlink():
                collected[str(p.relative_to(work))] = p.read_bytes()
    return collected


def tail_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else ""
