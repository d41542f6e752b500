"""Whether a file descriptor has something to read (data, an end of file, a process's exit on
its pidfd) within a timeout, at any descriptor number.

`select.select` refuses a descriptor numbered 1024 or more (FD_SETSIZE) with "filedescriptor out
of range in select()": a long-lived process (`rtcbot serve`'s and `rtcbot worker`'s, an evaluation,
a test session) that holds many files, sockets and pidfds is given such numbers, and a sandboxed
run or a tool's server would then fail. `poll` has no such limit."""

from __future__ import annotations

import math
import select
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike  # an int, or an object with fileno()


def readable(fd: FileDescriptorLike, timeout: float | None) -> bool:
    """True when `fd` is readable, has hung up or is in error within `timeout` seconds (None:
    no limit; 0: now), as `select.select([fd], [], [], timeout)` says, without its limit."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)  # POLLHUP and POLLERR are reported whatever is asked
    return bool(poller.poll(None if timeout is None else math.ceil(max(0.0, timeout) * 1000)))
