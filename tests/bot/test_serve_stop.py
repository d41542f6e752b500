"""bot/app/serve_stop.py's pieces: the flag the master sets for its forked workers, and the exit
that skips the interpreter's teardown but not the atexit functions. The stop itself, end to end:
tests/bot/commands/test_serve_stop.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from bot.app.serve_stop import StopFlag, end_if_flagged, status_of, stop_if_stopping
from tests.support import ROOT


def test_a_flag_set_by_the_master_after_the_fork_is_seen_by_its_worker() -> None:
    flag = StopFlag()
    pid = os.fork()
    if pid == 0:  # the worker: waits for the master's flag
        deadline = time.monotonic() + 10
        while not flag and time.monotonic() < deadline:
            time.sleep(0.01)
        os._exit(0 if flag else 1)
    assert not flag
    flag.set()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and flag


def test_a_worker_that_boots_after_the_stop_was_flagged_ends_its_loop() -> None:
    """The post_worker_init hook: a worker whose SIGTERM came before its handlers (the master's
    own took it) sees the master's flag and ends instead of serving until it is killed."""
    flag, worker = StopFlag(), SimpleNamespace(alive=True)
    end_if_flagged(worker, flag)
    assert worker.alive  # no stop: it serves
    flag.set()
    end_if_flagged(worker, flag)
    assert worker.alive is False


def test_serve_gives_gunicorn_the_hook() -> None:
    from bot.app.commands.serve import _gunicorn_options

    assert _gunicorn_options("127.0.0.1", 8000, 2, "gevent", 100, 1, ROOT)["post_worker_init"] is stop_if_stopping


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (3, 3), ("a message", 1)])
def test_the_exit_status_of_a_system_exit(code: int | str | None, status: int) -> None:
    assert status_of(SystemExit(code)) == status


def test_exiting_at_once_runs_the_atexit_functions_and_keeps_the_status() -> None:
    script = ("import atexit, logging, sys\n"
              "logging.basicConfig(stream=sys.stdout, format='%(message)s')\n"
              "atexit.register(print, 'atexit ran')\n"
              "from bot.app.serve_stop import exit_at_once\n"
              "logging.getLogger().warning('a last line')\n"
              "exit_at_once(7)\n")
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 7, r.stderr
    assert r.stdout.splitlines() == ["a last line", "atexit ran"], r.stdout
