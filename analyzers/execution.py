"""Run untrusted programs against test cases in a sandbox and give a verdict per case.

Verdicts (FixEval's): AC accepted, WA wrong answer, TLE time limit, MLE memory limit,
RE runtime error (a non-zero exit, a signal, a file or output limit), CE compile error.

Test styles:
- stdin/stdout (`Case(stdin=…, expected_output=…)`): the program reads stdin, its stdout is
  compared with the expected output by whitespace tokens, numbers within a tolerance.
- function (`Case(args=[…], expected=…)`, Python): `entry_point(*args)` is called by a small
  harness in the sandbox; the parent compares the returned value with `expected` (within the
  case's tolerance where it has one). Generators are turned into lists, as QuixBugs does.
- script (`Case(kind="script")`): the program is a test script (HumanEval's `check`); exit
  code 0 is AC, a failed assertion is WA.

The sandbox, per run: a fresh temporary directory (the only place the program may write,
besides the usual world-writable places); an empty environment (PATH, LANG, HOME=that
directory); a new session, whose whole tree is killed on timeout; rlimits on CPU time,
address space, file size, core files and processes; a cap on what is read back from stdout;
a new network namespace (no interface is up, so nothing, not even the host's loopback, can be
reached) where the kernel allows it, else the result says "network isolation unavailable".

Fork bombs: RLIMIT_NPROC counts processes per *user* and root ignores it, so when we run as
root each worker runs its programs as its own unprivileged uid (no passwd entry needed);
NPROC then bounds that uid's processes, and after every run all processes of that uid are
killed at once (`kill -9 -1` run as that uid: the kernel signals them all under one lock,
so no fork can slip past). Not root: the program runs as us, NPROC is our processes now
plus the limit, and only its process group is killed.

The privileged steps (network namespace, rlimits, dropping the uid) happen in a tiny Python
launcher that then exec()s the program, so no preexec_fn runs in our (threaded) process.
Runs go in parallel across cores (one worker per core by default); results are cached by
(program, case, limits) in memory and optionally in a SQLite file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

Verdict = Literal["AC", "WA", "TLE", "MLE", "RE", "CE"]
VERDICTS: tuple[Verdict, ...] = ("AC", "WA", "TLE", "MLE", "RE", "CE")
Language = Literal["python", "java"]
NO_NETNS = "network isolation unavailable"

# -- limits and inputs ------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """Per-run limits. memory_mb bounds the address space (Python) or the heap (Java)."""

    wall_s: float = 10.0
    cpu_s: float = 10.0
    memory_mb: int = 2048
    nproc: int = 64
    fsize_mb: int = 64
    output_kb: int = 16 * 1024


COMPILE_LIMITS = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=2048, nproc=256, fsize_mb=64)


@dataclass(frozen=True)
class Tolerance:
    abs: float = 0.0
    rel: float = 0.0

    @classmethod
    def parse(cls, value: Any) -> Tolerance | None:
        """None, a number (absolute) or {"abs": …, "rel": …}."""
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return cls(abs=float(value))
        if isinstance(value, Mapping):
            return cls(abs=float(value.get("abs", 0.0) or 0.0), rel=float(value.get("rel", 0.0) or 0.0))
        raise ValueError(f"bad tolerance {value!r}")


OUTPUT_TOLERANCE = Tolerance(abs=1e-6, rel=1e-6)  # FixEval's 1e-6, relative as well


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


@dataclass
class CaseResult:
    verdict: Verdict
    detail: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_kb: int = 0
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""  # first 2,000 characters
    stderr: str = ""  # last 2,000 characters
    notes: list[str] = field(default_factory=list)
    cached: bool = False

    @property
    def passed(self) -> bool:
        return self.verdict == "AC"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- output comparison (pure) -----------------------------------------------------------------

_INT = re.compile(r"[+-]?\d+\Z")
_NUM = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)\Z", re.I)


def _number(tok: str) -> float | None:
    return float(tok) if _NUM.match(tok) else None


def numbers_close(a: float, b: float, tol: Tolerance) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(tol.abs, tol.rel * max(abs(a), abs(b)))


def tokens_match(actual: str, expected: str, tol: Tolerance = OUTPUT_TOLERANCE) -> bool:
    """Same number of whitespace tokens; each pair equal as text, or both numbers within tol
    (two integers compare exactly, so big integers are not rounded through floats)."""
    a, e = actual.split(), expected.split()
    if len(a) != len(e):
        return False
    for x, y in zip(a, e, strict=True):
        if x == y:
            continue
        if _INT.match(x) and _INT.match(y):
            if int(x) != int(y):
                return False
            continue
        fx, fy = _number(x), _number(y)
        if fx is None or fy is None or not numbers_close(fx, fy, tol):
            return False
    return True


def values_match(actual: Any, expected: Any, tol: Tolerance | None = None) -> bool:
    """Python equality, numbers within tol where one is given (recursively in lists/dicts)."""
    if tol is not None:
        num = (int, float)
        if isinstance(actual, num) and isinstance(expected, num) and not isinstance(actual, bool) \
                and not isinstance(expected, bool):
            return numbers_close(float(actual), float(expected), tol)
        if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
            return len(actual) == len(expected) and all(
                values_match(x, y, tol) for x, y in zip(actual, expected, strict=True))
        if isinstance(actual, dict) and isinstance(expected, dict):
            return actual.keys() == expected.keys() and all(values_match(actual[k], expected[k], tol) for k in actual)
    if isinstance(actual, float) and isinstance(expected, float) and math.isnan(actual) and math.isnan(expected):
        return True
    try:
        return bool(actual == expected)
    except Exception:
        return False


# -- the launcher: privileged setup, then exec ------------------------------------------------

_LAUNCHER = r"""
import ctypes, json, os, resource, signal, sys
cfg = json.loads(sys.argv[1]); argv = sys.argv[2:]
st = {"net": False, "error": ""}
if cfg["net"]:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x40000000) == 0:
            st["net"] = True
        else:
            st["error"] = os.strerror(ctypes.get_errno())
    except Exception as e:
        st["error"] = str(e)
