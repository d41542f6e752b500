"""Watching one sandboxed run: its processes seen through /proc, and the whole-run limits.

`Watch` waits for a run while it enforces the limits that rlimits cannot: wall time (the
whole run, not one process), the memory of all the run's processes together (resident
anonymous memory, read from the sandbox's own /proc through its PID 1; in `none` mode from
the launcher's session) and the growth of the work folder. When it kills, it kills the
sandbox's PID 1 through a pidfd, so the kernel ends the whole PID namespace.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import stat
import subprocess
import time
from pathlib import Path

_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def user_processes(uid: int, live_only: bool = False) -> list[int]:
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


def tree_bytes(path: Path) -> int:
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


def count_user_processes(uid: int) -> int:
    n = 0
    for pid in user_processes(uid):
        try:
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            n += 1
    return n


def kill_uid(uid: int) -> None:
    """Kill every process of `uid`: kill(-1) run as that uid reaches all of them at once."""
    for _ in range(5):
        if not user_processes(uid, live_only=True):
            return
        try:
            subprocess.run(["kill", "-9", "--", "-1"], user=uid, group=uid, extra_groups=[], env={},
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
        except FileNotFoundError:
            for pid in user_processes(uid, live_only=True):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.01)


class Watch:
    """Waits for one run while enforcing its whole-run limits (wall time, memory, disk)."""

    TICK_S = 0.02

    def __init__(self, proc: subprocess.Popen[bytes], info_r: int, work: Path, disk_cap: int,
                 memory_cap_kb: int, *, isolated: bool = True):
        self.proc, self.info_r, self.work, self.isolated = proc, info_r, work, isolated
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
                if not self.isolated:  # a scan of every process: less often
                    next_memory = now + 0.1
                self.peak_kb = max(self.peak_kb, used)
                if used > self.memory_cap_kb:
                    self.memory_exceeded = killed = True
                    self.kill()
                    continue
                if now >= next_disk:
                    next_disk = now + 0.25
                    if tree_bytes(self.work) > self.disk_cap:
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
        if self.init_pid is not None or not self.isolated:
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
        if not self.isolated:
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
