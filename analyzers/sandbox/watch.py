"""Watching one sandboxed run: its processes seen through /proc, and the whole-run limits.

`Watch` waits for a run while it enforces the limits that rlimits cannot: wall time (the
whole run, not one process), the memory of all the run's processes together (resident
anonymous memory, read from the sandbox's own /proc through its PID 1; in `none` mode from
the launcher's session) and the growth of the work folder. When it kills, it kills the
sandbox's PID 1 through a pidfd, so the kernel ends the whole PID namespace. `CaseWatch` does
the same for a run in a warm runner, whose PID 1 the runner hands over as a pidfd.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import time
from pathlib import Path

from analyzers.tools.readable import readable

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


def kill_pidfd(fd: int | None) -> None:
    """SIGKILL the process a pidfd holds (a sandbox's PID 1: the kernel then ends everything
    in its PID namespace); nothing when there is none or it has ended."""
    if fd is None:
        return
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass


def kill_group(pgid: int) -> None:
    """SIGKILL a process group (a launcher's or a runner's session); nothing when it is gone."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Limits:
    """The whole-run limits of one run (wall time, memory, disk), checked a tick at a time;
    `init_pid`/`init_fd` name the sandbox's PID 1 once known (killing it ends the run)."""

    TICK_S = 0.02

    def __init__(self, work: Path, disk_cap: int, memory_cap_kb: int, *, isolated: bool = True):
        self.work, self.isolated = work, isolated
        self.disk_cap, self.memory_cap_kb = disk_cap, memory_cap_kb
        self.timed_out = self.memory_exceeded = self.disk_exceeded = self.killed = False
        self.peak_kb = 0
        self.init_pid: int | None = None  # the sandbox's PID 1, in our PID namespace
        self.init_fd: int | None = None  # a pidfd on it
        self.session: int | None = None  # not isolated: the run's processes are this session's
        self._ns_proc: str | None = None
        self._next_disk = self._next_memory = 0.0

    def tick(self, deadline: float, fd: int | None) -> None:
        """Kill the run if it passed a limit; else wait up to TICK_S for `fd` to be readable."""
        now = time.monotonic()
        if now >= deadline:
            self.timed_out = True
            return self.kill()
        used = self.memory_kb() if now >= self._next_memory else 0
        if not self.isolated:  # a scan of every process: less often
            self._next_memory = now + 0.1
        self.peak_kb = max(self.peak_kb, used)
        if used > self.memory_cap_kb:
            self.memory_exceeded = True
            return self.kill()
        if now >= self._next_disk:
            self._next_disk = now + 0.25
            if tree_bytes(self.work) > self.disk_cap:
                self.disk_exceeded = True
                return self.kill()
        timeout = min(self.TICK_S, max(0.0, deadline - now))
        if fd is not None:
            readable(fd, timeout)
        else:
            time.sleep(timeout)
        return None

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
        if self.session is not None:
            return [f"/proc/{p}" for p in _session_processes(self.session)]
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
        PID namespace)."""
        self.killed = True
        kill_pidfd(self.init_fd)


class CaseWatch(_Limits):
    """Waits for one case of the warm runner (analyzers/sandbox/runner.py): the case's PID 1
    is the run; it has ended, and its PID namespace with it, when its pidfd is readable."""

    def __init__(self, init_pid: int, init_fd: int, work: Path, disk_cap: int, memory_cap_kb: int):
        super().__init__(work, disk_cap, memory_cap_kb)
        self.init_pid, self.init_fd = init_pid, init_fd

    def wait(self, wall_s: float) -> None:
        deadline = time.monotonic() + wall_s
        fd = self.init_fd
        assert fd is not None
        try:
            while not readable(fd, 0):
                self.tick(deadline, fd)
        except BaseException:  # interrupted: the case must not outlive the wait
            self.kill()
            readable(fd, 10)
            raise


class Watch(_Limits):
    """Waits for one run started here (`proc`) while enforcing its whole-run limits."""

    def __init__(self, proc: subprocess.Popen[bytes], info_r: int, work: Path, disk_cap: int,
                 memory_cap_kb: int, *, isolated: bool = True):
        super().__init__(work, disk_cap, memory_cap_kb, isolated=isolated)
        self.proc, self.info_r = proc, info_r
        self.session = None if isolated else proc.pid
        self._info = b""
        os.set_blocking(info_r, False)

    def wait(self, wall_s: float) -> tuple[int, resource.struct_rusage]:
        deadline = time.monotonic() + wall_s
        try:
            pidfd: int | None = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):
            pidfd = None
        try:
            while True:
                pid, wstatus, ru = os.wait4(self.proc.pid, 0 if self.killed else os.WNOHANG)
                if pid:
                    return wstatus, ru
                self._read_info()
                self.tick(deadline, pidfd)
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
        kill_pidfd(fd)
        try:
            readable(fd, 10)
        finally:
            os.close(fd)

    def kill(self) -> None:
        """End the whole run: the sandbox's PID 1 (the kernel then kills everything in its
        PID namespace), else the launcher's session."""
        super().kill()
        kill_group(self.proc.pid)
