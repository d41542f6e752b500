"""`python -I -m analyzers.tools.lifeline FD ARGV…`: run ARGV until the pipe FD closes.

Started by `analyzers.tools.programs.popen_bound`, which keeps the pipe's write end. The pipe
closes when that process ends for any reason (SIGKILL included) or releases it; then the
tool is killed and this process exits. `-m MODULE ARGS` runs a Python module in this
process (no second interpreter); any other command runs as a child in its own session,
and SIGTERM, SIGINT and SIGHUP are passed on to it.
"""

from __future__ import annotations

import os
import runpy
import signal
import subprocess
import sys
import threading
from types import FrameType

_child: subprocess.Popen[bytes] | None = None


def _watch(fd: int) -> None:
    try:
        while os.read(fd, 1):
            pass
    except OSError:
        pass
    if _child is not None:
        try:
            os.killpg(_child.pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(0)


def _forward(sig: int, _frame: FrameType | None) -> None:
    if _child is not None:
        try:
            os.killpg(_child.pid, sig)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    global _child
    if len(argv) < 2:
        print("usage: python -m analyzers.tools.lifeline FD COMMAND…", file=sys.stderr)
        return 2
    fd, command = int(argv[0]), argv[1:]
    threading.Thread(target=_watch, args=(fd,), daemon=True, name="lifeline").start()
    if command[0] == "-m":
        sys.argv = command[1:]
        runpy.run_module(command[1], run_name="__main__", alter_sys=True)
        return 0
    _child = subprocess.Popen(command, start_new_session=True)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, _forward)
    return _child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
