"""How `rtcbot serve` stops (SIGTERM to gunicorn's master, its unit's KillSignal): at once, once
what it holds is answered.

A stop took 9-17 s on the shared test host (RtcbotDown's walk, tests/deploy/test_runbooks.py),
and /metrics failed from its start. Three causes, in order of size:

- each process (the master, then each web worker) ended with the interpreter's own teardown of a
  heap of some 1,700 modules: 1-5 s of CPU each on a loaded host, the master's after its
  workers'. Nothing of it is needed: what serve answered is in the store before its answer, its
  threads are daemons, its metric files are memory-mapped. `exit_at_once` runs the atexit
  functions (the logs flushed) and exits without it;
- a connection kept alive between requests (Prometheus' scrape, a proxy's upstream) held its
  gevent worker until gunicorn's `keepalive` ran out (10 s, bot/app/commands/serve.py): the
  worker waits until no connection is open. The workers close those at a stop
  (bot/app/serve_worker.py); at a reload (SIGHUP) the old workers keep gunicorn's way, so that a
  client sending on a kept-alive connection is answered (with `Connection: close`) rather than
  cut, while the new workers take the new connections;
- a worker notices the signal within a second (gunicorn's loop); that stays.

`STOPPING` tells the workers which of the two a SIGTERM is: the master sets it before it signals
them at a stop, never at a reload. It is made when serve imports this module, in the master
before it forks, so the workers share its byte.
"""

from __future__ import annotations

import atexit
import mmap
import os
import sys
from typing import Any, NoReturn


class StopFlag:
    """One byte shared by gunicorn's master and its workers (an anonymous shared mapping, made in
    the master before it forks): set when the master stops."""

    def __init__(self) -> None:
        self._byte = mmap.mmap(-1, 1)

    def set(self) -> None:
        self._byte[0] = 1

    def __bool__(self) -> bool:
        return self._byte[0] == 1


STOPPING = StopFlag()

def exit_at_once(status: int) -> NoReturn:
    """Exit with `status` after the atexit functions (logging's flush among them), without the
    interpreter's teardown of every module and object."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader gone
            pass
    os._exit(status)


def status_of(e: SystemExit) -> int:
    """The process' exit status for `e`, as the interpreter reads it (a message: 1)."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def worker_exited(_arbiter: Any, worker: Any) -> None:
    """gunicorn's worker_exit hook (in the worker, after its last line): a worker whose loop ended
    (a stop or a reload, everything it held answered) exits at once."""
    if getattr(worker, "stopped", False):
        exit_at_once(0)


def stop_if_stopping(worker: Any) -> None:
    """gunicorn's post_worker_init hook (one argument, as gunicorn checks): `end_if_flagged` on
    the master's `STOPPING`."""
    end_if_flagged(worker, STOPPING)


def end_if_flagged(worker: Any, flag: StopFlag) -> None:
    """In the worker, once its own signal handlers are installed (post_worker_init): a
    worker forked just before a stop can get the master's SIGTERM before it has installed them,
    when the handler it inherited from the master takes the signal and does nothing here; it then
    served on until the master killed it at its graceful timeout, 30 s later (seen once, on a
    loaded machine: the master logged "Handling signal: term" before the worker's "Booting
    worker"). The master sets `flag` before it signals, so a stop flagged by now ends the worker,
    and a later one reaches its handlers."""
    if flag:
        worker.alive = False


def stopping_arbiter() -> type:
    """gunicorn's Arbiter, which sets `STOPPING` before it signals the workers to stop, and exits
    at once once they are gone and its on_exit hook ran."""
    from gunicorn.arbiter import Arbiter

    class StoppingArbiter(Arbiter):  # type: ignore[misc]
        def stop(self, graceful: bool = True) -> None:
            STOPPING.set()
            super().stop(graceful)

        def halt(self, reason: str | None = None, exit_status: int = 0) -> NoReturn:
            try:
                super().halt(reason, exit_status)
            except SystemExit as e:
                exit_at_once(status_of(e))
            exit_at_once(exit_status)

    return StoppingArbiter
