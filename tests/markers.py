"""What each slower test needs, said by a marker and checked (a pytest plugin; tests/conftest.py
loads it).

    slow      a second or more of CPU on its own: a new `rtcbot` process (importing it costs ~3 s
              of CPU), Semgrep, PMD, JSHint, javac, pylint, long waits
    services  PostgreSQL or Redis: the machine's (127.0.0.1:5432, 127.0.0.1:6379, a process given
              DATABASE_URL/REDIS_URL) or servers the test starts (initdb, pg_ctl, redis-server)
    browser   Chromium driven by Playwright
    model     the embedded llama.cpp model (the `embedded_llm` fixture, `rtcbot` with no LLM
              endpoint) or sentence-transformers embeddings
    chaos     fault injection: the tests/reliability harness (servers restarted, workers killed)

`make check` runs the tests with none of them; `make test` runs them all. A test that needs
something its markers do not say fails, naming the marker to add. Needs are found two ways:

- at collection, from the fixtures a test uses (FIXTURE_NEEDS; a parametrized fixture marks the
  params that need a service with `pytest.param(..., marks=pytest.mark.services)`) and from
  the fault-injection modules its module imports (CHAOS_MODULES);
- while its setup and call run, by an audit hook (PEP 578) in this process: a connection to
  PostgreSQL or Redis, a process started that is a database, Chromium, Playwright's driver or
  llama.cpp's server, or that is handed DATABASE_URL/REDIS_URL, and rtcbot's own events
  `rtcbot.embedded_llm` (the embedded server handed out) and `rtcbot.embeddings` (sentences
  embedded). What a child process does on its own is not seen; its command line and
  environment are.

`slow` is not detected (time is too noisy on a shared machine to fail on); the summary lists
the unmarked tests that took longer than SLOW_HINT_S.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

# name → what it means (pyproject.toml registers the same; a test keeps the two in step)
MARKERS: dict[str, str] = {
    "slow": "a second or more of CPU on its own: a new rtcbot process, Semgrep, PMD, JSHint, javac, pylint, long waits",
    "services": "real PostgreSQL/Redis (127.0.0.1:5432/6379, DATABASE_URL/REDIS_URL) or servers the test "
                "starts (initdb, pg_ctl, redis-server)",
    "browser": "Chromium driven by Playwright",
    "model": "the embedded llama.cpp model or sentence-transformers embeddings",
    "chaos": "fault injection (tests/reliability): servers restarted, workers killed",
}
# what `make check` leaves out
CHECK_LANE = " and ".join(f"not {m}" for m in MARKERS)

FIXTURE_NEEDS: dict[str, str] = {
    "embedded_llm": "model",  # tests/conftest.py: the embedded llama.cpp server
    "st_model": "model",  # tests/analyzers/crscore/conftest.py: all-MiniLM-L6-v2 (sentence-transformers)
    "numpy_minilm": "model",  # the same, in numpy (analyzers/crscore/bert.py)
}
CHAOS_MODULES = ("tests.reliability.harness", "tests.reliability.run", "tests.reliability.scenarios")
CHAOS_DIR = Path(__file__).resolve().parent / "reliability"

SERVICE_PORTS = {5432: "PostgreSQL", 6379: "Redis"}
LOOPBACK = {"127.0.0.1", "::1", "localhost", "0.0.0.0"}
SERVICE_PROGRAMS = {"initdb", "pg_ctl", "pg_ctlcluster", "postgres", "redis-server"}
BROWSER_PROGRAMS = {"chromium", "chromium-browser", "chrome", "google-chrome", "headless_shell"}
WRAPPERS = {"setpriv", "env", "sudo", "nice", "timeout", "runuser"}
SLOW_HINT_S = 3.0


def report_only() -> bool:
    """RTCBOT_TEST_MARKERS=report lists what is missing at the end instead of failing (for
    marking a suite in one run); the default enforces."""
    return os.environ.get("RTCBOT_TEST_MARKERS") == "report"


@dataclass
class _Current:
    """The test whose setup or call is running in this process, and what it was seen to need."""

    nodeid: str | None = None
    old_threads: frozenset[int] = frozenset()
    seen: dict[str, str] = field(default_factory=dict)  # need → the first evidence


_current = _Current()
_installed = False


def _note(need: str, evidence: str) -> None:
    if _current.nodeid is None or threading.get_ident() in _current.old_threads:
        return  # between tests, or a thread an earlier test left behind
    _current.seen.setdefault(need, evidence)


def _text(x: object) -> str:
    if isinstance(x, bytes):
        return x.decode(errors="replace")
    return os.fspath(x) if isinstance(x, os.PathLike) else str(x)


def _program(argv: list[str]) -> str:
    """The program a command line runs, past wrappers such as setpriv."""
    for arg in argv:
        name = os.path.basename(arg)
        if arg.startswith("-") or "=" in arg:
            continue
        if name not in WRAPPERS:
            return name
    return ""


def _url_port(url: str) -> int | None:
    """The port a PostgreSQL or Redis URL names (its default when none), None for anything else."""
    try:
        parts = urlsplit(url)
        default = {"redis": 6379, "rediss": 6379}.get(parts.scheme,
                                                      5432 if parts.scheme.startswith("postgres") else None)
        return parts.port or default
    except ValueError:
        return None


def needs_of_command(args: object, env: object) -> dict[str, str]:
    """What starting this command says about the test (subprocess.Popen's audit arguments)."""
    argv = ([_text(args)] if isinstance(args, (str, bytes, os.PathLike))
            else [_text(a) for a in (args or [])])  # type: ignore[attr-defined]
    found: dict[str, str] = {}
    program = _program(argv)
    line = " ".join(argv)[:200]
    if any(a == "llama_cpp.server" for a in argv):
        found["model"] = f"started llama.cpp's server: {line}"
    if program in SERVICE_PROGRAMS:
        found["services"] = f"started {program}: {line}"
    if program in BROWSER_PROGRAMS or any("playwright" in a and "driver" in a for a in argv):
        found["browser"] = f"started a browser or Playwright's driver: {line}"
    if isinstance(env, dict):
        for name, port in (("DATABASE_URL", 5432), ("REDIS_URL", 6379)):
            value = _text(env.get(name) or env.get(name.encode()) or "")
            # set by the test (a CI job may export one for the whole run: that is not the test's),
            # on the service's port (a URL on a dead port is a test of the service being away)
            if value and value != os.environ.get(name) and _url_port(value) == port:
                found["services"] = f"started a process with {name} set: {line}"
    return found


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _current.nodeid is None:
        return
    try:
        if event == "socket.connect":
            address = args[1]
            if isinstance(address, tuple) and len(address) >= 2 and address[1] in SERVICE_PORTS \
                    and str(address[0]) in LOOPBACK:
                _note("services", f"connected to {SERVICE_PORTS[address[1]]} on {address[0]}:{address[1]}")
            elif isinstance(address, (str, bytes)) and ".s.PGSQL." in _text(address):
                _note("services", f"connected to PostgreSQL's socket {_text(address)}")
        elif event == "subprocess.Popen":
            for need, evidence in needs_of_command(args[1], args[3]).items():
                _note(need, evidence)
        elif event == "rtcbot.postgres":
            _note("services", f"connected to PostgreSQL: {args[0]}")
        elif event == "rtcbot.embedded_llm":
            _note("model", "used the embedded llama.cpp server")
        elif event == "rtcbot.embeddings":
            _note("model", f"embedded sentences with {args[0]}")
    except Exception:  # noqa: BLE001 - an audit hook must never break the code it watches
        pass


def _watch_psycopg() -> None:
    """psycopg connects through libpq, which Python's socket audit does not see: an event for
    each connection made, or tried on PostgreSQL's port, from the test process only (the
    product's code is unchanged)."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
    except ImportError:
        return
    OWN_ARGS = {"autocommit", "prepare_threshold", "context", "row_factory", "cursor_factory"}  # psycopg's, not libpq's
    original = psycopg.Connection.connect.__func__  # type: ignore[attr-defined]
    if getattr(original, "_rtcbot_watched", False):
        return

    def connect(cls: Any, /, conninfo: str = "", **kw: Any) -> Any:
        try:
            libpq = {k: v for k, v in kw.items()
                     if k not in OWN_ARGS and isinstance(v, (str, int)) and not isinstance(v, bool)}
            params = conninfo_to_dict(make_conninfo(conninfo, **libpq))
            where = f"{params.get('host', 'the default socket')}:{params.get('port', 5432)}/{params.get('dbname', '')}"
            if str(params.get("port", "5432")) == "5432":
                sys.audit("rtcbot.postgres", where)
        except Exception:  # noqa: BLE001 - psycopg itself says what is wrong with a conninfo
            where = "PostgreSQL"
        conn = original(cls, conninfo, **kw)
        sys.audit("rtcbot.postgres", where)  # a server answered, on whatever port
        return conn

    connect._rtcbot_watched = True  # type: ignore[attr-defined]
    psycopg.Connection.connect = classmethod(connect)  # type: ignore[assignment,method-assign]
    psycopg.connect = psycopg.Connection.connect  # the module's name is bound at its import (SQLAlchemy calls it)


def static_needs(item: pytest.Item) -> dict[str, str]:
    """Needs known before the test runs: its fixtures and its module's imports."""
    found: dict[str, str] = {}
    for name in getattr(item, "fixturenames", ()):
        if name in FIXTURE_NEEDS:
            found.setdefault(FIXTURE_NEEDS[name], f"uses the fixture `{name}`")
    module = getattr(item, "module", None)
    if module is not None:
        for value in vars(module).values():
            origin = getattr(value, "__module__", None) or getattr(value, "__name__", None)
            if isinstance(origin, str) and origin.startswith(CHAOS_MODULES):
                found.setdefault("chaos", f"its module uses the fault-injection harness ({origin})")
                break
    return found


def missing(item: pytest.Item, needs: dict[str, str]) -> list[str]:
    return [f"needs `@pytest.mark.{need}`: {why}" for need, why in sorted(needs.items())
            if item.get_closest_marker(need) is None]


def _message(item: pytest.Item, problems: Iterable[str]) -> str:
    return (f"{item.nodeid} breaks the marker rules (tests/markers.py says which test needs which):\n  "
            + "\n  ".join(problems))


def pytest_configure(config: pytest.Config) -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_audit)  # for the life of the process: hooks cannot be removed
        _installed = True
    _watch_psycopg()


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`--dist loadgroup`) the tests that use a model run on one worker, so
    the embedded server starts and the embedding model loads once, not once per worker."""
    if not hasattr(config, "workerinput"):  # not an xdist worker
        return
    for item in items:
        if item.get_closest_marker("model") is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("model"))


def misplaced(item: pytest.Item) -> list[str]:
    """`make test` runs the chaos tests from their folder, in a process of their own: one elsewhere would never run."""
    if item.get_closest_marker("chaos") is None or CHAOS_DIR in item.path.parents:
        return []
    return [f"is marked chaos outside {CHAOS_DIR.relative_to(CHAOS_DIR.parents[1])}/, where `make test` runs them"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # before any fixture: an unmarked test never starts the model or a database
    problems = missing(item, static_needs(item)) + misplaced(item)
    if problems and not report_only():
        pytest.fail(_message(item, problems), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    main = threading.main_thread().ident
    _current.nodeid = item.nodeid
    _current.old_threads = frozenset(t.ident for t in threading.enumerate() if t.ident not in (main, None))
    _current.seen = {}
    try:
        return (yield)
    finally:
        _current.nodeid = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if _current.nodeid != item.nodeid or call.when == "teardown":
        return report
    # the test's own part ends with its call, or with a setup that did not pass (no call follows)
    if call.when == "call" or report.outcome != "passed":
        _current.nodeid = None  # teardown is not the test's: module and session fixtures end there
        problems = missing(item, _current.seen)
        if report_only():
            problems = missing(item, {**static_needs(item), **_current.seen})
            if problems:
                report.user_properties.append(("missing markers", "; ".join(problems)))
        elif problems:
            text = _message(item, problems)
            if report.outcome == "failed":
                text = f"{report.longreprtext}\n\n{text}"
            report.outcome = "failed"
            report.longrepr = text
    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Unmarked tests that took long: candidates for `slow` (a hint, never a failure)."""
    long: list[tuple[float, str]] = []
    for reports in terminalreporter.stats.values():
        for r in reports:
            if getattr(r, "when", None) == "call" and getattr(r, "duration", 0.0) > SLOW_HINT_S \
                    and not set(MARKERS) & set(getattr(r, "keywords", {})):
                long.append((r.duration, r.nodeid))
    unmarked = [(r.nodeid, text) for reports in terminalreporter.stats.values() for r in reports
                for name, text in getattr(r, "user_properties", ()) if name == "missing markers"]
    if unmarked:
        terminalreporter.write_sep("-", f"{len(unmarked)} tests miss a marker (RTCBOT_TEST_MARKERS=report)")
        for nodeid, text in unmarked:
            terminalreporter.write_line(f"{nodeid}: {text}")
    if long:
        terminalreporter.write_sep("-", f"unmarked tests over {SLOW_HINT_S:.0f} s (mark them slow?)")
        for duration, nodeid in sorted(long, reverse=True):
            terminalreporter.write_line(f"{duration:6.1f}s {nodeid}")
