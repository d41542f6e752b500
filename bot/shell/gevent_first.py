"""`rtcbot serve` under gevent (its default worker class): gevent patches this process first,
before rtcbot imports anything (`bot/entry.py` calls `patch_for_serve` ahead of its imports).

gunicorn's gevent worker patches the standard library in each worker after the fork. When the
master had not been patched, that patch walked every object of the process to fix up the locks
it found (gevent's `_patch_existing_locks`), and `isinstance` on each of openai's lazy module
proxies made an OpenAI client and failed, 84 times: 9 to 18 s per worker on a loaded host,
during which the worker answered nothing. At a reload (SIGHUP) gunicorn retires the old workers
as soon as it has forked the new ones, so serve answered no delivery for that long (48 s
measured in #48). Patched here, before any thread or lock exists, the workers' own patch finds
the work done and returns at once (0.2 ms). gevent's own advice: patch as early as possible.

The worker class is read from the command line as click will read it: `serve`, the first word
that is no option of the group (`-v`, `--verbose`), then `--worker-class NAME` or
`--worker-class=NAME` (default gevent). gthread workers must never be patched.

psycopg picks its wait function when it is imported: after gevent's patch it takes `wait_poll`,
which waits for each of a delivery's 8 database round trips through gevent's hub (a poll object
and a watcher each time); before it, `wait_c`, libpq's own blocking wait in C. On the web path
every query is a few milliseconds on a local database, and the hub's wait cost 16-20 % more CPU
per delivery on PostgreSQL (webhook_load, redis+postgres: 5.3-5.5 ms before the patch moved
here, 6.0-6.6 after, 5.5 with `wait_c` again), which at 200 deliveries a second on 2 cores is
the difference between answering and queueing. So serve keeps `wait_c`, as it had before this
module existed, through psycopg's own setting (PSYCOPG_WAIT_FUNC); an operator's value wins.
The price, also as before: a query that hangs holds its worker's other requests until the
database's timeouts end it."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence

GROUP_FLAGS = ("-v", "-vv", "-vvv", "--verbose")
PSYCOPG_WAIT = "PSYCOPG_WAIT_FUNC"  # psycopg's own choice of its wait function, read at its import


def serve_uses_gevent(args: Sequence[str]) -> bool:
    """Whether `rtcbot ARGS` is `serve` with the gevent worker class."""
    words = list(args)
    while words and words[0] in GROUP_FLAGS:
        words.pop(0)
    if not words or words[0] != "serve":
        return False
    worker_class = "gevent"
    for i, word in enumerate(words):
        if word == "--worker-class" and i + 1 < len(words):
            worker_class = words[i + 1]
        elif word.startswith("--worker-class="):
            worker_class = word.split("=", 1)[1]
    return worker_class == "gevent"


def patch_for_serve(args: Sequence[str] | None = None) -> bool:
    """gevent's patch of this process when it is `rtcbot serve` on gevent; whether it patched."""
    if not serve_uses_gevent(sys.argv[1:] if args is None else args):
        return False
    from gevent import monkey

    if importlib.util.find_spec("psycopg_binary") or importlib.util.find_spec("psycopg_c"):
        os.environ.setdefault(PSYCOPG_WAIT, "wait_c")  # before psycopg is imported: see above
    monkey.patch_all()
    return True
