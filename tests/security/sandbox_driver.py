"""Runs one attacker program in the sandbox and prints the verdict as JSON (a test helper).

    python3 -I tests/security/sandbox_driver.py MODE < {"source": ..., "case": {...}, "limits": {...}}

tests/security/test_sandbox.py starts it as root and, under `setpriv`, as an unprivileged
user, so every probe runs both ways. It needs only the standard library and our analyzers
(it may run on the system's Python, which the unprivileged user can execute).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from analyzers.execution import Case, Executor, Limits, Program, SandboxUnavailable  # noqa: E402


def main() -> int:
    mode = sys.argv[1]
    spec = json.loads(sys.stdin.read())
    try:
        ex = Executor(Limits(**spec["limits"]), workers=1, sandbox_mode=mode)
    except SandboxUnavailable as e:
        print(json.dumps({"unavailable": str(e)}))
        return 0
    case = Case(**spec["case"])
    result = ex.run_case(Program("python", spec["source"]), case)
    print(json.dumps({"mode": ex.sandbox.mode, "result": result.to_dict()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