status = open(cfg["status"], "w")  # opened before dropping privileges; rewritten at the end
json.dump(st, status); status.flush()
if cfg["uid"] is not None:
    os.setgroups([]); os.setgid(cfg["gid"]); os.setuid(cfg["uid"])
os.chdir(cfg["cwd"]); os.umask(0o077)
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
# The program runs in a child of this small process, so that its peak RSS is its own: a
# process's max RSS starts from the memory of whatever it was forked from.
pid = os.fork()
if pid == 0:
    for sig in ("SIGPIPE", "SIGXFSZ", "SIGXCPU"):
        signal.signal(getattr(signal, sig), signal.SIG_DFL)
    for name, soft, hard in cfg["rlimits"]:
        resource.setrlimit(getattr(resource, name), (soft, hard))
    try:
        os.execve(argv[0], argv, cfg["env"])
    except OSError as e:
        sys.stderr.write("sandbox: cannot run %s: %s\n" % (argv[0], e.strerror)); os._exit(127)
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
_, wstatus, ru = os.wait4(pid, 0)
st.update(wstatus=wstatus, maxrss=ru.ru_maxrss, cpu=ru.ru_utime + ru.ru_stime)
status.seek(0); status.truncate(); json.dump(st, status); status.close()
"""


def _others_can_exec(path: str) -> bool:
    """Whether a user who is neither owner nor group can run `path` (every directory above
    it searchable by others, the file executable by others)."""
    real = os.path.realpath(path)
    try:
        if not os.stat(real).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(real)
        while True:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
            if parent == "/":
                return True
            parent = os.path.dirname(parent)
    except OSError:
        return False


def _find_python(as_other: bool) -> str:
    """A Python 3 the sandbox user can run: ours if it can, else the system one."""
    cands = [sys.executable, getattr(sys, "_base_executable", ""), "/usr/bin/python3",
             shutil.which("python3") or ""]
    for c in cands:
        if c and os.path.exists(c) and (not as_other or _others_can_exec(c)):
            return os.path.realpath(c)
    raise RuntimeError("no Python interpreter the sandbox user can run")


@dataclass
class RawRun:
    exit_code: int | None
    signal: int | None
    wall_s: float
    cpu_s: float
    max_rss_kb: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    output_truncated: bool
    network_isolated: bool
    notes: list[str]


class Sandbox:
    """Runs one command at a time per slot; `slots` bounds the parallel runs."""

    def __init__(self, slots: int | None = None, isolate_network: bool = True, python: str | None = None):
        self.slots = max(1, slots or os.cpu_count() or 1)
        self.isolate_network = isolate_network
        self.as_root = os.geteuid() == 0
        # A fresh uid for every run, from this process's own range: zombies that the
        # machine's init has not reaped yet never count against the next run's NPROC.
        self._uid_base = 100_000 + (os.getpid() % 4000) * 1_000_000
        self._uid_next = 0
        self._slots = threading.BoundedSemaphore(self.slots)
        self._lock = threading.Lock()
        self.launcher_python = _find_python(as_other=False)
        self.python = python or _find_python(as_other=self.as_root)
        self.tmp_root = Path(tempfile.gettempdir())

    def containment(self) -> str:
        if self.as_root:
            return "per-slot unprivileged uid with RLIMIT_NPROC; all its processes killed after each run"
        return "RLIMIT_NPROC over our own user; the process group killed after each run"

    def run(self, argv: Sequence[str], *, files: Mapping[str, bytes] | None = None, stdin: bytes = b"",
            limits: Limits = Limits(), address_space: bool = True, setup: Callable[[Path], None] | None = None,
            collect: Sequence[str] = ()) -> tuple[RawRun, dict[str, bytes]]:
        """Run argv in a fresh directory holding `files`; returns the run and the `collect`ed
        files (relative names, e.g. '*.class' globs) from that directory afterwards."""
        self._slots.acquire()
        uid = self._new_uid()
        root = Path(tempfile.mkdtemp(prefix="rtcbot-run-", dir=self.tmp_root))
        try:
            rlimits = self._rlimits(limits, uid, address_space)
            return self._run(uid, root, argv, files or {}, stdin, limits, rlimits, setup, collect)
        finally:
            if uid is not None:
                self._kill_uid(uid)
            shutil.rmtree(root, ignore_errors=True)
            self._slots.release()

    def _new_uid(self) -> int | None:
        if not self.as_root:
            return None
        with self._lock:
            self._uid_next = (self._uid_next + 1) % 1_000_000
            return self._uid_base + self._uid_next

    # -- internals ------------------------------------------------------------------------
    def _rlimits(self, limits: Limits, uid: int | None, address_space: bool) -> list[tuple[str, int, int]]:
        cpu = max(1, math.ceil(limits.cpu_s))
        out = [
            ("RLIMIT_CPU", cpu, cpu + 1),
            ("RLIMIT_FSIZE", limits.fsize_mb << 20, limits.fsize_mb << 20),
            ("RLIMIT_CORE", 0, 0),
        ]
        nproc = limits.nproc
        if uid is None:  # counts all our processes: allow what runs now, plus the limit
            nproc += _count_user_processes(os.geteuid())
        out.append(("RLIMIT_NPROC", nproc, nproc))
        if address_space:
            out.append(("RLIMIT_AS", limits.memory_mb << 20, limits.memory_mb << 20))
        return out

    def _run(self, uid: int | None, root: Path, argv: Sequence[str], files: Mapping[str, bytes],
             stdin: bytes, limits: Limits, rlimits: list[tuple[str, int, int]],
             setup: Callable[[Path], None] | None,
             collect: Sequence[str]) -> tuple[RawRun, dict[str, bytes]]:
        os.chmod(root, 0o711)
        work = root / "work"
        work.mkdir()
        for name, data in files.items():
            p = work / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        if setup is not None:
            setup(work)
        if uid is not None:
            for dirpath, dirnames, filenames in os.walk(work):
                for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                    os.lchown(n, uid, uid)
        os.chmod(work, 0o700)
        (root / "stdin").write_bytes(stdin)
        status = root / "status.json"
        env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(work)}
        extra = list(argv)
        if argv and argv[0] == "{python}":
            extra[0] = self.python
        extra[0] = shutil.which(extra[0], path=env["PATH"]) or extra[0]
        cfg = {"net": self.isolate_network, "status": str(status), "uid": uid, "gid": uid, "cwd": str(work),
               "rlimits": rlimits, "env": env}
        cmd = [self.launcher_python, "-I", "-S", "-c", _LAUNCHER, json.dumps(cfg), *extra]
        with open(root / "stdin", "rb") as fin, open(root / "stdout", "wb") as fout, \
                open(root / "stderr", "wb") as ferr:
            t0 = time.monotonic()
            proc = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=ferr, cwd=work, env={},
                                    start_new_session=True, close_fds=True)
            timed_out = threading.Event()

            def on_timeout() -> None:
                timed_out.set()
                self._kill_tree(proc.pid, uid)

            timer = threading.Timer(limits.wall_s, on_timeout)
            timer.daemon = True
            timer.start()
            try:
                _, wstatus, ru = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
            wall = time.monotonic() - t0
            proc.returncode = os.waitstatus_to_exitcode(wstatus)
        self._kill_tree(proc.pid, uid)  # stragglers left in the group
        cap = limits.output_kb << 10
        with open(root / "stdout", "rb") as f:
            out = f.read(cap + 1)
        truncated = len(out) > cap
        with open(root / "stderr", "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            err = f.read()
        notes: list[str] = []
        net = False
        code, cpu_s, max_rss_kb = proc.returncode, ru.ru_utime + ru.ru_stime, int(ru.ru_maxrss)
        try:
            st = json.loads(status.read_text())
            net = bool(st.get("net"))
            if "wstatus" in st:  # the program's own figures, from the launcher that waited for it
                code = os.waitstatus_to_exitcode(int(st["wstatus"]))
                cpu_s, max_rss_kb = float(st["cpu"]), int(st["maxrss"])
            if self.isolate_network and not net:
                notes.append(f"{NO_NETNS} ({st.get('error') or 'unknown reason'})")
        except (OSError, ValueError):
            if self.isolate_network:
                notes.append(f"{NO_NETNS} (the launcher did not report)")
        collected: dict[str, bytes] = {}
        for pattern in collect:
            for p in sorted(work.glob(pattern)):
                if p.is_file() and not p.is_symlink():
                    collected[str(p.relative_to(work))] = p.read_bytes()
        return RawRun(
            exit_code=code if code >= 0 else None,
            signal=-code if code < 0 else None,
            wall_s=wall,
            cpu_s=cpu_s,
            max_rss_kb=max_rss_kb,
            stdout=out[:cap],
            stderr=err,
            timed_out=timed_out.is_set(),
            output_truncated=truncated,
            network_isolated=net,
            notes=notes,
        ), collected

    def _kill_tree(self, pid: int, uid: int | None) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if uid is not None:
            self._kill_uid(uid)

    @staticmethod
    def _kill_uid(uid: int) -> None:
        """Kill every process of `uid`: kill(-1) run as that uid reaches all of them at once."""
        for _ in range(5):
            if not _user_processes(uid, live_only=True):
                return
            try:
                subprocess.run(["kill", "-9", "--", "-1"], user=uid, group=uid, extra_groups=[], env={},
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=False)
            except FileNotFoundError:  # no kill(1): one by one (a fork may slip past; we loop)
                for pid in _user_processes(uid, live_only=True):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.01)


def _user_processes(uid: int, live_only: bool = False) -> list[int]:
    """Pids of uid's processes (without zombies when live_only)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid != uid:
                    continue
                if live_only:
                    with open(f"/proc/{d}/stat", "rb") as f:
                        if f.read().rsplit(b")", 1)[-1].split()[0] in (b"Z", b"X"):
                            continue
                pids.append(int(d))
            except (OSError, IndexError):
                continue
    return pids


