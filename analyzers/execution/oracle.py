"""Run untrusted programs against test cases in a sandbox and give a verdict per case.

Verdicts (FixEval's): AC accepted, WA wrong answer, TLE time limit, MLE memory limit,
RE runtime error (a non-zero exit, a signal, a file or output limit), CE compile error;
how a run's output and ending become one is verdicts.py's (pure) logic.

Test styles:
- stdin/stdout (`Case(stdin=…, expected_output=…)`): the program reads stdin, its stdout is
  compared with the expected output by whitespace tokens, numbers within a tolerance.
- function (`Case(args=[…], expected=…)`, Python): `entry_point(*args)` is called by a small
  harness in the sandbox; the parent compares the returned value with `expected` (within the
  case's tolerance where it has one). Generators are turned into lists, as QuixBugs does.
- script (`Case(kind="script")`): the program is a test script (HumanEval's `check`); exit
  code 0 is AC, a failed assertion is WA.

Script verdicts need the harness's per-run token: the script runs inside a small harness
that prints a random token only after the script's last statement, so an exit 0 before the
checks end (`sys.exit(0)`, `os._exit(0)`) is RE, never AC.

The sandbox (bubblewrap, unprivileged namespaces as a fallback, whole-run limits) lives in
analyzers/sandbox/box.py; this module is the harnesses and the executor: runs
go in parallel across cores (one worker per core by default); results are cached by
(program, case, limits) in memory and optionally in a SQLite file (cache.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from analyzers.execution.cache import ResultCache
from analyzers.execution.verdicts import (
    OUTPUT_TOLERANCE,
    CaseResult,
    Tolerance,
    failure_verdict,
    tokens_match,
    values_match,
)
from analyzers.sandbox.box import (
    MODES,
    NOT_ISOLATED,
    Limits,
    RawRun,
    Sandbox,
    SandboxUnavailable,
)
from analyzers.sandbox.watch import user_processes as _user_processes

__all__ = ["MODES", "NOT_ISOLATED", "NO_NETNS", "Limits", "RawRun", "Sandbox", "SandboxUnavailable",
           "_user_processes", "Case", "Executor", "Program"]

Language = Literal["python", "java"]
NO_NETNS = "network isolation unavailable"

# -- limits and inputs ------------------------------------------------------------------------

DEFAULT_LIMITS = Limits()
COMPILE_LIMITS = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=2048, nproc=256, fsize_mb=64)


@dataclass(frozen=True)
class Program:
    language: Language
    source: str
    entry_point: str | None = None  # function cases


@dataclass(frozen=True)
class Case:
    kind: Literal["stdio", "function", "script"] = "stdio"
    stdin: str = ""
    expected_output: str = ""
    args: tuple[Any, ...] | list[Any] = ()
    expected: Any = None
    tolerance: Tolerance | None = None

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["args"] = list(self.args)
        return d


def _tail(data: bytes, n: int = 2000) -> str:
    return data[-n:].decode("utf-8", "replace")


# -- the function-case harness --------------------------------------------------------------

_HARNESS = r"""
import json, sys, types
spec = json.loads(sys.stdin.read())
out, sys.stdout = sys.stdout, sys.stderr
ns = {"__name__": "solution", "__file__": "solution.py"}
with open("solution.py", encoding="utf-8") as f:
    exec(compile(f.read(), "solution.py", "exec"), ns)
fn = ns.get(spec["entry_point"])
if not callable(fn):
    sys.stderr.write("no function named %r\n" % spec["entry_point"]); sys.exit(3)
result = fn(*spec["args"])
if isinstance(result, (types.GeneratorType, map, filter, zip, range, reversed)):
    result = list(result)
def plain(v):
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return {"__repr__": repr(v)}
out.write(spec["marker"] + json.dumps(plain(result)) + "\n")
out.flush()
"""

# A script case runs inside this harness: the token (from stdin, which is then closed) is
# printed only when the script's last statement has run, so an early exit cannot pass.
_SCRIPT_HARNESS = r"""
import os, sys
def _token():
    t = sys.stdin.readline().strip()
    fd = os.open(os.devnull, os.O_RDONLY); os.dup2(fd, 0); os.close(fd)
    sys.stdin = open(os.devnull)
    return t
