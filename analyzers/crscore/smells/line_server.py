"""A smell detector kept running: one request line in, one answer line out (PMD's JVM, JSHint's Node).

A detector's start-up (a JVM, Node and JSHint's modules) costs more than its analysis of a
pull request's files, so a process starts it once, on first use (or at a worker's start), and
sends it every request after that. It sees nothing of ours (analyzers/tools/programs.py): a clean
environment (the variables the subclass names only), a private working directory, and it
dies with this process (a lifeline). It answers one request at a time (thread-safe). A request
that gets no answer, times out or finds it dead stops it, and the next request starts a new
one; a program that cannot start at all (no "ready" line) marks it unavailable for this
process, and the caller runs the tool's command line instead.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Sequence

from analyzers import spans
from analyzers.tools.programs import BoundProcess, popen_bound, tool_env, workdir
from analyzers.tools.readable import readable

START_TIMEOUT_S = 120


class ServerUnavailable(RuntimeError):
    """The server cannot be started here (use the command line instead)."""


class ServerStopped(ServerUnavailable):
    """The server stopped during a request (use the command line for it; the next starts it again)."""


class LineServer:
    """One long-lived program speaking lines on its standard input and output."""

    title = "the server"  # in messages: "the PMD server did not start (…)"
    folder_prefix = "rtcbot-server-"
    pass_through: Sequence[str] = ()  # variables of ours the program gets (tooling.PASSABLE)

    def __init__(self, command: list[str] | None = None) -> None:
        self._command = command
        self._proc: BoundProcess | None = None
        self._folder: contextlib.ExitStack | None = None  # the program's private working directory
        self._pending = b""  # output read past the last line
        self._lock = threading.Lock()
        self.unavailable: str | None = None

    def command(self) -> list[str]:
        """The program and its arguments (a subclass's)."""
        raise NotImplementedError

    def missing(self) -> str | None:
        """Why the program cannot start here (a file of ours missing), else None."""
        return None

    def request(self, line: str, timeout: float) -> str:
        """Send one request line, return the answer line. Raises ServerUnavailable (cannot
        start), ServerStopped (it stopped) and subprocess.TimeoutExpired (it was stopped)."""
        with self._lock:
            proc = self._started()
            try:
                assert proc.stdin is not None
                proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
                proc.stdin.flush()
                answer = self._read_line(proc, timeout)
            except subprocess.TimeoutExpired:
                self._stop()
                raise
            except OSError as e:
                self._stop()
                raise ServerStopped(f"{self.title} stopped ({e})") from None
            if not answer:
                self._stop()
                raise ServerStopped(f"{self.title} stopped")
            return answer

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the program now (raises ServerUnavailable where it cannot start)."""
        with self._lock:
            self._started()

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def _started(self) -> BoundProcess:
        if self.unavailable:
            raise ServerUnavailable(self.unavailable)
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if (why := self.missing()) is not None:
            self.unavailable = why
            raise ServerUnavailable(why)
        with spans.span(f"start {self.title}"):
            return self._start()

    def _start(self) -> BoundProcess:
        self._pending = b""
        self._stop()  # a program that died: its lifeline and folder go before a new one
        self._folder = contextlib.ExitStack()
        home = self._folder.enter_context(workdir(self.folder_prefix))
        try:
            proc = popen_bound(self._command or self.command(), cwd=home,
                               env=tool_env(home, pass_through=self.pass_through), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        except OSError as e:
            self._stop()
            self.unavailable = f"{self.title} did not start ({e})"
            raise ServerUnavailable(self.unavailable) from None
        self._proc = proc
        try:
            ready = self._read_line(proc, START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            ready = "no answer"
        if ready != "ready":
            self._stop()
            self.unavailable = f"{self.title} did not start ({ready or 'it exited'})"
            raise ServerUnavailable(self.unavailable)
        return proc

    def _read_line(self, proc: subprocess.Popen[bytes], timeout: float) -> str:
        """The process's next line of output; "" when it ended first."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not readable(fd, left):
                raise subprocess.TimeoutExpired(proc.args, timeout)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return ""
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode("utf-8", "replace").strip()

    def _stop(self) -> None:
        """End the program: release its lifeline (the launcher kills it), close our pipes."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        folder, self._folder = self._folder, None
        if folder is not None:
            folder.close()