def _count_user_processes(uid: int) -> int:
    n = 0
    for pid in _user_processes(uid):
        try:
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            n += 1
    return n


# -- verdicts (pure) --------------------------------------------------------------------------

_MEMORY_MARKERS = ("MemoryError", "java.lang.OutOfMemoryError", "std::bad_alloc", "Cannot allocate memory")


def _tail(data: bytes, n: int = 2000) -> str:
    return data[-n:].decode("utf-8", "replace")


def failure_verdict(run: RawRun, limits: Limits) -> tuple[Verdict, str] | None:
    """TLE / MLE / RE from how the run ended, or None when it exited 0 within its limits."""
    err = run.stderr.decode("utf-8", "replace")
    if run.timed_out:
        return "TLE", f"killed after {limits.wall_s:g} s wall time"
    if run.signal == signal.SIGXCPU or (run.signal == signal.SIGKILL and run.cpu_s >= math.ceil(limits.cpu_s)):
        return "TLE", f"CPU time limit of {limits.cpu_s:g} s"
    failed = run.signal is not None or run.exit_code != 0
    if failed and any(m in err for m in _MEMORY_MARKERS):
        return "MLE", f"memory limit of {limits.memory_mb} MB"
    if failed and run.max_rss_kb >= 0.9 * (limits.memory_mb << 10):
        return "MLE", f"memory limit of {limits.memory_mb} MB (peak {run.max_rss_kb >> 10} MB)"
    if run.signal == signal.SIGXFSZ or (failed and "File too large" in err):
        return "RE", f"file size limit of {limits.fsize_mb} MB"
    if run.output_truncated:
        return "RE", f"output limit of {limits.output_kb} KB"
    if run.signal is not None:
        return "RE", f"killed by signal {signal.Signals(run.signal).name}"
    if run.exit_code != 0:
        last = err.strip().splitlines()[-1:] or [""]
        return "RE", f"exit code {run.exit_code}: {last[0][:200]}"
    return None


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


