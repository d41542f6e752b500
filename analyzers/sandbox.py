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
"""

from __future__ import annotations

import json
import marshal
import math
import os
import resource
import select
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

MODES = ("auto", "bwrap", "userns", "none")
NOT_ISOLATED = "not isolated (sandbox: none)"
JVM_OVERHEAD_MB = 256  # a JVM's memory beyond its -Xmx heap (metaspace, code cache, threads)
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
WORK = "/work"  # the work folder's path inside the sandbox
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
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


# -- the launcher: runs in the sandbox (bwrap, none) or builds it (userns) --------------------

_LAUNCHER = r"""
import _signal as signal, marshal, os, resource, sys
cfg = marshal.loads(bytes.fromhex(sys.argv[1])); argv = sys.argv[2:]
status_fd = cfg["status_fd"]

def userns_setup():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def chk(rc, what):
        if rc != 0:
            e = ctypes.get_errno(); raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    def mount(src, tgt, fs, flags, data=None):
        enc = lambda s: None if s is None else s.encode()
        chk(libc.mount(enc(src), enc(tgt), enc(fs), ctypes.c_ulong(flags), enc(data)), "mount " + tgt)
    PDEATHSIG = 1
    libc.prctl(PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    uid, gid = os.getuid(), os.getgid()
    flags = 0x10000000 | 0x00020000 | 0x20000000 | 0x08000000 | 0x04000000  # user ns mnt pid ipc uts
    if cfg["net"]:
        flags |= 0x40000000
    chk(libc.unshare(flags), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)), ("gid_map", "%d %d 1" % (gid, gid))):
        with open("/proc/self/" + name, "w") as f:
            f.write(text)
    info = cfg["info_fd"]
    child = os.fork()
    if child:  # the outer process: report the sandbox's PID 1, wait for it
        os.write(info, b'{"child-pid": %d}' % child); os.close(info); os.close(status_fd)
        while True:
            try:
                pid, st = os.waitpid(child, 0)
                os._exit(os.waitstatus_to_exitcode(st) & 0xFF)
            except InterruptedError:
                continue
    os.close(info)
    libc.prctl(PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
    MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = cfg["newroot"]
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    def locked(path):
        f = os.statvfs(path).f_flag
        out = 0
        for st, ms in ((2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, 1024), (2048, 2048), (4096, 1 << 21)):
            if f & st:
                out |= ms
        return out
    def bind(src, dst, rw=False):
        tgt = root + dst
        if os.path.isdir(src):
            os.makedirs(tgt, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(tgt), exist_ok=True); open(tgt, "a").close()
        mount(src, tgt, None, MS_BIND | MS_REC)
        if not rw:
            mount(None, tgt, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | locked(tgt))
    for src, dst in cfg["ro"]:
        bind(src, dst)
    for target, link in cfg["symlinks"]:
        os.makedirs(os.path.dirname(root + link), exist_ok=True); os.symlink(target, root + link)
    os.makedirs(root + "/dev")
    mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID, "mode=0755,size=64k")
    for d in cfg["devices"]:
        bind("/dev/" + d, "/dev/" + d, rw=True)
    for n, t in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                 ("stderr", "/proc/self/fd/2")):
        os.symlink(t, root + "/dev/" + n)
    for d in ("/tmp", "/dev/shm"):
        os.makedirs(root + d)
        mount("tmpfs", root + d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=%d" % cfg["tmp_bytes"])
    os.makedirs(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    bind(cfg["work"], cfg["cwd"], rw=True)
    os.makedirs(root + "/.old")
    nr = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}[os.uname().machine]
    chk(libc.syscall(nr, root.encode(), (root + "/.old").encode()), "pivot_root")
    os.chdir("/")
    chk(libc.umount2(b"/.old", 2), "umount old root")
    os.rmdir("/.old")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)

if cfg.get("userns"):
    try:
        userns_setup()
    except Exception as e:
        sys.stderr.write("sandbox: %s\n" % e); sys.stderr.flush(); os._exit(125)
