from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from analyzers.execution.oracle import (
    NO_NETNS,
    Case,
    Executor,
    Limits,
    Program,
    _user_processes,
    java_main_class,
)
from analyzers.execution.verdicts import Tolerance
from tests.support import require

SMALL = Limits(wall_s=4.0, cpu_s=2.0, memory_mb=256, nproc=32, fsize_mb=8, output_kb=1024)


@pytest.fixture(scope="module")
def ex() -> Executor:
    return Executor(SMALL, workers=2)


def py(src: str) -> Program:
    return Program("python", src)


def one(ex: Executor, program: Program, case: Case | None = None):  # type: ignore[no-untyped-def]
    return ex.run_case(program, case or Case(stdin="", expected_output=""))


def sandbox_processes_alive(ex: Executor) -> list[int]:
    """Live processes of the runs' uids, but for the warm runners' own (bubblewrap and the runner)."""
    base = ex.sandbox._uid_base
    runners = {pid for runner in ex.sandbox._idle for pid in runner.pids()}
    return [pid for uid in range(base, base + ex.sandbox._uid_next + 1) for pid in _user_processes(uid, live_only=True)
            if pid not in runners]


def test_java_main_class() -> None:
    assert java_main_class("import x;\npublic class Solution {\n}") == "Solution"
    assert java_main_class("class A {}") == "Main"


def test_a_process_holding_over_a_thousand_descriptors_keeps_its_warm_runner() -> None:
    """A long-lived process (a worker, an evaluation) holds many files and sockets: the warm
    runner's socket and the sandbox's pidfd are then numbered over 1024, where select() refused
    them ("filedescriptor out of range in select()") and every case fell back to a cold start,
    or failed."""
    require(shutil.which("bwrap"), "bubblewrap is not installed")
    held = [os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC) for _ in range(1100)]
    try:
        assert max(held) >= 1024
        ex = Executor(SMALL, workers=1, sandbox_mode="bwrap")
        r = ex.run_cases(py("print(int(input()) * 2)\n"),
                         [Case(stdin="21\n", expected_output="42\n"), Case(stdin="1\n", expected_output="3\n")])
        assert [x.verdict for x in r] == ["AC", "WA"], r
        assert len(ex.sandbox._idle) == 1 and ex.sandbox._idle[0].alive()  # warm, and kept for the next case
    finally:
        for fd in held:
            os.close(fd)


# -- verdicts ----------------------------------------------------------------------------

def test_stdio_ac_wa_re_ce(ex: Executor) -> None:
    add = py("a, b = map(int, input().split())\nprint(a + b)\n")
    r = ex.run_cases(add, [Case(stdin="1 2\n", expected_output="3\n"), Case(stdin="1 2\n", expected_output="4\n")])
    assert [x.verdict for x in r] == ["AC", "WA"]
    assert r[0].notes == [] or r[0].notes[0].startswith(NO_NETNS)
    r = one(ex, py("raise SystemExit(3)\n"))
    assert (r.verdict, r.exit_code) == ("RE", 3)
    r = one(ex, py("1/0\n"))
    assert r.verdict == "RE" and "ZeroDivisionError" in r.stderr
    r = one(ex, py("def f(:\n"))
    assert r.verdict == "CE" and "SyntaxError" in r.detail


def test_function_cases_generators_tolerance_and_errors(ex: Executor) -> None:
    gen = Program("python", "def f(n):\n    for i in range(n):\n        yield i\n", entry_point="f")
    r = ex.run_cases(gen, [Case(kind="function", args=[3], expected=[0, 1, 2]),
                           Case(kind="function", args=[2], expected=[0, 1, 2])])
    assert [x.verdict for x in r] == ["AC", "WA"]
    assert "expected [0, 1, 2], got [0, 1]" in r[1].detail
    flt = Program("python", "def f(x):\n    print('noise')\n    return x / 3\n", entry_point="f")
    r = ex.run_cases(flt, [Case(kind="function", args=[1], expected=0.3333, tolerance=Tolerance(abs=1e-3)),
                           Case(kind="function", args=[1], expected=0.3333)])
    assert [x.verdict for x in r] == ["AC", "WA"]
    missing = Program("python", "def g():\n    pass\n", entry_point="f")
    assert one(ex, missing, Case(kind="function", args=[], expected=None)).verdict == "RE"
    rec = Program("python", "def f(n):\n    return f(n + 1)\n", entry_point="f")
    r = one(ex, rec, Case(kind="function", args=[0], expected=0))
    assert r.verdict == "RE" and "RecursionError" in r.stderr


