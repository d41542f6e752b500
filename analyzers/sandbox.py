"""The sandbox for untrusted programs: candidate fixes, regenerated code, a repository's tests.

Modes (the operator's choice, `Tools.sandbox` / `Sandbox(mode=…)`; never a repository's):

- `bwrap` — bubblewrap with every namespace unshared (user, mount, PID, network, IPC, UTS,
  cgroup), no further user namespaces inside, a new session, an empty environment, the system
  folders bound read-only (/usr, a few files of /etc), a fresh /proc of its own PID namespace,
  a minimal /dev, a size-limited private /tmp and /dev/shm, no /run, /home, /root or /var,
  the run's work folder as the only other writable place, and --die-with-parent.
- `userns` — the fallback where bwrap cannot run: the launcher itself unshares the same
  namespaces as an unprivileged user (ctypes), builds the same file-system view on a tmpfs
  and pivots into it; the program runs without capabilities, with no_new_privs.
- `none` — no isolation (the operator's choice on a disposable machine, e.g. GitHub's
  runners): a clean environment, rlimits and a private work folder only; every result says
  "not isolated". Whatever the program can read, it can read: the service's files, its
  network, other processes' command lines.
- `auto` (the default) — bwrap, else userns, else a refusal (`SandboxUnavailable`).

Whole-run limits, whichever the mode: a watchdog samples every process of the run (the
sandbox's own /proc, seen through its PID-1 process) and kills the whole run when their
resident anonymous memory together passes the limit (verdict MLE) or the work folder grows
past the disk limit; RLIMIT_NPROC inside the run's user namespace counts only the run's
processes; /tmp and /dev/shm are tmpfs with a size; wall time kills the whole run. When the
program ends, its PID namespace ends with it: nothing it started (setsid, double forks) lives
on. As root every run also gets a fresh unprivileged uid (RLIMIT_NPROC does not bind root),
with its own gid and no supplementary groups, set by util-linux's `setpriv` before the first
program (else by Popen, which then forks this whole process instead of using vfork).

This module chooses the mode, prepares a run's folder and starts it; the launcher, the first
program of every run, is analyzers/sandbox_launcher.py, and the watchdog analyzers/sandbox_watch.py.
"""

from __future__ import annotations

import json
import marshal
import math
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzers.paths import safe_join
from analyzers.sandbox_watch import Watch, count_user_processes, kill_uid, tree_bytes

MODES = ("auto", "bwrap", "userns", "none")
NOT_ISOLATED = "not isolated (sandbox: none)"
JVM_OVERHEAD_MB = 256  # a JVM's memory beyond its -Xmx heap (metaspace, code cache, threads)
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
WORK = "/work"  # the work folder's path inside the sandbox
# analyzers/sandbox_launcher.py, run as `python -I -S -c SOURCE`: no file to copy or bind, and it
# runs wherever this package is installed (a folder the run's uid may not read)
LAUNCHER_SOURCE = (Path(__file__).parent / "sandbox_launcher.py").read_text(encoding="utf-8")
# What of /etc a program needs: the loader's cache, the time zone, the JVM's configuration
# (/usr/bin/java links through /etc/alternatives; the JDK's conf/ links into /etc/java-N).
_ETC = ("alternatives", "ld.so.cache", "localtime", "java-11-openjdk", "java-17-openjdk", "java-21-openjdk")
_DEVICES = ("null", "zero", "full", "random", "urandom")


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


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


_PROBES: dict[tuple[str, int], str | None] = {}
_PROBE_LOCK = threading.Lock()