class ResultCache:
    """(program, case, limits) → CaseResult, in memory and optionally in a SQLite file."""

    def __init__(self, path: Path | None = None):
        self._mem: dict[str, CaseResult] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()

    def get(self, key: str) -> CaseResult | None:
        with self._lock:
            hit = self._mem.get(key)
            if hit is None and self._db is not None:
                row = self._db.execute("SELECT value FROM runs WHERE key = ?", (key,)).fetchone()
                if row:
                    hit = CaseResult(**json.loads(row[0]))
                    self._mem[key] = hit
        return replace(hit, cached=True, notes=list(hit.notes)) if hit else None

    def put(self, key: str, result: CaseResult) -> None:
        with self._lock:
            self._mem[key] = result
            if self._db is not None:
                self._db.execute("INSERT OR REPLACE INTO runs (key, value) VALUES (?, ?)",
                                 (key, json.dumps(result.to_dict())))
                self._db.commit()


class Executor:
    """Compiles programs and runs cases in the sandbox, in parallel, with a result cache."""

    def __init__(self, limits: Limits = Limits(), *, workers: int | None = None, cache_path: Path | None = None,
                 sandbox: Sandbox | None = None, compile_limits: Limits = COMPILE_LIMITS):
        self.limits = limits
        self.compile_limits = compile_limits
        self.sandbox = sandbox or Sandbox(slots=workers)
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
        marker = ""
        if case.kind == "function":
            marker = f"@@rtcbot-result-{secrets.token_hex(8)}@@"
            stdin = json.dumps({"entry_point": program.entry_point, "args": list(case.args),
                                "marker": marker}).encode()
        # The JVM reserves far more address space than it uses: its heap is bounded by -Xmx.
        raw, _ = self.sandbox.run(self._argv(program, case), files=compiled.files, stdin=stdin,
                                  limits=limits, address_space=program.language != "java")
        res = CaseResult("AC", wall_s=round(raw.wall_s, 4), cpu_s=round(raw.cpu_s, 4), max_rss_kb=raw.max_rss_kb,
                         exit_code=raw.exit_code, signal=raw.signal, stdout=raw.stdout[:2000].decode("utf-8", "replace"),
                         stderr=_tail(raw.stderr), notes=list(raw.notes))
        failure = failure_verdict(raw, limits)
        if failure is not None:
            res.verdict, res.detail = failure
            if case.kind == "script" and res.verdict == "RE" and "AssertionError" in res.stderr:
                res.verdict, res.detail = "WA", "a test assertion failed"
            return res
        out = raw.stdout.decode("utf-8", "replace")
        if case.kind == "script":
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
