"""Runs one attacker program in the sandbox and prints the verdict as JSON (a test helper).

    python3 -I tests/security/sandbox_driver.py MODE < {"source": ..., "case": {...}, "limits": {...}}

With "runs": [{"source": ..., "case": {...}}, ...] instead of one source, it runs them one
after the other on one executor of one worker (in bwrap, one warm runner) and prints every
verdict; with "kill_runner": true it also kills the warm runner after each run, as a run that
managed to would (the next run must get a fresh one). tests/security/test_sandbox.py starts it
as root and, under `setpriv`, as an unprivileged user, so every probe runs both ways. It needs
only the standard library and our analyzers (it may run on the system's Python, which the
unprivileged user can execute).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from analyzers.execution.oracle import Case, Executor, Limits, Program, SandboxUnavailable  # noqa: E402


def main() -> int:
    mode = sys.argv[1]
    spec = json.loads(sys.stdin.read())
    try:
        ex = Executor(Limits(**spec["limits"]), workers=1, sandbox_mode=mode)
    except SandboxUnavailable as e:
        print(json.dumps({"unavailable": str(e)}))
        return 0
    if "runs" not in spec:
        result = ex.run_case(Program("python", spec["source"]), Case(**spec["case"]))
        print(json.dumps({"mode": ex.sandbox.mode, "result": result.to_dict()}))
        return 0
    results, runners = [], []
    for run in spec["runs"]:
        results.append(ex.run_case(Program("python", run["source"]), Case(**run.get("case", {}))).to_dict())
        runners.append([r.pids()[-1] for r in ex.sandbox._idle])  # the warm runner's own process
        if spec.get("kill_runner"):
            for pid in runners[-1]:
                os.kill(pid, signal.SIGKILL)
    print(json.dumps({"mode": ex.sandbox.mode, "results": results, "runners": runners}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