class Sandbox:
    """Runs untrusted commands, one per slot at a time; `slots` bounds the parallel runs."""

    def __init__(self, slots: int | None = None, isolate_network: bool = True, python: str | None = None,
                 mode: str = "auto"):
        if mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.slots = max(1, slots or os.cpu_count() or 1)
        self.isolate_network = isolate_network
        self.as_root = os.geteuid() == 0
        # A fresh uid for every run (as root), from this process's own range.
        self._uid_base = 100_000 + (os.getpid() % 2000) * 1_000_000  # below 2**31 (bwrap)
        self._uid_next = 0
        self._slots = threading.BoundedSemaphore(self.slots)
        self._lock = threading.Lock()
        self.python = python or find_python(as_other=self.as_root)
        self.tmp_root = Path(tempfile.gettempdir())
        self.bwrap = shutil.which("bwrap", path=SANDBOX_PATH)
        self.setpriv = shutil.which("setpriv", path=SANDBOX_PATH)  # util-linux
        self.mode = self._resolve(mode)

    # -- choosing a mode ------------------------------------------------------------------
    def _resolve(self, requested: str) -> str:
        if requested == "none":
            return "none"
        tried: list[str] = []
        for mode in (("bwrap", "userns") if requested == "auto" else (requested,)):
            why = self._probe(mode)
            if why is None:
                return mode
            tried.append(f"{mode}: {why}")
        raise SandboxUnavailable(
            "no sandbox for untrusted code can run here (" + "; ".join(tried) + "); install bubblewrap "
            "or allow unprivileged user namespaces, or set the sandbox mode to none on a disposable "
            "machine (programs then run without isolation)")

    def _probe(self, mode: str) -> str | None:
        """None when `mode` works here (a real run of `true`), else why not; cached."""
        if mode == "bwrap" and not self.bwrap:
            return "bwrap is not installed"
        key = (mode, os.geteuid())
        with _PROBE_LOCK:
            if key not in _PROBES:
                self.mode = mode
                try:
                    raw, _ = self.run(["/bin/true"], limits=Limits(wall_s=20, cpu_s=20, memory_mb=256))
                    ok = raw.exit_code == 0 and raw.network_isolated == self.isolate_network
                    _PROBES[key] = None if ok else (_tail_line(raw.stderr) or f"exit code {raw.exit_code}")
                except OSError as e:
                    _PROBES[key] = str(e)
            return _PROBES[key]

    # -- one run ---------------------------------------------------------------------------
    def run(self, argv: Sequence[str], *, files: Mapping[str, bytes] | None = None, stdin: bytes = b"",
            limits: Limits = Limits(), address_space: bool = True, setup: Callable[[Path], None] | None = None,
            collect: Sequence[str] = ()) -> tuple[RawRun, dict[str, bytes]]:
        """Run argv in a fresh work folder holding `files` (plus what `setup` puts there);
        returns the run and the `collect`ed files (globs relative to the work folder).
        address_space=False: the program bounds its own heap (a JVM), so no RLIMIT_AS, and
        the whole-run memory limit is memory_mb + JVM_OVERHEAD_MB."""
        self._slots.acquire()
        uid = self._new_uid()
        root = Path(tempfile.mkdtemp(prefix="rtcbot-run-", dir=self.tmp_root))
        try:
            return self._run(uid, root, argv, files or {}, stdin, limits, address_space, setup, collect)
        finally:
            if uid is not None and self.mode == "none":
                kill_uid(uid)
            shutil.rmtree(root, ignore_errors=True)
            self._slots.release()

    def _new_uid(self) -> int | None:
        if not self.as_root:
            return None
        with self._lock:
            self._uid_next = (self._uid_next + 1) % 1_000_000
            return self._uid_base + self._uid_next

    def _rlimits(self, limits: Limits, uid: int | None, address_space: bool) -> list[tuple[str, int, int]]:
        cpu = max(1, math.ceil(limits.cpu_s))
        out = [("RLIMIT_CPU", cpu, cpu + 1), ("RLIMIT_FSIZE", limits.fsize_mb << 20, limits.fsize_mb << 20),
               ("RLIMIT_CORE", 0, 0)]
        # In a user namespace of its own, RLIMIT_NPROC counts the run's processes only (the
        # namespace's PID 1 and the launcher among them). Without one, it counts all of the
        # user's processes: as root that is the run's fresh uid, else ours (allow what runs now).
        nproc = limits.nproc + 2
        if self.mode == "none" and uid is None:
            nproc = limits.nproc + count_user_processes(os.geteuid())
        out.append(("RLIMIT_NPROC", nproc, nproc))
        if address_space:
            out.append(("RLIMIT_AS", limits.memory_mb << 20, limits.memory_mb << 20))
        return out

    def _binds(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(read-only binds, symlinks) of the sandbox's file system."""
        ro = [("/usr", "/usr")]
        links: list[tuple[str, str]] = []
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                links.append((os.readlink(top), top))
            elif os.path.isdir(top):
                ro.append((top, top))
        for name in _ETC:
            p = f"/etc/{name}"
            if os.path.exists(p):
                ro.append((p, p))
        prefix = os.path.realpath(sys.base_prefix)
        if self.python.startswith(prefix + "/") and not prefix.startswith("/usr"):
            ro.append((prefix, prefix))
        return ro, links

    def _command(self, root: Path, work: Path, cfg: dict[str, object], argv: list[str],
                 limits: Limits) -> list[str]:
        """The launcher's command line (its source as `-c`), inside bwrap in that mode."""
        launcher = [self.python, "-I", "-S", "-c", LAUNCHER_SOURCE, launcher_config(cfg), *argv]
        if self.mode != "bwrap":
            return launcher
        ro, links = self._binds()
        cmd = [self.bwrap or "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
               "--new-session", "--clearenv", "--cap-drop", "ALL"]
        if not self.isolate_network:
            cmd.append("--share-net")
        for src, dst in ro:
            cmd += ["--ro-bind", src, dst]
        for target, link in links:
            cmd += ["--symlink", target, link]
        size = str(limits.disk_mb << 20)
        cmd += ["--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp",
                "--size", size, "--tmpfs", "/dev/shm", "--bind", str(work), WORK, "--chdir", WORK,
                "--remount-ro", "/", "--info-fd", str(cfg["info_fd"]), "--"]
        return [*cmd, *launcher]

    def _as_uid(self, cmd: list[str], uid: int | None) -> tuple[list[str], dict[str, object]]:
        """`cmd` run as the run's own uid and gid with no extra groups (as root), and Popen's
        arguments for that: setpriv sets them before the first program, so Popen starts it
        with vfork. Popen's own user=/group= forks this process, and a fork copies its page
        tables: ~55 ms a run in a process holding 3 GiB."""
        if uid is None:
            return cmd, {}
        if self.setpriv:
            return [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *cmd], {}
        return cmd, {"user": uid, "group": uid, "extra_groups": []}

    def _prepare(self, uid: int | None, root: Path, files: Mapping[str, bytes], stdin: bytes,
                 setup: Callable[[Path], None] | None) -> Path:
        """The run's folder: work/ with `files` (and what `setup` puts there), stdin, and
        (userns) the new root's mount point; as root, owned by the run's uid."""
        work = root / "work"
        work.mkdir(mode=0o700)
        for name, data in files.items():
            p = safe_join(work, name)  # raises ValueError for a name that leads outside
            p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _write_private(p, data)
        if setup is not None:
            setup(work)
        newroot = root / "newroot"
        if self.mode == "userns":
            newroot.mkdir(mode=0o700)
        if uid is not None:
            os.chmod(root, 0o711)  # the run's uid passes through to its own folders only
            for dirpath, dirnames, filenames in os.walk(work):
                for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                    os.lchown(n, uid, uid)
            if self.mode == "userns":
                os.lchown(newroot, uid, uid)
        os.chmod(work, 0o700)
        _write_private(root / "stdin", stdin)
        for k in ("stdout", "stderr"):
            _write_private(root / k, b"")
        return work

    def _config(self, uid: int | None, root: Path, work: Path, limits: Limits, address_space: bool,
                status_w: int, info_w: int) -> dict[str, object]:
        """The launcher's settings: pipes, rlimits, the program's clean environment, the view."""
        inside = WORK if self.mode != "none" else str(work)
        env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": inside}
        if self.mode == "none":  # no private /tmp: at least point the program at its folder
            env["TMPDIR"] = inside
        ro, links = self._binds()
        return {"status_fd": status_w, "info_fd": info_w, "rlimits": self._rlimits(limits, uid, address_space),
                "env": env, "cwd": inside, "userns": self.mode == "userns", "net": self.isolate_network,
                "newroot": str(root / "newroot"), "work": str(work), "ro": ro, "symlinks": links,
                "devices": _DEVICES, "tmp_bytes": limits.disk_mb << 20}

    def _program(self, argv: Sequence[str]) -> list[str]:
        prog = list(argv)
        if prog and prog[0] == "{python}":
            prog[0] = self.python
        prog[0] = shutil.which(prog[0], path=SANDBOX_PATH) or prog[0]
        return prog

    def _run(self, uid: int | None, root: Path, argv: Sequence[str], files: Mapping[str, bytes],
             stdin: bytes, limits: Limits, address_space: bool, setup: Callable[[Path], None] | None,
             collect: Sequence[str]) -> tuple[RawRun, dict[str, bytes]]:
        work = self._prepare(uid, root, files, stdin, setup)
        disk_cap = tree_bytes(work) + (limits.disk_mb << 20)
        memory_cap_kb = (limits.memory_mb + (0 if address_space else JVM_OVERHEAD_MB)) << 10
        status_r, status_w = os.pipe()
        info_r, info_w = os.pipe()
        try:
            cfg = self._config(uid, root, work, limits, address_space, status_w, info_w)
            cmd, ids = self._as_uid(self._command(root, work, cfg, self._program(argv), limits), uid)
        except BaseException:
            for fd in (status_r, status_w, info_r, info_w):
                os.close(fd)
            raise
        try:
            proc, watch, wall, ru = self._wait(cmd, ids, root, (status_w, info_w), info_r, work,
                                               disk_cap, memory_cap_kb, limits.wall_s)
        except BaseException:
            os.close(status_r)
            raise
        finally:
            os.close(info_r)
        with os.fdopen(status_r, "rb") as f:
            status_text = f.read()
        if self.mode == "none":
            self._kill_none(proc.pid, uid)
        code, cpu_s, max_rss_kb = _status(status_text, proc.returncode, ru)
        out, err, truncated = _outputs(root, limits.output_kb << 10)
        return RawRun(
            exit_code=code if code >= 0 else None, signal=-code if code < 0 else None, wall_s=wall,
            cpu_s=cpu_s, max_rss_kb=max(max_rss_kb, 0), stdout=out, stderr=err,
            timed_out=watch.timed_out, output_truncated=truncated,
            network_isolated=self.mode != "none" and self.isolate_network,
            notes=[NOT_ISOLATED] if self.mode == "none" else [],
            memory_exceeded=watch.memory_exceeded, disk_exceeded=watch.disk_exceeded,
            peak_memory_kb=watch.peak_kb, isolation=self.mode,
        ), _collect(work, collect)

    def _wait(self, cmd: list[str], ids: dict[str, object], root: Path, write_ends: tuple[int, int], info_r: int,
              work: Path, disk_cap: int, memory_cap_kb: int,
              wall_s: float) -> tuple[subprocess.Popen[bytes], Watch, float, resource.struct_rusage]:
        """Start `cmd` (the pipes' write ends go to the launcher only) and wait for it under
        the whole-run limits; the process, its watch, the wall time and its rusage."""
        with open(root / "stdin", "rb") as fin, open(root / "stdout", "wb") as fout, \
                open(root / "stderr", "wb") as ferr:
            t0 = time.monotonic()
            try:
                proc = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=ferr, cwd="/", env={},
                                        start_new_session=True, close_fds=True, pass_fds=write_ends,
                                        **ids)  # type: ignore[call-overload]
            finally:
                for fd in write_ends:
                    os.close(fd)
            watch = Watch(proc, info_r, work, disk_cap, memory_cap_kb, isolated=self.mode != "none")
            try:
                wstatus, ru = watch.wait(wall_s)
            finally:
                watch.finish()
            wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        return proc, watch, wall, ru

    def _kill_none(self, pid: int, uid: int | None) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if uid is not None:
            kill_uid(uid)


