"""Process hardening for the long-lived services (`rtcbot serve`, `rtcbot worker`).

They hold secrets (the App's private key, the webhook secret, installation tokens, LLM keys)
in memory and in their environment. A process marked non-dumpable (Linux `prctl
PR_SET_DUMPABLE 0`) has its /proc/<pid>/ files owned by root, so another process of the same
user — a tool that got out of its sandbox, say — can neither read its /proc/<pid>/environ nor
its memory, nor attach a debugger; and it writes no core dump. Children that exec a program
are dumpable again, which is why every tool also gets a clean environment (analyzers/tools/programs.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

PR_SET_DUMPABLE = 4


def _prctl(option: int, arg: int = 0) -> int:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    result = libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                        ctypes.c_ulong(0), ctypes.c_ulong(0))
    if result < 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")
    return int(result)


def make_non_dumpable() -> bool:
    """Mark this process non-dumpable; True when done (Linux), False where there is no prctl."""
    if not sys.platform.startswith("linux"):
        return False
    _prctl(PR_SET_DUMPABLE, 0)
    return True