os.chdir(cfg["cwd"]); os.umask(0o077)
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
# The program runs in a child, so that its peak RSS is its own (a process's max RSS starts
# from the memory of whatever it was forked from); this process reaps every orphan.
pid = os.fork()
if pid == 0:
    os.close(status_fd)
    if cfg.get("userns"):
        os.setsid()
        import ctypes
        ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    for sig in ("SIGPIPE", "SIGXFSZ", "SIGXCPU"):
        signal.signal(getattr(signal, sig), signal.SIG_DFL)
    for name, soft, hard in cfg["rlimits"]:
        resource.setrlimit(getattr(resource, name), (soft, hard))
    try:
        os.execve(argv[0], argv, cfg["env"])
    except OSError as e:
        sys.stderr.write("sandbox: cannot run %s: %s\n" % (argv[0], e.strerror)); os._exit(127)
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
while True:
    try:
        got, wstatus, ru = os.wait4(-1, 0)
    except ChildProcessError:
        os._exit(126)
    if got == pid:
        break
os.write(status_fd, b'{"wstatus": %d, "maxrss": %d, "cpu": %.6f}' % (wstatus, ru.ru_maxrss, ru.ru_utime + ru.ru_stime))
os._exit(0)
"""


def _launcher_config(cfg: dict[str, object]) -> str:
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


def _user_processes(uid: int, live_only: bool = False) -> list[int]:
    """Pids of uid's processes (without zombies when live_only)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid != uid:
                    continue
                if live_only and _proc_state(f"/proc/{d}") in (b"Z", b"X"):
                    continue
                pids.append(int(d))
            except (OSError, IndexError):
                continue
    return pids


def _proc_state(proc_dir: str) -> bytes:
    with open(f"{proc_dir}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[-1].split()[0]


def _session_processes(sid: int) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[-1].split()[3]) == sid:
                        pids.append(int(d))
            except (OSError, IndexError, ValueError):
                continue
    return pids


def _anon_kb(proc_dir: str) -> int:
    """Resident memory of a process that is not file-backed (statm: resident - shared)."""
    try:
        with open(f"{proc_dir}/statm", "rb") as f:
            parts = f.read().split()
        return max(0, int(parts[1]) - int(parts[2])) * _PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