def _status(text: bytes, returncode: int, ru: resource.struct_rusage) -> tuple[int, float, int]:
    """(exit code or -signal, CPU seconds, peak RSS in KiB) of the program, as the launcher
    wrote them; the launcher's own where it wrote nothing."""
    try:
        st = json.loads(text)
        return os.waitstatus_to_exitcode(int(st["wstatus"])), float(st["cpu"]), int(st["maxrss"])
    except (ValueError, KeyError, TypeError):
        return returncode, ru.ru_utime + ru.ru_stime, int(ru.ru_maxrss)


def _outputs(root: Path, cap: int) -> tuple[bytes, bytes, bool]:
    """The run's stdout (at most `cap` bytes), the last 64 KiB of its stderr, and whether
    stdout was cut."""
    with open(root / "stdout", "rb") as f:
        out = f.read(cap + 1)
    with open(root / "stderr", "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - 64 * 1024))
        err = f.read()
    return out[:cap], err, len(out) > cap


def _collect(work: Path, patterns: Sequence[str]) -> dict[str, bytes]:
    collected: dict[str, bytes] = {}
    for pattern in patterns:
        for p in sorted(work.glob(pattern)):
            if p.is_file() and not p.is_symlink():
                collected[str(p.relative_to(work))] = p.read_bytes()
    return collected


def _tail_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else ""