_t = _token()
_out = os.dup(1)
os.set_inheritable(_out, False)
with open("Main.py", encoding="utf-8") as _f:
    _code = compile(_f.read(), "Main.py", "exec")
_ns = {"__name__": "__main__", "__file__": "Main.py", "__builtins__": __builtins__}
_t = [_t]
del _f, _token
exec(_code, _ns)
sys.stdout.flush()
os.write(_out, ("\n" + _t[0] + "\n").encode())
"""

_JAVA_CLASS = re.compile(r"public\s+(?:final\s+)?class\s+([A-Za-z_$][\w$]*)")


def java_main_class(source: str) -> str:
    m = _JAVA_CLASS.search(source)
    return m.group(1) if m else "Main"


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@dataclass
class Compiled:
    ok: bool
    detail: str = ""
    files: dict[str, bytes] = field(default_factory=dict)  # what each case run needs


def _judge_output(res: CaseResult, case: Case, out: str, marker: str, token: str) -> CaseResult:
    """The verdict of a run that ended well, from its output `out`: a script's completion token,
    a stdin/stdout case's output, a function case's returned value (after the harness's marker)."""
    if case.kind == "script":
        if token and token not in out.splitlines():
            res.verdict, res.detail = "RE", "the script ended before its checks completed (no completion token)"
        return res
    if case.kind == "stdio":
        if not tokens_match(out, case.expected_output, case.tolerance or OUTPUT_TOLERANCE):
            res.verdict, res.detail = "WA", "output differs from the expected output"
        return res
    lines = [ln for ln in out.splitlines() if ln.startswith(marker)]
    if not lines:
        res.verdict, res.detail = "RE", "the harness returned no result"
        return res
    try:
        actual = json.loads(lines[-1][len(marker):])
    except ValueError:
        res.verdict, res.detail = "RE", "the harness returned an unreadable result"
        return res
    if not values_match(actual, case.expected, case.tolerance):
        res.verdict = "WA"
        res.detail = f"expected {json.dumps(case.expected)[:120]}, got {json.dumps(actual)[:120]}"
    return res


class Executor:
    """Compiles programs and runs cases in the sandbox, in parallel, with a result cache."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, *, workers: int | None = None, cache_path: Path | None = None,
                 sandbox: Sandbox | None = None, compile_limits: Limits = COMPILE_LIMITS,
                 sandbox_mode: str = "auto"):
        """Raises SandboxUnavailable when no sandbox of `sandbox_mode` can run here."""
        self.limits = limits
        self.compile_limits = compile_limits
        self.sandbox = sandbox or Sandbox(slots=workers, mode=sandbox_mode)
        self.cache = ResultCache(cache_path)
        self._compiled: dict[str, Compiled] = {}
        self._compile_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    # -- compile ----------------------------------------------------------------------------
    def compile(self, program: Program) -> Compiled:
        key = _key("compile", program.language, program.source)
        with self._lock:
            lock = self._compile_locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._compiled:
                self._compiled[key] = self._compile(program)
            return self._compiled[key]

    def _compile(self, program: Program) -> Compiled:
        src = program.source.encode("utf-8", "surrogatepass")
        if program.language == "python":
            name = "solution.py" if program.entry_point else "Main.py"
            check = "import sys; compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')"
            raw, _ = self.sandbox.run(["{python}", "-I", "-c", check, name], files={name: src},
                                      limits=self.compile_limits)
            if raw.exit_code != 0:
                return Compiled(False, _tail(raw.stderr, 1000) or "compile check failed")
            return Compiled(True, files={name: src})
        if program.language == "java":
            cls = java_main_class(program.source)
            lim = replace(self.compile_limits, memory_mb=max(self.compile_limits.memory_mb, 1024))
            argv = ["javac", f"-J-Xmx{lim.memory_mb}m", "-J-XX:+UseSerialGC", "-J-XX:-UsePerfData",
                    "-encoding", "UTF-8", "-nowarn", "-d", "classes", f"{cls}.java"]
            raw, files = self.sandbox.run(argv, files={f"{cls}.java": src}, limits=lim, address_space=False,
                                          setup=lambda w: (w / "classes").mkdir(), collect=["classes/**/*.class"])
            if raw.exit_code != 0 or not files:
                return Compiled(False, _tail(raw.stderr, 1000) or _tail(raw.stdout, 1000) or "javac failed")
            return Compiled(True, files=files)
        raise ValueError(f"unsupported language {program.language!r}")

    # -- run ----------------------------------------------------------------------------------
    def _argv(self, program: Program, case: Case) -> list[str]:
        if program.language == "python":
            if case.kind == "function":
                return ["{python}", "-I", "-c", _HARNESS]
            if case.kind == "script" and not program.entry_point:
                return ["{python}", "-I", "-c", _SCRIPT_HARNESS]
            return ["{python}", "-I", "Main.py" if not program.entry_point else "solution.py"]
        cls = java_main_class(program.source)
        return ["java", f"-Xmx{self.limits.memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:-UsePerfData",
                "-XX:TieredStopAtLevel=1", "-cp", "classes", cls]

    def run_case(self, program: Program, case: Case) -> CaseResult:
        key = _key("run", program.language, program.source, program.entry_point, case.as_json(), asdict(self.limits))
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        result = self._run_case(program, case)
        self.cache.put(key, result)
        return result

    def _run_case(self, program: Program, case: Case) -> CaseResult:
        if case.kind == "function" and (program.language != "python" or not program.entry_point):
            raise ValueError("function cases need a Python program with an entry_point")
        compiled = self.compile(program)
        if not compiled.ok:
            return CaseResult("CE", compiled.detail.strip().splitlines()[-1][:300] if compiled.detail.strip() else "")
        limits = self.limits
        stdin = case.stdin.encode()
        marker = token = ""
        if case.kind == "script" and program.language == "python" and not program.entry_point:
            token = f"@@rtcbot-done-{secrets.token_hex(16)}@@"
            stdin = (token + "\n").encode()
        if case.kind == "function":
            marker = f"@@rtcbot-result-{secrets.token_hex(8)}@@"
            stdin = json.dumps({"entry_point": program.entry_point, "args": list(case.args),
                                "marker": marker}).encode()
        # The JVM reserves far more address space than it uses: its heap is bounded by -Xmx.
        raw, _ = self.sandbox.run(self._argv(program, case), files=compiled.files, stdin=stdin,
                                  limits=limits, address_space=program.language != "java")
        res = CaseResult("AC", wall_s=round(raw.wall_s, 4), cpu_s=round(raw.cpu_s, 4), max_rss_kb=raw.max_rss_kb,
                         exit_code=raw.exit_code, signal=raw.signal,
                         stdout=raw.stdout[:2000].decode("utf-8", "replace"),
                         stderr=_tail(raw.stderr), notes=list(raw.notes))
        failure = failure_verdict(raw, limits)
        if failure is not None:
            res.verdict, res.detail = failure
            if case.kind == "script" and res.verdict == "RE" and "AssertionError" in res.stderr:
                res.verdict, res.detail = "WA", "a test assertion failed"
            return res
        return _judge_output(res, case, raw.stdout.decode("utf-8", "replace"), marker, token)

    def run_cases(self, program: Program, cases: Sequence[Case]) -> list[CaseResult]:
        return self.run_many([(program, list(cases))])[0]

    def run_many(self, jobs: Iterable[tuple[Program, Sequence[Case]]],
                 on_done: Callable[[], None] | None = None) -> list[list[CaseResult]]:
        """Every (program, case) pair, in parallel across the sandbox's slots; results in order."""
        jobs = [(p, list(cs)) for p, cs in jobs]
        flat = [(i, j, p, c) for i, (p, cs) in enumerate(jobs) for j, c in enumerate(cs)]
        out: list[list[CaseResult | None]] = [[None] * len(cs) for _, cs in jobs]

        def one(item: tuple[int, int, Program, Case]) -> None:
            i, j, p, c = item
            out[i][j] = self.run_case(p, c)
            if on_done is not None:
                on_done()

        if len(flat) <= 1 or self.sandbox.slots <= 1:
            for item in flat:
                one(item)
        else:
            with ThreadPoolExecutor(max_workers=self.sandbox.slots) as ex:
                list(ex.map(one, flat))
        return [[r for r in row if r is not None] for row in out]
