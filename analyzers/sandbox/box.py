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

This module chooses the mode, prepares a run's folder and starts it; the launcher, the first
program of every run, is analyzers/sandbox/launcher.py, the watchdog analyzers/sandbox/watch.py,
and a run's limits, result and files analyzers/sandbox/run.py.
"""

from __future__ import annotations

import marshal
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from analyzers.code.paths import safe_join
from analyzers.sandbox.run import (
    JVM_OVERHEAD_MB,
    Limits,
    RawRun,
    SandboxUnavailable,
    collect_files,
    find_python,
    launcher_config,
    read_outputs,
    read_status,
    tail_line,
    write_private,
)
from analyzers.sandbox.runner import RUNS, Runner, RunnerFailed
from analyzers.sandbox.watch import CaseWatch, Watch, count_user_processes, kill_uid, tree_bytes

__all__ = ["JVM_OVERHEAD_MB", "LAUNCHER_SOURCE", "MODES", "NOT_ISOLATED", "Limits", "RawRun", "Sandbox",
           "SandboxUnavailable", "find_python", "launcher_config"]

MODES = ("auto", "bwrap", "userns", "none")
NOT_ISOLATED = "not isolated (sandbox: none)"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
WORK = "/work"  # the work folder's path inside the sandbox
# analyzers/sandbox/launcher.py, run as `python -I -S -c SOURCE`: no file to copy or bind, and it
# runs wherever this package is installed (a folder the run's uid may not read)
LAUNCHER_SOURCE = (Path(__file__).with_name("launcher.py")).read_text(encoding="utf-8")
# What of /etc a program needs: the loader's cache, the time zone, the JVM's configuration
# (/usr/bin/java links through /etc/alternatives; the JDK's conf/ links into /etc/java-N).
_DEFAULT_LIMITS = Limits()
_ETC = ("alternatives", "ld.so.cache", "localtime", "java-11-openjdk", "java-17-openjdk", "java-21-openjdk")
_DEVICES = ("null", "zero", "full", "random", "urandom")


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
            runner.start(lambda sock_fd, info_fd: self._as_uid(self._runner_command(folder, sock_fd, info_fd), uid))
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
                work = self._prepare(runner.uid, root, files, stdin, setup, runner=True)
                request = {"argv": self._program(argv), "cwd": WORK, "tmp_bytes": limits.disk_mb << 20,
                           "rlimits": self._rlimits(limits, runner.uid, address_space, others=1),
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

    def _rlimits(self, limits: Limits, uid: int | None, address_space: bool,
                 others: int = 2) -> list[tuple[str, int, int]]:
        cpu = max(1, math.ceil(limits.cpu_s))
        out = [("RLIMIT_CPU", cpu, cpu + 1), ("RLIMIT_FSIZE", limits.fsize_mb << 20, limits.fsize_mb << 20),
               ("RLIMIT_CORE", 0, 0)]
        # In a user namespace of its own, RLIMIT_NPROC counts the run's processes only (the
        # namespace's PID 1 and the launcher among them: `others`; in a runner, the run's PID 1
        # only). Without one, it counts all of the user's processes: as root that is the run's
        # fresh uid, else ours (allow what runs now).
        nproc = limits.nproc + others
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
        size = str(limits.disk_mb << 20)
        return [*self._bwrap(), "--cap-drop", "ALL", "--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs",
                "/dev/shm", "--bind", str(work), WORK, "--chdir", WORK, "--remount-ro", "/",
                "--info-fd", str(cfg["info_fd"]), "--", *launcher]

    def _runner_command(self, folder: Path, sock_fd: int, info_fd: int) -> list[str]:
        """A warm runner's command line: bwrap as for one run, but with the capabilities to
        give each run its own namespaces and mounts (in the sandbox's user namespace only),
        its folder of runs at RUNS, and no work folder of its own."""
        cfg = launcher_config({"serve": True, "sock_fd": sock_fd, "runs": RUNS})
        return [*self._bwrap(runner=True), "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP", "--size", "65536",
                "--tmpfs", "/tmp", "--size", "65536", "--tmpfs", "/dev/shm", "--dir", WORK, "--bind", str(folder),
                RUNS, "--chdir", "/", "--remount-ro", "/", "--info-fd", str(info_fd), "--",
                self.python, "-I", "-S", "-c", LAUNCHER_SOURCE, cfg]

    def _bwrap(self, runner: bool = False) -> list[str]:
        """What every bwrap run shares: all namespaces, the system's folders read-only, a
        fresh /proc and a minimal /dev; no user namespace inside but a runner's (each of its
        runs gets one, where it then allows no further one)."""
        cmd = [self.bwrap or "bwrap", "--unshare-all", "--unshare-user", *([] if runner else ["--disable-userns"]),
               "--die-with-parent", "--new-session", "--clearenv"]
        if not self.isolate_network:
            cmd.append("--share-net")
        ro, links = self._binds()
        for src, dst in ro:
            cmd += ["--ro-bind", src, dst]
        for target, link in links:
            cmd += ["--symlink", target, link]
        return [*cmd, "--proc", "/proc", "--dev", "/dev"]

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
                 setup: Callable[[Path], None] | None, runner: bool = False) -> Path:
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
        write_private(root / "stdin", stdin)
        for k in ("stdout", "stderr", "status"):
            write_private(root / k, b"")
            if runner and uid is not None:
                os.lchown(root / k, uid, uid)
        if runner and uid is not None:
            os.lchown(root / "stdin", uid, uid)
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