def _tree_bytes(path: Path) -> int:
    total = 0
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(e.path)
        except OSError:
            continue
    return total


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
                self._kill_uid(uid)
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
            nproc = limits.nproc + _count_user_processes(os.geteuid())
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

    def _command(self, work: Path, cfg: dict[str, object], argv: list[str], limits: Limits,
                 info_w: int) -> list[str]:
        launcher = [self.python, "-I", "-S", "-c", _LAUNCHER]
        if self.mode != "bwrap":
            return [*launcher, _launcher_config(cfg), *argv]
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
                "--remount-ro", "/", "--info-fd", str(info_w), "--"]
        return [*cmd, *launcher, _launcher_config(cfg), *argv]

    def _run(self, uid: int | None, root: Path, argv: Sequence[str], files: Mapping[str, bytes],
             stdin: bytes, limits: Limits, address_space: bool, setup: Callable[[Path], None] | None,
             collect: Sequence[str]) -> tuple[RawRun, dict[str, bytes]]:
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
        disk_base = _tree_bytes(work)
        _write_private(root / "stdin", stdin)
        inside = WORK if self.mode != "none" else str(work)
        env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": inside}
        if self.mode == "none":  # no private /tmp: at least point the program at its folder
            env["TMPDIR"] = inside
        prog = list(argv)
        if prog and prog[0] == "{python}":
            prog[0] = self.python
        prog[0] = shutil.which(prog[0], path=SANDBOX_PATH) or prog[0]
        status_r, status_w = os.pipe()
        info_r, info_w = os.pipe()
        ro, links = self._binds()
        cfg: dict[str, object] = {
            "status_fd": status_w, "info_fd": info_w, "rlimits": self._rlimits(limits, uid, address_space),
            "env": env, "cwd": inside, "userns": self.mode == "userns", "net": self.isolate_network,
            "newroot": str(newroot), "work": str(work), "ro": ro, "symlinks": links, "devices": _DEVICES,
            "tmp_bytes": limits.disk_mb << 20}
        cmd = self._command(work, cfg, prog, limits, info_w)
        ids: dict[str, object] = {}
        if uid is not None and self.setpriv:
            # the run's uid, gid and no extra groups, set by setpriv before the first program:
            # Popen then starts it with vfork. Popen's own user=/group= forks this process,
            # and a fork copies its page tables: ~55 ms a run in a process holding 3 GiB.
            cmd = [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *cmd]
        elif uid is not None:
            ids = {"user": uid, "group": uid, "extra_groups": []}
        memory_cap_kb = (limits.memory_mb + (0 if address_space else JVM_OVERHEAD_MB)) << 10
        fds = {"stdin": root / "stdin", "stdout": root / "stdout", "stderr": root / "stderr"}
        for k in ("stdout", "stderr"):
            _write_private(fds[k], b"")
        try:
            with open(fds["stdin"], "rb") as fin, open(fds["stdout"], "wb") as fout, \
                    open(fds["stderr"], "wb") as ferr:
                t0 = time.monotonic()
                proc = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=ferr, cwd="/", env={},
                                        start_new_session=True, close_fds=True, pass_fds=(status_w, info_w),
                                        **ids)  # type: ignore[call-overload]
                os.close(status_w)
                os.close(info_w)
                status_w = info_w = -1
                watch = _Watch(self, proc, info_r, work, disk_base + (limits.disk_mb << 20), memory_cap_kb)
                try:
                    wstatus, ru = watch.wait(limits.wall_s)
                finally:
                    watch.finish()
                wall = time.monotonic() - t0
        except BaseException:
            os.close(status_r)
            raise
        finally:
            for fd in (status_w, info_w):
                if fd >= 0:
                    os.close(fd)
            os.close(info_r)
        with os.fdopen(status_r, "rb") as f:
            status_text = f.read()
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        if self.mode == "none":
            self._kill_none(proc.pid, uid)
        cap = limits.output_kb << 10
        with open(fds["stdout"], "rb") as f:
            out = f.read(cap + 1)
        with open(fds["stderr"], "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            err = f.read()
        code, cpu_s, max_rss_kb = proc.returncode, ru.ru_utime + ru.ru_stime, int(ru.ru_maxrss)
        try:
            st = json.loads(status_text)
            code = os.waitstatus_to_exitcode(int(st["wstatus"]))
            cpu_s, max_rss_kb = float(st["cpu"]), int(st["maxrss"])
        except (ValueError, KeyError, TypeError):
            pass
        notes = [NOT_ISOLATED] if self.mode == "none" else []
        collected: dict[str, bytes] = {}
        for pattern in collect:
            for p in sorted(work.glob(pattern)):
                if p.is_file() and not p.is_symlink():
                    collected[str(p.relative_to(work))] = p.read_bytes()
        return RawRun(
            exit_code=code if code >= 0 else None, signal=-code if code < 0 else None, wall_s=wall,
            cpu_s=cpu_s, max_rss_kb=max(max_rss_kb, 0), stdout=out[:cap], stderr=err,
            timed_out=watch.timed_out, output_truncated=len(out) > cap,
            network_isolated=self.mode != "none" and self.isolate_network, notes=notes,
            memory_exceeded=watch.memory_exceeded, disk_exceeded=watch.disk_exceeded,
            peak_memory_kb=watch.peak_kb, isolation=self.mode,
        ), collected

    def _kill_none(self, pid: int, uid: int | None) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if uid is not None:
            self._kill_uid(uid)

    @staticmethod
    def _kill_uid(uid: int) -> None:
        """Kill every process of `uid`: kill(-1) run as that uid reaches all of them at once."""
        for _ in range(5):
            if not _user_processes(uid, live_only=True):
                return
            try:
                subprocess.run(["kill", "-9", "--", "-1"], user=uid, group=uid, extra_groups=[], env={},
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=False)
            except FileNotFoundError:
                for pid in _user_processes(uid, live_only=True):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.01)