def test_a_program_cannot_forge_the_harness_result(ex: Executor) -> None:
    cheat = Program("python", "import sys\ndef f():\n    sys.stdout.write('@@rtcbot-result-0@@42\\n')\n    return 1\n",
                    entry_point="f")
    assert one(ex, cheat, Case(kind="function", args=[], expected=42)).verdict == "WA"


def test_script_cases(ex: Executor) -> None:
    ok = py("def inc(x):\n    return x + 1\nassert inc(1) == 2\n")
    bad = py("def inc(x):\n    return x\nassert inc(1) == 2\n")
    assert one(ex, ok, Case(kind="script")).verdict == "AC"
    assert one(ex, bad, Case(kind="script")).verdict == "WA"


def test_results_are_cached_by_program_and_case(tmp_path: Path) -> None:
    ex = Executor(SMALL, workers=1, cache_path=tmp_path / "runs.sqlite3")
    prog = py("print(input())\n")
    first = ex.run_case(prog, Case(stdin="x", expected_output="x"))
    again = ex.run_case(prog, Case(stdin="x", expected_output="x"))
    other = ex.run_case(prog, Case(stdin="y", expected_output="y"))
    assert (first.cached, again.cached, other.cached) == (False, True, False)
    fresh = Executor(SMALL, workers=1, cache_path=tmp_path / "runs.sqlite3")
    assert fresh.run_case(prog, Case(stdin="x", expected_output="x")).cached


def test_runs_in_parallel(ex: Executor) -> None:
    # Each case says when it ran (on stderr): two slots, so two at once, never three. The
    # whole run's wall time against the serial time said it with 1.2 s to spare for four
    # sandbox starts, which a loaded machine can take.
    prog = py("import sys, time\nt = time.time()\ntime.sleep(0.6)\nprint(input())\n"
              "print('ran', t, time.time(), file=sys.stderr)\n")
    cases = [Case(stdin=str(i), expected_output=str(i)) for i in range(4)]
    r = ex.run_cases(prog, cases)
    assert [x.verdict for x in r] == ["AC"] * 4
    spans = [tuple(map(float, x.stderr.split()[1:3])) for x in r]
    at_once = max(sum(start <= t < end for start, end in spans) for t, _ in spans)
    assert at_once == 2, spans


def test_each_case_gets_a_fresh_directory(ex: Executor) -> None:
    prog = py("import os\nprint(sorted(os.listdir('.')))\nopen('left-behind', 'w').write('x')\n")
    a = one(ex, prog, Case(stdin="1", expected_output=""))
    b = one(ex, prog, Case(stdin="2", expected_output=""))
    assert a.stdout.strip() == b.stdout.strip() == "['Main.py']"


# -- hostile programs ----------------------------------------------------------------------

@pytest.mark.slow
def test_infinite_loop_is_tle_within_the_limit(ex: Executor) -> None:
    t0 = time.monotonic()
    r = one(ex, py("while True:\n    pass\n"))
    assert r.verdict == "TLE"
    # within the limit and the sandbox's start and clean-up, which a loaded machine slows
    # (2 s was within its reach); an unbounded loop never ends
    assert time.monotonic() - t0 < SMALL.wall_s + 10
    r = one(ex, py("import time\ntime.sleep(60)\n"))  # no CPU used: the wall clock stops it
    assert r.verdict == "TLE" and "wall" in r.detail
    assert r.wall_s < SMALL.wall_s + 5  # stopped at the limit (a watcher woken late: not 1 s), not at 60 s


def test_memory_bomb_is_mle(ex: Executor) -> None:
    r = one(ex, py("x = []\nwhile True:\n    x.append(bytearray(10 ** 7))\n"))
    assert r.verdict == "MLE", (r.verdict, r.detail, r.stderr[-300:])
    assert r.max_rss_kb < 2 * SMALL.memory_mb * 1024


def test_bounded_fork_loop_is_capped_at_nproc(ex: Executor) -> None:
    """Containment first, with a harmless bounded loop: forks beyond the limit fail."""
    src = (
        "import os, time\nok = fail = 0\nfor i in range(100):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        fail += 1\n        continue\n    if pid == 0:\n"
        "        os.setsid()\n        time.sleep(30)\n        os._exit(0)\n    ok += 1\nprint(ok, fail)\n"
    )
    r = one(ex, py(src))
    ok, fail = map(int, r.stdout.split())
    assert ok < SMALL.nproc and fail > 0
    assert sandbox_processes_alive(ex) == []  # the sleepers that left the session are gone too


