"""How a sandboxed run is started, whichever the mode: bubblewrap's command line (one run's, a
warm runner's), the launcher's command line and settings (rlimits, the program's clean
environment, the file-system view), and the switch to the run's own uid (as root).
analyzers/sandbox/box.py chooses the mode and passes it in; nothing here starts a process."""

from __future__ import annotations

import math
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzers.sandbox.run import Limits, launcher_config
from analyzers.sandbox.runner import RUNS
from analyzers.sandbox.watch import count_user_processes

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
WORK = "/work"  # the work folder's path inside the sandbox
# analyzers/sandbox/launcher.py, run as `python -I -S -c SOURCE`: no file to copy or bind, and it
# runs wherever this package is installed (a folder the run's uid may not read)
LAUNCHER_SOURCE = (Path(__file__).with_name("launcher.py")).read_text(encoding="utf-8")
# What of /etc a program needs: the loader's cache, the time zone, the JVM's configuration
# (/usr/bin/java links through /etc/alternatives; the JDK's conf/ links into /etc/java-N).
_ETC = ("alternatives", "ld.so.cache", "localtime", "java-11-openjdk", "java-17-openjdk", "java-21-openjdk")
_DEVICES = ("null", "zero", "full", "random", "urandom")


@dataclass(frozen=True)
class Commands:
    """The command lines and launcher settings of one sandbox's runs: `python` runs the launcher
    (and `{python}` programs), `bwrap` and `setpriv` are the programs found on SANDBOX_PATH."""

    python: str
    isolate_network: bool = True
    bwrap: str | None = None
    setpriv: str | None = None

    def rlimits(self, mode: str, limits: Limits, uid: int | None, address_space: bool,
                others: int = 2) -> list[tuple[str, int, int]]:
        cpu = max(1, math.ceil(limits.cpu_s))
        out = [("RLIMIT_CPU", cpu, cpu + 1), ("RLIMIT_FSIZE", limits.fsize_mb << 20, limits.fsize_mb << 20),
               ("RLIMIT_CORE", 0, 0)]
        # In a user namespace of its own, RLIMIT_NPROC counts the run's processes only (the
        # namespace's PID 1 and the launcher among them: `others`; in a runner, the run's PID 1
        # only). Without one, it counts all of the user's processes: as root that is the run's
        # fresh uid, else ours (allow what runs now).
        nproc = limits.nproc + others
        if mode == "none" and uid is None:
            nproc = limits.nproc + count_user_processes(os.geteuid())
        out.append(("RLIMIT_NPROC", nproc, nproc))
        if address_space:
            out.append(("RLIMIT_AS", limits.memory_mb << 20, limits.memory_mb << 20))
        return out

    def binds(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
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

    def launcher(self, mode: str, work: Path, cfg: dict[str, object], argv: list[str],
                 limits: Limits) -> list[str]:
        """The launcher's command line (its source as `-c`), inside bwrap in that mode."""
        launcher = [self.python, "-I", "-S", "-c", LAUNCHER_SOURCE, launcher_config(cfg), *argv]
        if mode != "bwrap":
            return launcher
        size = str(limits.disk_mb << 20)
        return [*self.bubblewrap(), "--cap-drop", "ALL", "--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs",
                "/dev/shm", "--bind", str(work), WORK, "--chdir", WORK, "--remount-ro", "/",
                "--info-fd", str(cfg["info_fd"]), "--", *launcher]

    def runner(self, folder: Path, sock_fd: int, info_fd: int) -> list[str]:
        """A warm runner's command line: bwrap as for one run, but with the capabilities to
        give each run its own namespaces and mounts (in the sandbox's user namespace only),
        its folder of runs at RUNS, and no work folder of its own."""
        cfg = launcher_config({"serve": True, "sock_fd": sock_fd, "runs": RUNS})
        return [*self.bubblewrap(runner=True), "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP",
                "--size", "65536", "--tmpfs", "/tmp", "--size", "65536", "--tmpfs", "/dev/shm", "--dir", WORK,
                "--bind", str(folder), RUNS, "--chdir", "/", "--remount-ro", "/", "--info-fd", str(info_fd), "--",
                self.python, "-I", "-S", "-c", LAUNCHER_SOURCE, cfg]

    def bubblewrap(self, runner: bool = False) -> list[str]:
        """What every bwrap run shares: all namespaces, the system's folders read-only, a
        fresh /proc and a minimal /dev; no user namespace inside but a runner's (each of its
        runs gets one, where it then allows no further one)."""
        cmd = [self.bwrap or "bwrap", "--unshare-all", "--unshare-user", *([] if runner else ["--disable-userns"]),
               "--die-with-parent", "--new-session", "--clearenv"]
        if not self.isolate_network:
            cmd.append("--share-net")
        ro, links = self.binds()
        for src, dst in ro:
            cmd += ["--ro-bind", src, dst]
        for target, link in links:
            cmd += ["--symlink", target, link]
        return [*cmd, "--proc", "/proc", "--dev", "/dev"]

    def as_uid(self, cmd: list[str], uid: int | None) -> tuple[list[str], dict[str, object]]:
        """`cmd` run as the run's own uid and gid with no extra groups (as root), and Popen's
        arguments for that: setpriv sets them before the first program, so Popen starts it
        with vfork. Popen's own user=/group= forks this process, and a fork copies its page
        tables: ~55 ms a run in a process holding 3 GiB."""
        if uid is None:
            return cmd, {}
        if self.setpriv:
            return [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *cmd], {}
        return cmd, {"user": uid, "group": uid, "extra_groups": []}

    def config(self, mode: str, uid: int | None, root: Path, work: Path, limits: Limits, address_space: bool,
               status_w: int, info_w: int) -> dict[str, object]:
        """The launcher's settings: pipes, rlimits, the program's clean environment, the view."""
        inside = WORK if mode != "none" else str(work)
        env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": inside}
        if mode == "none":  # no private /tmp: at least point the program at its folder
            env["TMPDIR"] = inside
        ro, links = self.binds()
        return {"status_fd": status_w, "info_fd": info_w, "rlimits": self.rlimits(mode, limits, uid, address_space),
                "env": env, "cwd": inside, "userns": mode == "userns", "net": self.isolate_network,
                "newroot": str(root / "newroot"), "work": str(work), "ro": ro, "symlinks": links,
                "devices": _DEVICES, "tmp_bytes": limits.disk_mb << 20}

    def program(self, argv: Sequence[str]) -> list[str]:
        prog = list(argv)
        if prog and prog[0] == "{python}":
            prog[0] = self.python
        prog[0] = shutil.which(prog[0], path=SANDBOX_PATH) or prog[0]
        return prog
