"""The warm runner of `bwrap` mode: one bubblewrap sandbox started once and reused for many
runs, so that a run pays a fork and a few mounts instead of bubblewrap's and the launcher's
start-up.

The runner (`serve` in analyzers/sandbox/launcher.py) runs inside bubblewrap with every
namespace unshared, as a one-shot run does, but keeps CAP_SYS_ADMIN and CAP_SETPCAP in the
sandbox's own user namespace (none outside it). Each run gets, inside it: a PID namespace of
its own (its first process is PID 1 there; when it ends, the kernel kills all it started),
its own mount, IPC and UTS namespaces, its work folder bound at /work with the runner's
folder of runs unmounted, a fresh size-limited /tmp and /dev/shm, a fresh /proc; then every
capability is dropped and no_new_privs set before the program starts. What the runs of one
runner share, and why that is safe: docs/security.md ("One sandbox, many runs").

A runner that does not answer, or whose socket or process is gone, is thrown away and the
next run starts a fresh one; the run it was serving still ends as its own PID 1 says.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from analyzers.sandbox.watch import kill_group, kill_pidfd
from analyzers.tools.readable import readable

RUNS = "/runs"  # the runner's folder of runs, inside its sandbox
Build = Callable[[int, int], tuple[list[str], dict[str, Any]]]

_SPAWNER: list[ThreadPoolExecutor] = []
_SPAWNER_LOCK = threading.Lock()


def _spawn(cmd: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Popen from one long-lived thread: bwrap's --die-with-parent follows the thread that
    started it, and an executor's worker thread ends with its batch of runs."""
    with _SPAWNER_LOCK:
        if not _SPAWNER:
            _SPAWNER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="rtcbot-sandbox-runner"))
    return _SPAWNER[0].submit(_popen, cmd, kwargs).result()


def _popen(cmd: list[str], kwargs: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, **kwargs)


class RunnerFailed(OSError):
    """The runner did not start, or stopped answering; str() says why."""


class Runner:
    """One warm runner: a bubblewrap sandbox serving one run at a time over a socket."""

    START_S = 10.0  # bubblewrap, Python and ctypes, on a loaded machine
    ANSWER_S = 10.0  # a fork and a few mounts

    def __init__(self, folder: Path, uid: int | None):
        self.folder, self.uid = folder, uid
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.init_fd: int | None = None  # a pidfd on the runner's sandbox's PID 1
        self._runs = 0

    def start(self, build: Build) -> None:
        """Start the runner with the command `build(socket fd, info fd)` gives (and Popen's
        arguments); raises RunnerFailed, with the runner's last error line, if it is not ready."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        info_r, info_w = os.pipe()
        self.sock = mine
        try:
            cmd, ids = build(theirs.fileno(), info_w)
            with open(self.folder / "runner.err", "wb") as err:
                self.proc = _spawn(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                   cwd="/", env={}, start_new_session=True, close_fds=True,
                                   pass_fds=(theirs.fileno(), info_w), **ids)
        except OSError as e:
            os.close(info_r)
            self.close()
            raise RunnerFailed(f"the sandbox's runner did not start: {e}") from e
        finally:
            theirs.close()
            os.close(info_w)
        try:
            self.init_fd = _init_pidfd(info_r, self.START_S)
            if self._receive(self.START_S)[0] != b"ready":
                raise RunnerFailed("no greeting")
        except (RunnerFailed, OSError, ValueError) as e:
            why = _last_line(self.folder / "runner.err") or str(e)
            self.close()
            raise RunnerFailed(f"the sandbox's runner did not start: {why}") from e
        finally:
            os.close(info_r)

    def folder_for_run(self) -> Path:
        """A new folder for the next run, in the runner's folder (/runs/NAME inside)."""
        self._runs += 1
        path = self.folder / f"run-{self._runs}"
        path.mkdir(mode=0o700)
        return path

    def submit(self, name: str) -> tuple[int, int]:
        """Start the run prepared in folder/name: the pid (here) of its PID 1 and a pidfd on it."""
        if self.sock is None:
            raise RunnerFailed("the runner is closed")
        try:
            self.sock.send(name.encode())
        except OSError as e:
            raise RunnerFailed(f"the runner is gone: {e}") from e
        data, fds = self._receive(self.ANSWER_S)
        if data != b"started" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise RunnerFailed(f"the runner answered {data[:80]!r}")
        try:
            return _pidfd_pid(fds[0]), fds[0]
        except (OSError, ValueError) as e:
            os.close(fds[0])
            raise RunnerFailed(f"the run's PID 1 is unknown: {e}") from e

    def ended(self) -> tuple[int, int, float] | None:
        """After a run: its PID 1's wait status, peak RSS (KiB) and CPU seconds, as the runner
        saw them; None, and the runner closed, when it does not say."""
        try:
            wstatus, rss, cpu = self._receive(self.ANSWER_S)[0].split()
            return int(wstatus), int(rss), float(cpu)
        except (RunnerFailed, ValueError):
            self.close()
            return None

    def alive(self) -> bool:
        if self.sock is None or self.proc is None or self.proc.poll() is not None:
            return False
        return not readable(self.sock, 0)  # nothing unasked for, no end of file

    def pids(self) -> list[int]:
        """The runner's own processes (bubblewrap's two and the runner), as seen here."""
        out: list[int] = []
        level = [self.proc.pid] if self.proc is not None else []
        for _ in range(3):
            out += level
            level = [child for pid in level for child in _children(pid)]
        return out

    def close(self) -> None:
        """End the runner and everything in its sandbox, and remove its folder."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.init_fd is not None:
            kill_pidfd(self.init_fd)
            os.close(self.init_fd)
            self.init_fd = None
        if self.proc is not None:
            kill_group(self.proc.pid)
            self.proc.wait()
            self.proc = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def _receive(self, timeout: float) -> tuple[bytes, list[int]]:
        assert self.sock is not None
        if not readable(self.sock, timeout):
            raise RunnerFailed(f"the runner did not answer in {timeout:g} s")
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, 256, 1)
        except OSError as e:
            raise RunnerFailed(f"the runner is gone: {e}") from e
        if not data:
            raise RunnerFailed("the runner is gone")
        return data, fds


def _init_pidfd(info_r: int, timeout: float) -> int:
    """A pidfd on the sandbox's PID 1, from bubblewrap's --info-fd."""
    data = b""
    while True:
        if not readable(info_r, timeout):
            raise RunnerFailed("bubblewrap said nothing")
        chunk = os.read(info_r, 4096)
        if not chunk:
            break
        data += chunk
    return os.pidfd_open(int(json.loads(data)["child-pid"]))


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _pidfd_pid(fd: int) -> int:
    """The pid, in our PID namespace, of the process a pidfd holds."""
    with open(f"/proc/self/fdinfo/{fd}") as f:
        for line in f:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    raise ValueError("no Pid in the pidfd's fdinfo")


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""
