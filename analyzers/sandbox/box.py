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

In `bwrap` mode runs go to warm runners (analyzers/sandbox/runner.py): one bubblewrap sandbox
per slot, started once and reused, each run in PID, mount, IPC, UTS and user namespaces of its
own inside it, with its own work folder, /tmp, /dev/shm and /proc; a runner gets one fresh uid
(as root) for all its runs. Where no runner can start, every run starts its own bubblewrap.

This module chooses the mode and starts runs, in a warm runner or one-shot; the command lines
they start with are analyzers/sandbox/commands.py's, the launcher, the first program of every
run, is analyzers/sandbox/launcher.py, the watchdog analyzers/sandbox/watch.py, and a run's
limits, folder, result and files analyzers/sandbox/run.py.
"""

from __future__ import annotations

import marshal
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from analyzers.sandbox.commands import SANDBOX_PATH, WORK, Commands
from analyzers.sandbox.run import (
    JVM_OVERHEAD_MB,
    Limits,
    RawRun,
    SandboxUnavailable,
    collect_files,
    find_python,
    prepare_folder,
    read_outputs,
    read_status,
    tail_line,
    write_private,
)
from analyzers.sandbox.runner import Runner, RunnerFailed
from analyzers.sandbox.watch import CaseWatch, Watch, kill_uid, tree_bytes

__all__ = ["JVM_OVERHEAD_MB", "MODES", "NOT_ISOLATED", "Limits", "RawRun", "Sandbox", "SandboxUnavailable"]

MODES = ("auto", "bwrap", "userns", "none")
NOT_ISOLATED = "not isolated (sandbox: none)"
_DEFAULT_LIMITS = Limits()


_PROBES: dict[tuple[str, int], str | None] = {}
_PROBE_LOCK = threading.Lock()


class Sandbox:
    """Runs untrusted commands, one per slot at a time; `slots` bounds the parallel runs."""

    def __init__(self, slots: int | None = None, isolate_network: bool = True, python: str | None = None,
                 mode: str = "auto", reuse: bool = True):
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
        self.commands = Commands(self.python, isolate_network, self.bwrap, self.setpriv)
        self.reuse = reuse  # bwrap: warm runners (analyzers/sandbox/runner.py), while they start
        self._idle: list[Runner] = []  # runners not serving a run now
        self._closer = weakref.finalize(self, _close_runners, self._idle)
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
                    _PROBES[key] = None if ok else (tail_line(raw.stderr) or f"exit code {raw.exit_code}")
                except OSError as e:
                    _PROBES[key] = str(e)
            return _PROBES[key]

    # -- one run ---------------------------------------------------------------------------
    def run(self, argv: Sequence[str], *, files: Mapping[str, bytes] | None = None, stdin: bytes = b"",
            limits: Limits = _DEFAULT_LIMITS, address_space: bool = True, setup: Callable[[Path], None] | None = None,
            collect: Sequence[str] = ()) -> tuple[RawRun, dict[str, bytes]]:
        """Run argv in a fresh work folder holding `files` (plus what `setup` puts there);
        returns the run and the `collect`ed files (globs relative to the work folder).
        address_space=False: the program bounds its own heap (a JVM), so no RLIMIT_AS, and
        the whole-run memory limit is memory_mb + JVM_OVERHEAD_MB."""
        with self._slots:
            if self.mode == "bwrap" and self.reuse:
                got = self._run_reused(argv, files or {}, stdin, limits, address_space, setup, collect)
                if got is not None:
                    return got
            uid = self._new_uid()
            root = Path(tempfile.mkdtemp(prefix="rtcbot-run-", dir=self.tmp_root))
            try:
                return self._run(uid, root, argv, files or {}, stdin, limits, address_space, setup, collect)
            finally:
                if uid is not None and self.mode == "none":
                    kill_uid(uid)
                shutil.rmtree(root, ignore_errors=True)

    def close(self) -> None:
        """End the warm runners (they also end with this object, or with this process)."""
        self._closer()

    # -- a run in a warm runner (bwrap) ------------------------------------------------------
    def _runner(self) -> Runner | None:
        """An idle runner, else a new one; None (and no more tries) when none can start."""
        with self._lock:
            while self._idle:
                runner = self._idle.pop()
                if runner.alive():
                    return runner
                runner.close()
        uid = self._new_uid()
        folder = Path(tempfile.mkdtemp(prefix="rtcbot-runner-", dir=self.tmp_root))
        if uid is not None:
            os.chown(folder, uid, uid)
        runner = Runner(folder, uid)
        try:
            commands = self.commands
            runner.start(lambda sock_fd, info_fd: commands.as_uid(commands.runner(folder, sock_fd, info_fd), uid))
        except RunnerFailed:
            self.reuse = False
            return None
        return runner

    def _run_reused(self, argv: Sequence[str], files: Mapping[str, bytes], stdin: bytes, limits: Limits,
                    address_space: bool, setup: Callable[[Path], None] | None,
                    collect: Sequence[str]) -> tuple[RawRun, dict[str, bytes]] | None:
        """The run in a warm runner; None where none can start (then it runs the one-shot way)."""
        for _ in range(2):  # a runner found dead before the run started: once more, on a fresh one
            runner = self._runner()
            if runner is None:
                return None
            root = runner.folder_for_run()
            keep = False
            try:
                work = prepare_folder(root, files, stdin, setup, runner.uid, self.mode, runner=True)
                request = {"argv": self.commands.program(argv), "cwd": WORK, "tmp_bytes": limits.disk_mb << 20,
                           "rlimits": self.commands.rlimits(self.mode, limits, runner.uid, address_space, others=1),
                           "env": {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": WORK}}
                write_private(root / "request", marshal.dumps(request, 4))
                if runner.uid is not None:
                    os.lchown(root / "request", runner.uid, runner.uid)
                t0 = time.monotonic()
                try:
                    pid, pidfd = runner.submit(root.name)
                except RunnerFailed:
                    runner.close()
                    continue
                watch = CaseWatch(pid, pidfd, work, tree_bytes(work) + (limits.disk_mb << 20),
                                  (limits.memory_mb + (0 if address_space else JVM_OVERHEAD_MB)) << 10)
                try:
                    watch.wait(limits.wall_s)
                finally:
                    os.close(pidfd)
                wall = time.monotonic() - t0
                ended = runner.ended()
                keep = ended is not None
                fallback = (os.waitstatus_to_exitcode(ended[0]), ended[2], ended[1]) if ended else (-9, 0.0, 0)
                return self._result(root, work, (root / "status").read_bytes(), fallback, watch, wall, limits,
                                    collect)
            finally:
                shutil.rmtree(root, ignore_errors=True)
                if keep:
                    with self._lock:
                        self._idle.append(runner)
                else:
                    runner.close()
        return None

    def _new_uid(self) -> int | None:
        if not self.as_root:
            return None
        with self._lock:
            self._uid_next = (self._uid_next + 1) % 1_000_000
            return self._uid_base + self._uid_next

    def _run(self, uid: int | None, root: Path, argv: Sequence[str], files: Mapping[str, bytes],
             stdin: bytes, limits: Limits, address_space: bool, setup: Callable[[Path], None] | None,
             collect: Sequence[str]) -> tuple[RawRun, dict[str, bytes]]:
        work = prepare_folder(root, files, stdin, setup, uid, self.mode)
        disk_cap = tree_bytes(work) + (limits.disk_mb << 20)
        memory_cap_kb = (limits.memory_mb + (0 if address_space else JVM_OVERHEAD_MB)) << 10
        status_r, status_w = os.pipe()
        info_r, info_w = os.pipe()
        try:
            cfg = self.commands.config(self.mode, uid, root, work, limits, address_space, status_w, info_w)
            launcher = self.commands.launcher(self.mode, work, cfg, self.commands.program(argv), limits)
            cmd, ids = self.commands.as_uid(launcher, uid)
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
            _kill_none(proc.pid, uid)
        fallback = (proc.returncode, ru.ru_utime + ru.ru_stime, int(ru.ru_maxrss))
        return self._result(root, work, status_text, fallback, watch, wall, limits, collect)

    def _result(self, root: Path, work: Path, status_text: bytes, fallback: tuple[int, float, int],
                watch: Watch | CaseWatch, wall: float, limits: Limits,
                collect: Sequence[str]) -> tuple[RawRun, dict[str, bytes]]:
        """The run as the launcher's status (else `fallback`: exit code or -signal, CPU
        seconds, peak RSS), its files and its watch say."""
        code, cpu_s, max_rss_kb = read_status(status_text, fallback)
        out, err, truncated = read_outputs(root, limits.output_kb << 10)
        return RawRun(
            exit_code=code if code >= 0 else None, signal=-code if code < 0 else None, wall_s=wall,
            cpu_s=cpu_s, max_rss_kb=max(max_rss_kb, 0), stdout=out, stderr=err,
            timed_out=watch.timed_out, output_truncated=truncated,
            network_isolated=self.mode != "none" and self.isolate_network,
            notes=[NOT_ISOLATED] if self.mode == "none" else [],
            memory_exceeded=watch.memory_exceeded, disk_exceeded=watch.disk_exceeded,
            peak_memory_kb=watch.peak_kb, isolation=self.mode,
        ), collect_files(work, collect)

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

def _kill_none(pid: int, uid: int | None) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if uid is not None:
        kill_uid(uid)


def _close_runners(runners: list[Runner]) -> None:
    while runners:
        runners.pop().close()
