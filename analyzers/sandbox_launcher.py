"""The sandbox's launcher: the first program of every run (analyzers/sandbox.py starts it).

    python3 -I -S sandbox_launcher.py CONFIG PROGRAM [ARG ...]

In `bwrap` and `none` mode it runs inside the sandbox; in `userns` mode it builds the sandbox
first: it unshares the namespaces as an unprivileged user (ctypes), builds the file-system
view on a tmpfs and pivots into it. Then it sets the run's rlimits, runs the program in a
child (so that the child's peak RSS is its own), reaps every orphan, and writes the program's
wait status, peak RSS and CPU time as JSON to the status pipe.

It runs before every sandboxed program, so its start-up is paid per test case: it imports
only modules built into the interpreter (`_signal`, `marshal`, `os`, `resource`, `sys`;
`ctypes` in userns mode), never `json` or `signal` (re, enum, ...), and no module of ours:
inside the sandbox it sees only the system's folders. CONFIG is a marshal dict in hex
(analyzers/sandbox.py's `launcher_config`).
"""

import _signal as signal  # `signal` without enum: see above
import marshal
import os
import resource
import sys

TYPE_CHECKING = False  # typing itself imports re: only the type checker reads it
if TYPE_CHECKING:
    from typing import Any

# unshare(2) flags: user, mount, PID, IPC, UTS namespaces; the network's apart
_CLONE_NAMESPACES = 0x10000000 | 0x00020000 | 0x20000000 | 0x08000000 | 0x04000000
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
_TTY_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
              ("stderr", "/proc/self/fd/2"))


class _Mounts:
    """mount(2) and friends through libc, each failure an OSError naming what failed."""

    def __init__(self, root: str) -> None:
        import ctypes

        self.ctypes = ctypes
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.root = root

    def check(self, rc: int, what: str) -> None:
        if rc != 0:
            e = self.ctypes.get_errno()
            raise OSError(e, f"{what}: {os.strerror(e)}")

    def mount(self, src: str | None, tgt: str, fs: str | None, flags: int, data: str | None = None) -> None:
        def enc(s: str | None) -> bytes | None:
            return None if s is None else s.encode()

        self.check(self.libc.mount(enc(src), enc(tgt), enc(fs), self.ctypes.c_ulong(flags), enc(data)),
                   "mount " + tgt)

    def bind(self, src: str, dst: str, rw: bool = False) -> None:
        tgt = self.root + dst
        if os.path.isdir(src):
            os.makedirs(tgt, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(tgt), exist_ok=True)
            open(tgt, "a").close()
        self.mount(src, tgt, None, MS_BIND | MS_REC)
        if not rw:
            self.mount(None, tgt, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | _locked(tgt))

    def tmpfs(self, dst: str, flags: int, data: str) -> None:
        os.makedirs(self.root + dst)
        self.mount("tmpfs", self.root + dst, "tmpfs", flags, data)

    def pivot(self) -> None:
        root = self.root
        os.makedirs(root + "/.old")
        nr = _PIVOT_ROOT[os.uname().machine]
        self.check(self.libc.syscall(nr, root.encode(), (root + "/.old").encode()), "pivot_root")
        os.chdir("/")
        self.check(self.libc.umount2(b"/.old", 2), "umount old root")
        os.rmdir("/.old")
        self.mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _locked(path: str) -> int:
    """The mount flags of `path` that a remount in a user namespace must keep."""
    f = os.statvfs(path).f_flag
    out = 0
    for st, ms in ((2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, 1024), (2048, 2048), (4096, 1 << 21)):
        if f & st:
            out |= ms
    return out


def _unshare(cfg: "dict[str, Any]", m: _Mounts) -> None:
    """New namespaces with our uid and gid mapped; the outer process then only reports the
    sandbox's PID 1 on the info pipe and waits for it (its exit code is the sandbox's)."""
    m.libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    uid, gid = os.getuid(), os.getgid()
    m.check(m.libc.unshare(_CLONE_NAMESPACES | (_CLONE_NEWNET if cfg["net"] else 0)), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open("/proc/self/" + name, "w") as f:
            f.write(text)
    info = cfg["info_fd"]
    child = os.fork()
    if child:
        os.write(info, b'{"child-pid": %d}' % child)
        os.close(info)
        os.close(cfg["status_fd"])
        while True:
            try:
                _, st = os.waitpid(child, 0)
                os._exit(os.waitstatus_to_exitcode(st) & 0xFF)
            except InterruptedError:
                continue
    os.close(info)
    m.libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def userns_setup(cfg: "dict[str, Any]") -> None:
    """The same view as bwrap's, built by hand: system folders read-only, a minimal /dev,
    private /tmp and /dev/shm, a fresh /proc, the work folder, then pivot_root into it."""
    root = cfg["newroot"]
    m = _Mounts(root)
    _unshare(cfg, m)
    m.mount(None, "/", None, MS_REC | MS_PRIVATE)
    m.mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for src, dst in cfg["ro"]:
        m.bind(src, dst)
    for target, link in cfg["symlinks"]:
        os.makedirs(os.path.dirname(root + link), exist_ok=True)
        os.symlink(target, root + link)
    m.tmpfs("/dev", MS_NOSUID, "mode=0755,size=64k")
    for d in cfg["devices"]:
        m.bind("/dev/" + d, "/dev/" + d, rw=True)
    for n, t in _TTY_LINKS:
        os.symlink(t, root + "/dev/" + n)
    for d in ("/tmp", "/dev/shm"):
        m.tmpfs(d, MS_NOSUID | MS_NODEV, f"mode=1777,size={cfg['tmp_bytes']:d}")
    os.makedirs(root + "/proc")
    m.mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    m.bind(cfg["work"], cfg["cwd"], rw=True)
    m.pivot()


def _exec_program(cfg: "dict[str, Any]", argv: list[str]) -> None:
    """In the child: default signals, the run's rlimits, then the program (never returns)."""
    os.close(cfg["status_fd"])
    if cfg.get("userns"):
        os.setsid()
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    for sig in ("SIGPIPE", "SIGXFSZ", "SIGXCPU"):
        signal.signal(getattr(signal, sig), signal.SIG_DFL)
    for name, soft, hard in cfg["rlimits"]:
        resource.setrlimit(getattr(resource, name), (soft, hard))
    try:
        os.execve(argv[0], argv, cfg["env"])
    except OSError as e:
        sys.stderr.write(f"sandbox: cannot run {argv[0]}: {e.strerror}\n")
        os._exit(127)


def main(args: list[str]) -> None:
    cfg: dict[str, Any] = marshal.loads(bytes.fromhex(args[0]))
    argv = args[1:]
    if cfg.get("userns"):
        try:
            userns_setup(cfg)
        except Exception as e:
            sys.stderr.write(f"sandbox: {e}\n")
            sys.stderr.flush()
            os._exit(125)
    os.chdir(cfg["cwd"])
    os.umask(0o077)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    pid = os.fork()
    if pid == 0:
        _exec_program(cfg, argv)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    while True:  # reap every orphan until the program itself ends
        try:
            got, wstatus, ru = os.wait4(-1, 0)
        except ChildProcessError:
            os._exit(126)
        if got == pid:
            break
    os.write(cfg["status_fd"], b'{"wstatus": %d, "maxrss": %d, "cpu": %.6f}'
             % (wstatus, ru.ru_maxrss, ru.ru_utime + ru.ru_stime))
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