@pytest.mark.slow  # a sandbox filled with processes
def test_fork_bomb_is_contained(ex: Executor) -> None:
    bomb = py("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n")
    t0 = time.monotonic()
    r = one(ex, bomb)
    assert r.verdict in ("TLE", "RE")
    assert time.monotonic() - t0 < SMALL.wall_s + 10  # as tests/security/test_sandbox.py's bomb
    assert sandbox_processes_alive(ex) == []
    # the machine is still fine: we can start processes and the next run works
    assert subprocess.run(["true"], check=False).returncode == 0
    assert one(ex, py("print('alive')\n"), Case(stdin="", expected_output="alive")).verdict == "AC"


def test_huge_file_is_stopped(ex: Executor) -> None:
    src = "with open('big', 'wb') as f:\n    for _ in range(1024):\n        f.write(b'x' * (1 << 20))\n"
    r = one(ex, py(src))
    assert r.verdict == "RE" and "file size" in r.detail
    flood = one(ex, py("while True:\n    print('y' * 1000)\n"))
    assert flood.verdict == "RE" and ("file size" in flood.detail or "output" in flood.detail)
    assert len(flood.stdout) <= 2000


def test_no_network_to_a_loopback_listener(ex: Executor) -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    srv.settimeout(0.2)
    port = srv.getsockname()[1]
    arrived: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, addr = srv.accept()
                arrived.append(addr)
                conn.close()
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        src = (
            "import socket\ntry:\n    s = socket.create_connection(('127.0.0.1', PORT), timeout=2)\n"
            "    s.sendall(b'leak')\n    print('connected')\nexcept OSError as e:\n    print('blocked', e)\n"
        ).replace("PORT", str(port))
        def knock() -> object:
            """A connection from outside the sandbox; its address, once the listener took it."""
            with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                addr = s.getsockname()
            deadline = time.monotonic() + 30
            while addr not in arrived and time.monotonic() < deadline:
                time.sleep(0.05)
            return addr

        # the listener works: a connection from outside the sandbox arrives
        assert arrived == [knock()]
        arrived.clear()
        r = one(ex, py(src))
        isolated = not any(n.startswith(NO_NETNS) for n in r.notes)
        require(isolated, f"{NO_NETNS} on this kernel: {r.notes}")
        # a connection the program made would be taken before one made after it ended (the
        # listener accepts in order): nothing but that one, however slow the listener is
        assert arrived == [knock()]
        assert r.stdout.startswith("blocked")
    finally:
        stop.set()
        t.join(timeout=2)
        srv.close()



def test_environment_has_no_secrets(ex: Executor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RTCBOT_FAKE_SECRET", "hunter2-fake-token")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_fake_token_for_test")
    src = (
        "import json, os\nenv = dict(os.environ)\ntry:\n"
        "    env['parent'] = open('/proc/%d/environ' % os.getppid(), 'rb').read().decode('latin-1')\n"
        "except OSError as e:\n    env['parent'] = 'denied'\nprint(json.dumps(env))\n"
    )
    r = one(ex, py(src))
    seen = json.loads(r.stdout)
    assert "hunter2" not in r.stdout and "ghs_fake" not in r.stdout
    assert set(seen) - {"parent", "LC_CTYPE"} == {"PATH", "LANG", "HOME"}
    assert os.environ["RTCBOT_FAKE_SECRET"] == "hunter2-fake-token"  # it was there to steal


# -- Java ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_java_stdio_cases() -> None:
    require(shutil.which("javac") and shutil.which("java"), "javac/java not installed")
    ex = Executor(Limits(wall_s=10, cpu_s=10, memory_mb=256, nproc=64, fsize_mb=8), workers=2)
    src = ("import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n"
           "    Scanner s = new Scanner(System.in);\n    long x = s.nextLong();\n"
           "    System.out.println(x * 2);\n    System.out.println(1.0 / 3);\n  }\n}\n")
    prog = Program("java", src)
    r = ex.run_cases(prog, [Case(stdin="21", expected_output="42 0.333333333"),
                            Case(stdin="2", expected_output="5 0.3333333")])
    assert [x.verdict for x in r] == ["AC", "WA"], [x.stderr for x in r]
    assert one(ex, Program("java", "public class Main { void f( }")).verdict == "CE"
    boom = Program("java", "public class Main { public static void main(String[] a) {"
                           " int[] x = new int[1]; x[2] = 1; } }")
    assert one(ex, boom).verdict == "RE"
    mem = Program("java", "import java.util.*;\npublic class Main { public static void main(String[] a) {"
                          " List<long[]> l = new ArrayList<>(); while (true) l.add(new long[1 << 20]); } }")
    assert one(ex, mem).verdict == "MLE"
    loop = Program("java", "public class Main { public static void main(String[] a) { while (true) {} } }")
    assert one(ex, loop).verdict == "TLE"