class _Watch:
    """Waits for one run while enforcing its whole-run limits (wall time, memory, disk)."""

    TICK_S = 0.02

    def __init__(self, sandbox: Sandbox, proc: subprocess.Popen[bytes], info_r: int, work: Path,
                 disk_cap: int, memory_cap_kb: int):
        self.sandbox, self.proc, self.info_r, self.work = sandbox, proc, info_r, work
        self.disk_cap, self.memory_cap_kb = disk_cap, memory_cap_kb
        self.timed_out = self.memory_exceeded = self.disk_exceeded = False
        self.peak_kb = 0
        self.init_pid: int | None = None  # the sandbox's PID 1, in our PID namespace
        self.init_fd: int | None = None  # a pidfd on it
        self._info = b""
        self._ns_proc: str | None = None
        os.set_blocking(info_r, False)

    def wait(self, wall_s: float) -> tuple[int, resource.struct_rusage]:
        deadline = time.monotonic() + wall_s
        try:
            pidfd: int | None = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):
            pidfd = None
        poller = select.poll()
        if pidfd is not None:
            poller.register(pidfd, select.POLLIN)
        next_disk = next_memory = 0.0
        killed = False
        try:
            while True:
                pid, wstatus, ru = os.wait4(self.proc.pid, os.WNOHANG)
                if pid:
                    return wstatus, ru
                if killed:
                    _, wstatus, ru = os.wait4(self.proc.pid, 0)
                    return wstatus, ru
                now = time.monotonic()
                if now >= deadline:
                    self.timed_out = killed = True
                    self.kill()
                    continue
                self._read_info()
                used = self.memory_kb() if now >= next_memory else 0
                if self.sandbox.mode == "none":  # a scan of every process: less often
                    next_memory = now + 0.1
                self.peak_kb = max(self.peak_kb, used)
                if used > self.memory_cap_kb:
                    self.memory_exceeded = killed = True
                    self.kill()
                    continue
                if now >= next_disk:
                    next_disk = now + 0.25
                    if _tree_bytes(self.work) > self.disk_cap:
                        self.disk_exceeded = killed = True
                        self.kill()
                        continue
                timeout = min(self.TICK_S, max(0.0, deadline - now))
                if pidfd is not None:
                    poller.poll(timeout * 1000)
                else:
                    time.sleep(timeout)
        except BaseException:  # interrupted: the run must not outlive the wait
            self.kill()
            try:
                os.waitpid(self.proc.pid, 0)
            except ChildProcessError:
                pass
            raise
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def _read_info(self, proc_alive: bool = True) -> None:
        """The sandbox's PID 1 from the info pipe, held by a pidfd (so that no signal can
        reach another process that got its pid later)."""
        if self.init_pid is not None or self.sandbox.mode == "none":
            return
        try:
            chunk = os.read(self.info_r, 4096)
        except BlockingIOError:
            return
        self._info += chunk
        try:
            info = json.loads(self._info)
            pid, pidns = int(info["child-pid"]), info.get("pid-namespace")
        except (ValueError, KeyError, TypeError):
            return
        self.init_pid = pid
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            return
        try:  # the pid still names the sandbox's PID 1: its PID namespace, or its parent alive
            same = os.stat(f"/proc/{pid}/ns/pid").st_ino == pidns if pidns is not None else proc_alive
        except OSError:
            same = False
        if same:
            self.init_fd = fd
        else:
            os.close(fd)

    def finish(self) -> None:
        """After the launcher is gone: end the sandbox's PID namespace and wait until the
        kernel has killed everything in it (bwrap's outer process exits as soon as the
        program does, before its PID 1 has torn the namespace down)."""
        self._read_info(proc_alive=False)
        fd, self.init_fd = self.init_fd, None
        if fd is None:
            return
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            poller.poll(10_000)
        finally:
            os.close(fd)

    def _proc_dir(self) -> str | None:
        """The sandbox's own /proc seen from here, once it is mounted (before then, the path
        still shows ours: its PID 1 is then not the sandbox's PID 1)."""
        if self._ns_proc is None and self.init_pid is not None:
            path = f"/proc/{self.init_pid}/root/proc"
            try:
                if os.readlink(f"{path}/1/ns/pid") == os.readlink(f"/proc/{self.init_pid}/ns/pid"):
                    self._ns_proc = path
            except OSError:
                return None
        return self._ns_proc

    def pids(self) -> list[str]:
        """/proc folders of the run's processes (seen from here)."""
        if self.sandbox.mode == "none":
            return [f"/proc/{p}" for p in _session_processes(self.proc.pid)]
        base = self._proc_dir()
        if base is None:
            return []
        try:
            return [f"{base}/{d}" for d in os.listdir(base) if d.isdigit()]
        except OSError:
            return []

    def memory_kb(self) -> int:
        return sum(_anon_kb(p) for p in self.pids())

    def kill(self) -> None:
        """End the whole run: the sandbox's PID 1 (the kernel then kills everything in its
        PID namespace), else the launcher's session."""
        if self.init_fd is not None:
            try:
                signal.pidfd_send_signal(self.init_fd, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _count_user_processes(uid: int) -> int:
    n = 0
    for pid in _user_processes(uid):
        try:
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            n += 1
    return n


def _tail_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else ""
