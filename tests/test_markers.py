"""tests/markers.py: a test that needs a service, a browser, the model or the fault-injection
harness without its marker fails, whether the need shows in its fixtures or only in what it
does; a marked one passes; pyproject, the plugin and `make check` say the same markers."""

from __future__ import annotations

import re
import sys
import tomllib

import pytest

from tests import markers
from tests.support import ROOT

INNER = '''
import socket
import subprocess
import sys
import threading

import pytest


@pytest.fixture
def embedded_llm():
    return "stands in for the session's embedded server"


def test_plain():
    assert True


def test_fixture_unmarked(embedded_llm):
    pass


@pytest.mark.model
def test_fixture_marked(embedded_llm):
    pass


def test_llama_server_unmarked():
    subprocess.run([sys.executable, "-c", "pass", "-m", "llama_cpp.server"], check=True)


@pytest.mark.model
def test_llama_server_marked():
    subprocess.run([sys.executable, "-c", "pass", "-m", "llama_cpp.server"], check=True)


def _knock(port):
    s = socket.socket()
    s.settimeout(0.5)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        pass
    finally:
        s.close()


def test_redis_unmarked():
    _knock(6379)


@pytest.mark.services
def test_redis_marked():
    _knock(6379)


def test_postgres_from_a_thread_unmarked():
    t = threading.Thread(target=_knock, args=(5432,))
    t.start()
    t.join()


def test_database_url_for_a_child_unmarked():
    subprocess.run([sys.executable, "-c", "pass"], check=True,
                   env={"DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/test"})


def test_embeddings_unmarked():
    sys.audit("rtcbot.embeddings", "all-MiniLM-L6-v2")


def test_playwright_driver_unmarked():
    subprocess.run([sys.executable, "-c", "pass", "/venv/site-packages/playwright/driver/package/cli.js"],
                   check=True)


@pytest.fixture
def redis_then_skip():
    _knock(6379)
    pytest.skip("Redis is not here")


def test_skipped_in_setup_still_needs_its_marker(redis_then_skip):
    pass


def test_failing_keeps_its_own_failure():
    _knock(6379)
    assert 1 == 2, "the test's own failure"
'''

EXPECTED_FAILED = {
    "test_fixture_unmarked": "`@pytest.mark.model`: uses the fixture `embedded_llm`",
    "test_llama_server_unmarked": "`@pytest.mark.model`: started llama.cpp's server",
    "test_redis_unmarked": "`@pytest.mark.services`: connected to Redis on 127.0.0.1:6379",
    "test_postgres_from_a_thread_unmarked": "`@pytest.mark.services`: connected to PostgreSQL",
    "test_database_url_for_a_child_unmarked": "`@pytest.mark.services`: started a process with DATABASE_URL set",
    "test_embeddings_unmarked": "`@pytest.mark.model`: embedded sentences with all-MiniLM-L6-v2",
    "test_playwright_driver_unmarked": "`@pytest.mark.browser`: started a browser or Playwright's driver",
    "test_skipped_in_setup_still_needs_its_marker": "`@pytest.mark.services`: connected to Redis",
    "test_failing_keeps_its_own_failure": "`@pytest.mark.services`",
}


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester whose runs import this repository's `tests.markers`."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("RTCBOT_TEST_MARKERS", raising=False)  # these runs enforce
    return pytester


def test_an_unmarked_test_fails_and_a_marked_one_passes(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = --strict-markers\nmarkers =\n"
                     + "".join(f"    {name}: {text}\n" for name, text in markers.MARKERS.items()))
    pytester.makeconftest('pytest_plugins = ["tests.markers"]\n')
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")
    out = result.stdout.str()
    passed = set(re.findall(r"^PASSED test_inner\.py::(\w+)", out, re.M))
    failed = set(re.findall(r"^(?:FAILED|ERROR) test_inner\.py::(\w+)", out, re.M))
    assert passed == {"test_plain", "test_fixture_marked", "test_llama_server_marked", "test_redis_marked"}, out
    assert failed == set(EXPECTED_FAILED), out
    for name, says in EXPECTED_FAILED.items():
        assert re.search(rf"test_inner\.py::{name} breaks the marker rules.*\n(  .*\n)*?  needs {re.escape(says)}",
                         out), (name, out)
    assert "the test's own failure" in out  # the marker's message comes beside it, not instead


