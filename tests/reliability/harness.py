"""One chaos scenario's world: the suite's own PostgreSQL and Redis
(tests/reliability/services.py), or the embedded default (a SQLite database and a SQLite queue
in the world's data folder), the fake GitHub and the scripted LLM, the webhook service (the real
Flask app over real HTTP, in this process) and `rtcbot worker` subprocesses; pull requests
opened as GitHub would, faults injected, and a tally of what came out, read from the fake
GitHub's check runs.

A pull request's outcome, for its one check run (`rtcbot / EditingRTC` on its head SHA):

- **completed**: completed, with one annotation per hunk, or with a clear error (the title
  says the analysis could not run or finish) where a fault was permanent;
- **duplicate**: more than one check run for the head, a check run completed more than once,
  or more annotations than hunks (work published twice);
- **lost**: no completed check run when the scenario's time is up, or one completed without
  its annotations and without an error.

Deliveries that the webhook service does not accept (a 5xx while the database is away) are
redelivered, as GitHub's "Redeliver" does, and counted.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bot.app.runtime import Runtime
from bot.app.settings import ServiceSettings
from bot.app.web import create_app
from tests.bot import app_support
from tests.bot.app_support import deliver, make_settings, serve
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import Responder, RoundTrips, ScriptedLLM
from tests.reliability.services import Postgres, Redis
from tests.support import ROOT

CHECK = "rtcbot / EditingRTC"
READY = b"rtcbot: worker on the"  # what `rtcbot worker` prints once it consumes
NOTE = "note: "  # a key of a scenario's faults that is a consequence, not counted as a fault
RTCBOT = [sys.executable, "-m", "bot"]
# the workers' recovery clocks, short so that a scenario recovers in seconds
TIMINGS = {
    "RTCBOT_HEARTBEAT_S": "0.5",
    "RTCBOT_STALE_AFTER_S": "4",
    "RTCBOT_SWEEP_INTERVAL_S": "0.5",
    "RTCBOT_REQUEUE_AFTER_S": "5",
    "RTCBOT_SECONDARY_WAIT_S": "1",
    "RTCBOT_RETRY_BACKOFF_S": "0.2",
    "RTCBOT_WRITE_INTERVAL_S": "0",
}


@dataclass
class Tally:
    """What one scenario sent, injected and got back."""

    scenario: str
    prs: int = 0
    deliveries: int = 0  # webhooks sent, redeliveries included
    faults: int = 0
    fault_kinds: str = ""
    completed: int = 0  # check runs completed (with their annotations, or with a clear error)
    errors: int = 0  # of those, completed with an error
    duplicates: int = 0
    lost: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)  # what went wrong, per PR

    def row(self) -> list[str]:
        return [self.scenario, str(self.prs), str(self.deliveries), f"{self.faults} ({self.fault_kinds})",
                str(self.completed), str(self.errors), str(self.duplicates), str(self.lost), f"{self.seconds:.0f}"]


HEADER = ["scenario", "PRs", "deliveries sent", "faults injected", "check runs completed",
          "of them with an error", "duplicates", "lost", "seconds"]


def worker_env(settings: ServiceSettings, threads: int = 2, **extra: str) -> dict[str, str]:
    return app_support.worker_env(settings, RTCBOT_WORKERS=str(threads), **TIMINGS, **extra)


def pr_diff(number: int, hunks: int) -> str:
    """A diff of `hunks` one-line edits, none seen in another PR (the LLM cache would answer those)."""
    lines = [f"--- a/src/m{number}.py", f"+++ b/src/m{number}.py"]
    for i in range(hunks):
        start = 1 + i * 10
        lines += [f"@@ -{start},3 +{start},3 @@", f" def f{i}(x):", f"-    return x + {i} - {number}",
                  f"+    return x * {i} + {number}", "     # end"]
    return "\n".join(lines) + "\n"


class World:
    """Everything one scenario runs on; a context manager that stops it all."""

    def __init__(self, name: str, pg: Postgres | None, redis: Redis | None, tmp: Path, *, llm_delay_s: float = 0.2,
                 hunks: int = 2, threads: int = 2, llm_concurrency: int = 8,
                 responder: Responder | None = None) -> None:
        """On `pg` and `redis`, or with both None on the embedded default: the SQLite database
        and queue in `tmp`/data, shared by the webhook service and every worker."""
        if (pg is None) != (redis is None):
            raise ValueError("a World runs on PostgreSQL and Redis, or on neither (SQLite)")
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per delivery otherwise
        self.name, self._pg, self._redis, self.tmp, self.hunks = name, pg, redis, tmp, hunks
        self.backend = "sqlite" if pg is None else "redis"
        self.gh = FakeGitHub().start()
        # by default a model that can edit code: each one-line hunk re-created, so each is annotated
        self.llm = ScriptedLLM(responder or RoundTrips(), delay_s=llm_delay_s).start()
        db: str | None = None
        if pg is not None and redis is not None:
            redis.flush()
            db = pg.create_database(f"chaos_{name}_{uuid.uuid4().hex[:6]}")
        self.settings = make_settings(tmp, self.gh, self.llm, database_url=db,
                                      redis_url=None if redis is None else redis.url)
        self.env = worker_env(self.settings, threads, RTCBOT_LLM_CONCURRENCY=str(llm_concurrency))
        self.runtime = Runtime(self.settings)
        self._serving = serve(create_app(self.settings, runtime=self.runtime))
        self.url = self._serving.__enter__()
        self.http = httpx.Client(timeout=30)
        self.workers: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []
        self.heads: dict[int, str] = {}  # PR number → head SHA
        self.deliveries = 0
        self.restarts = 0  # workers that exited by themselves and were started again
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._supervise, daemon=True).start()
        self.t0 = time.monotonic()

    @property
    def pg(self) -> Postgres:
        if self._pg is None:
            raise RuntimeError(f"world {self.name} runs on SQLite: it has no PostgreSQL")
        return self._pg

    @property
    def redis(self) -> Redis:
        if self._redis is None:
            raise RuntimeError(f"world {self.name} runs on SQLite: it has no Redis")
        return self._redis

    # -- processes ----------------------------------------------------------------------------
    def start_worker(self, wait: bool = True) -> subprocess.Popen[bytes]:
        """A new `rtcbot worker`; with `wait`, once it says it is consuming (or has exited)."""
        path = self.tmp / f"worker-{len(self.logs)}.log"
        with open(path, "wb") as log:
            p = subprocess.Popen([*RTCBOT, "worker"], cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        with self._lock:
            self.workers.append(p)
            self.logs.append(path)
        deadline = time.monotonic() + 60
        while wait and p.poll() is None and time.monotonic() < deadline and READY not in path.read_bytes():
            time.sleep(0.05)
        return p

    def _supervise(self) -> None:
        """Start again, a second later, a worker that exited by itself (a worker that cannot
        reach the database at start exits: systemd's Restart=always or Kubernetes does this)."""
        while not self._stop.wait(0.2):
            with self._lock:
                exited = [p for p in self.workers if p.poll() is not None]
            for p in exited:
                with self._lock:
                    self.workers.remove(p)
                self.restarts += 1
                time.sleep(1.0)
                if not self._stop.is_set():
                    self.start_worker(wait=False)

    def kill_worker(self, p: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self.workers.remove(p)
        p.send_signal(signal.SIGKILL)
        p.wait(10)

    def live_workers(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.workers if p.poll() is None]

    # -- pull requests ------------------------------------------------------------------------
    def open_pr(self, number: int, *, deadline_s: float = 60.0, installation: int | None = None) -> None:
        """Open PR `number` (in `installation`, one the fake GitHub has `install`ed; by default
        its first) and deliver its webhook until the service accepts it (202)."""
        pr = self.gh.add_pr(number, diff_text=pr_diff(number, self.hunks), installation=installation)
        self.heads[number] = pr.head_sha
        payload, delivery = self.gh.pr_event("opened", number), f"chaos-{self.name}-{number}"
        deadline = time.monotonic() + deadline_s
        while True:
            self.deliveries += 1
            try:
                if deliver(self.url, "pull_request", payload, delivery=delivery, client=self.http).status_code == 202:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"PR {number}'s delivery was never accepted")
            time.sleep(0.5)

    def open_prs(self, numbers: range, gap_s: float = 0.0) -> None:
        for n in numbers:
            self.open_pr(n)
            time.sleep(gap_s)

    def in_background(self, fn: Callable[[], Any]) -> threading.Thread:
        t = threading.Thread(target=fn, daemon=True)
        t.start()
        return t

    def _done(self, sha: str) -> bool:
        return any(r["status"] == "completed" for r in self.gh.runs(CHECK, sha))

    def all_done(self) -> bool:
        return all(self._done(sha) for sha in self.heads.values())

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.all_done():
                time.sleep(1.0)  # a late duplicate would land now
                return True
            time.sleep(0.2)
        return False

    # -- the outcome --------------------------------------------------------------------------
    def tally(self, faults: dict[str, int]) -> Tally:
        if self.restarts:
            faults = {**faults, NOTE + "workers that exited and were started again": self.restarts}
        t = Tally(self.name, prs=len(self.heads), deliveries=self.deliveries,
                  faults=sum(v for k, v in faults.items() if not k.startswith(NOTE)),
                  fault_kinds=", ".join(f"{k.removeprefix(NOTE)} {v}" for k, v in faults.items() if v) or "none",
                  seconds=time.monotonic() - self.t0)
        for number, sha in sorted(self.heads.items()):
            runs = self.gh.runs(CHECK, sha)
            done = [r for r in runs if r["status"] == "completed"]
            completions = sum(1 for r in runs for u in r["updates"] if u.get("conclusion"))
            anns = sum(len(r["annotations"]) for r in runs)
            title = str((done[0]["output"] or {}).get("title", "")) if done else ""
            errored = "could not" in title
            if len(runs) > 1 or completions > 1 or anns > self.hunks:
                t.duplicates += 1
                t.problems.append(f"PR {number}: {len(runs)} check runs, {completions} completions, "
                                  f"{anns} annotations for {self.hunks} hunks")
            if not done:
                t.lost += 1
                t.problems.append(f"PR {number}: no completed check run ({[r['status'] for r in runs]})")
            elif errored or anns >= self.hunks:
                t.completed += 1
                t.errors += errored
                if errored:
                    t.problems.append(f"PR {number}: completed with an error: {title}: "
                                      f"{str((done[0]['output'] or {}).get('summary', '')).splitlines()[0][:300]}")
            else:
                t.lost += 1
                t.problems.append(f"PR {number}: completed with {anns} of {self.hunks} annotations, no error")
        return t

    def log_tail(self, chars: int = 4000) -> str:
        out = []
        for path in self.logs:
            text = path.read_text(errors="replace") if path.exists() else ""
            out.append(f"--- {path.name}\n{text[-chars:]}")
        return "\n".join(out)

    def close(self) -> None:
        self._stop.set()
        for p in self.workers:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.workers:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.http.close()
        self._serving.__exit__(None, None, None)
        try:
            self.runtime.store.close()
        except Exception:
            pass
        self.gh.stop()
        self.llm.stop()

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
