"""The sandbox's launcher: the first program of every run (analyzers/sandbox/box.py starts it).

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
(analyzers/sandbox/run.py's `launcher_config`). With `serve` in CONFIG it is a warm runner
instead (`serve`, analyzers/sandbox/runner.py): its imports are then paid once, not per case.
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
_CLONE_NEWNS, _CLONE_NEWPID, _CLONE_NEWIPC, _CLONE_NEWUTS = 0x00020000, 0x20000000, 0x08000000, 0x04000000
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
_CLONE_NEWUSER, _KEYCTL_JOIN_SESSION_KEYRING = 0x10000000, 1
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "ppc64le": 280, "s390x": 280}
_PR_SET_CHILD_SUBREAPER, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, _CAPABILITY_VERSION_3 = 36, 47, 4, 0x20080522
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


def launch(cfg: "dict[str, Any]", argv: list[str]) -> None:
    """In the sandbox's view: run the program in a child, reap every orphan, write the
    program's status (never returns)."""
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


# -- the warm runner (`bwrap` mode) ------------------------------------------------------------

def serve(cfg: "dict[str, Any]") -> None:
    """The warm runner: started once inside bubblewrap (with CAP_SYS_ADMIN and CAP_SETPCAP in
    the sandbox's user namespace only), it runs one case per name read from its socket, each
    as PID 1 of a fresh PID namespace (`_case`): a first child unshares it, forks the case,
    sends the host a pidfd on it and exits; the runner, a subreaper, then waits for the case
    and sends its wait status. It ends when its socket does (never returns)."""
    import _socket

    m = _Mounts("")
    m.libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # no same-uid process may trace it or read its fds
    m.libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    sock = _socket.socket(fileno=cfg["sock_fd"])
    sock.send(b"ready")
    while True:
        name = sock.recv(256)
        if not name:
            os._exit(0)
        first = os.fork()
        if first == 0:
            try:
                m.check(m.libc.unshare(_CLONE_NEWPID), "unshare")
                pid = os.fork()
                if pid == 0:
                    sock.close()
                    _case(m, cfg, name.decode())
                fd = os.pidfd_open(pid)
                sock.sendmsg([b"started"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fd.to_bytes(4, sys.byteorder))])
            except Exception as e:
                sys.stderr.write(f"sandbox: {e}\n")
                os._exit(1)
            os._exit(0)
        _, first_status = os.waitpid(first, 0)
        wstatus, rss, cpu = 125 << 8, 0, 0.0
        if first_status == 0:  # the case, reparented to the runner
            _, wstatus, ru = os.wait4(-1, 0)
            rss, cpu = ru.ru_maxrss, ru.ru_utime + ru.ru_stime
        sock.send(b"%d %d %.6f" % (wstatus, rss, cpu))


def _case(m: _Mounts, cfg: "dict[str, Any]", name: str) -> None:
    """One case, as PID 1 of its own PID namespace: its own mount, IPC, UTS and (last) user
    namespaces (`_case_view`, `_case_user`); every capability dropped; then the program, as
    `launch` runs it (never returns)."""
    try:
        d = cfg["runs"] + "/" + name
        with open(d + "/request", "rb") as f:
            req: dict[str, Any] = marshal.load(f)
        fds = [os.open(d + "/" + n, os.O_RDONLY if n == "stdin" else os.O_WRONLY | os.O_NOFOLLOW)
               for n in ("stdin", "stdout", "stderr", "status")]
        _case_view(m, cfg["runs"], d + "/work", req)
        _case_user(m)
        os.setsid()
        for i, fd in enumerate(fds[:3]):
            os.dup2(fd, i)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # PID 1 ignores what its namespace sends it
        _drop_capabilities(m)
    except Exception as e:
        sys.stderr.write(f"sandbox: {e}\n")
        sys.stderr.flush()
        os._exit(125)
    launch({**req, "status_fd": fds[3]}, req["argv"])


def _case_view(m: _Mounts, runs: str, work: str, req: "dict[str, Any]") -> None:
    """New mount, IPC and UTS namespaces: the case's folder at the work path, the runner's
    folder of runs hidden, a fresh /tmp, /dev/shm and /proc (bwrap's parts of it read-only)."""
    m.check(m.libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS), "unshare")
    m.mount(None, "/", None, MS_REC | MS_PRIVATE)
    m.mount(work, req["cwd"], None, MS_BIND | MS_REC)
    m.mount("tmpfs", runs, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k")
    for t in ("/tmp", "/dev/shm"):
        m.mount("tmpfs", t, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={req['tmp_bytes']:d}")
    m.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for p in ("/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/dev"):
        _read_only(m, p)


def _case_user(m: _Mounts) -> None:
    """A user namespace of the case's own (the same uid and gid): keyrings and process
    counts of its own; no further user namespace inside it (max_user_namespaces 0, which
    only a capability it will not have could raise); /proc/sys then read-only; and a fresh
    session keyring."""
    uid, gid = os.getuid(), os.getgid()
    m.check(m.libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare user")
    m.libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # /proc/self is ours again, for the maps
    for name, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                       ("/proc/self/gid_map", f"{gid} {gid} 1"), ("/proc/sys/user/max_user_namespaces", "0")):
        with open(name, "w") as f:
            f.write(text)
    m.libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    _read_only(m, "/proc/sys")
    if m.libc.syscall(_SYS_KEYCTL[os.uname().machine], _KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        m.check(-1, "keyctl")


def _read_only(m: _Mounts, path: str) -> None:
    if os.path.exists(path):
        m.mount(path, path, None, MS_BIND | MS_REC)
        m.mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | _locked(path))


def _drop_capabilities(m: _Mounts) -> None:
    """Every capability gone for good: ambient, bounding, effective, permitted, inheritable;
    and no_new_privs, so that no program can gain one back."""
    m.libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(64):
        m.libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last one
    header = (m.ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    m.check(m.libc.capset(header, (m.ctypes.c_uint32 * 6)()), "capset")
    m.check(m.libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def main(args: list[str]) -> None:
    cfg: dict[str, Any] = marshal.loads(bytes.fromhex(args[0]))
    if cfg.get("serve"):
        serve(cfg)
    argv = args[1:]
    if cfg.get("userns"):
        try:
            userns_setup(cfg)
        except Exception as e:
            sys.stderr.write(f"sandbox: {e}\n")
            sys.stderr.flush()
            os._exit(125)
    launch(cfg, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