def test_an_unmarked_fixture_test_fails_before_its_fixture_runs(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["tests.markers"]\n')
    pytester.makepyfile(test_inner='''
import pytest

@pytest.fixture
def embedded_llm():
    raise AssertionError("the expensive fixture ran")

def test_it(embedded_llm):
    pass
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "needs `@pytest.mark.model`" in out and "the expensive fixture ran" not in out


@pytest.mark.slow  # two pytest-xdist workers
def test_under_xdist_the_model_tests_run_on_one_worker(pytester: pytest.Pytester) -> None:
    """The `model` group holds under `--dist loadgroup` (pytest 9.2 reads structured ids, where
    pytest-xdist 3.8 writes the group into the legacy one: each test went to any worker; hence
    pyproject's pytest below 9.2)."""
    pytester.makeini("[pytest]\nmarkers =\n    model: a model\n")
    pytester.makeconftest('pytest_plugins = ["tests.markers"]\n')
    pairs = (f"\n@pytest.mark.model\ndef test_model_{i}():\n    pass\n\ndef test_plain_{i}():\n    pass\n"
             for i in range(6))
    pytester.makepyfile(test_inner="import pytest\n" + "".join(pairs))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-v")
    result.assert_outcomes(passed=12)
    ran = re.findall(r"^\[(gw\d)\] .*PASSED test_inner\.py::test_model_\d+(@model)?", result.stdout.str(), re.M)
    assert len(ran) == 6 and len({worker for worker, _ in ran}) == 1 and all(group for _, group in ran), ran


def test_a_chaos_test_outside_tests_reliability_fails(pytester: pytest.Pytester) -> None:
    """`make test` runs `-m chaos` from tests/reliability in a process of its own: one elsewhere would never run."""
    pytester.makeini("[pytest]\nmarkers =\n    chaos: fault injection\n")
    pytester.makeconftest('pytest_plugins = ["tests.markers"]\n')
    pytester.makepyfile(test_inner="import pytest\n\n@pytest.mark.chaos\ndef test_it():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "is marked chaos outside tests/reliability/" in result.stdout.str()


@pytest.mark.parametrize(("argv", "env", "need"), [
    (["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/lib/postgresql/15/bin/initdb",
      "-D", "x"], None, "services"),
    (["/usr/lib/postgresql/15/bin/pg_ctl", "-D", "x", "start"], None, "services"),
    (["redis-server", "--port", "1234"], None, "services"),
    (["/usr/bin/chromium", "--headless"], None, "browser"),
    ([sys.executable, "-m", "analyzers.tools.lifeline", "3", "-m", "llama_cpp.server", "--model", "m.gguf"], None,
     "model"),
    ([sys.executable, "-m", "bot", "worker"], {"REDIS_URL": "redis://127.0.0.1:6379/15"}, "services"),
    ("redis-server --port 1", None, None),  # a shell string is one word: no program named by it
    (["semgrep", "scan"], None, None),
    (["python3", "-c", "print('postgres')"], None, None),
    (["rtcbot", "worker"], {"DATABASE_URL": "", "PATH": "/usr/bin"}, None),
    (["rtcbot", "worker"], {"REDIS_URL": "redis://:hunter2@127.0.0.1:1/0"}, None),  # nothing listens there
    (["rtcbot", "worker"], {"DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1/test"}, "services"),
])
def test_what_a_command_line_says_a_test_needs(argv: object, env: dict[str, str] | None, need: str | None) -> None:
    assert list(markers.needs_of_command(argv, env)) == ([need] if need else [])


def test_pyproject_the_plugin_and_make_check_name_the_same_markers() -> None:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in ini["markers"]}
    assert registered == markers.MARKERS
    assert "--strict-markers" in ini["addopts"]
    assert f'-m "{markers.CHECK_LANE}"' in (ROOT / "Makefile").read_text()
