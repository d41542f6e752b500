"""Each alert's runbook (docs/deploy.md, "Alerts") walked end to end on a real service: `rtcbot
serve` and `rtcbot worker` as their units run them (tests/deploy/stack.py) on a PostgreSQL and a
Redis of the test's own (tests/reliability/services.py, so that they can be stopped), serve's
data folder on a tmpfs of its own (a user and mount namespace, as tests/bot/commands/
test_full_disk.py does), and a real Prometheus scraping serve's /metrics every second with the
shipped scrape job and the shipped rules, their `for:` and range windows scaled by FACTOR
(tests/deploy/prometheus_server.py). For each alert the real condition is made, Prometheus'
/api/v1/alerts is polled until it fires, the runbook's first step is done as the page says, and
the alert must resolve. The seconds to fire and to resolve are printed (docs/deploy.md lists
them beside each alert).

RtcbotDataDiskFillsWithinADay is walked first, on a series that starts with serve: its range
window, 6 h shipped, is 6 min here, and a walk later in the test would have the earlier walks'
minutes in it, where a disk that only starts to fill takes longer to tip the line (and writes more
than the 16 MiB above the 1 GiB that RtcbotDataDiskLow leaves). A process in serve's namespace
appends FILL_KIB_S a second to a file on the data disk, 8 times the pace that fills its free
space in 24 h; with the `for:` (1 h shipped, 60 s here) it fired 64-69 s later (6.6-7.0 MiB
written), and resolved 28-36 s after the writer was stopped and its file moved off the disk (the
regression line must come back over the window's points): about 100-110 s added to the walk."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.bot.app_support import METRICS_TOKEN, deliver
from tests.bot.commands.test_full_disk import unshare_command
from tests.deploy.prometheus_server import Prometheus
from tests.deploy.stack import CHECK, RTCBOT, Stack, edits_diff, free_port
from tests.reliability.services import Postgres, Redis, ServiceUnavailable
from tests.support import require

pytestmark = [pytest.mark.slow, pytest.mark.services]

FACTOR = 1 / 60  # for: 2m → 2s, 5m → 5s, 1m → 1s; [30m] → [30s], [6h] → [6m]
DISK_MB = 1040  # the data disk: just over the rule's 1 GiB free, until a backup lands on it
BACKUP_MB = 24
FILL_KIB_S = 100  # a file growing on the data disk: 8x the pace that fills its 1 GiB free in a day
FIRE_S = 60.0  # the most an alert may take to fire or resolve here


def seconds_since(t0: float) -> float:
    return time.monotonic() - t0


def serve_pid(pid: int) -> int:
    """The process that became `rtcbot serve`: `pid` itself (unshare execs), or under `sudo`
    (and its monitor process, with use_pty) the first descendant running this Python."""
    queue = [pid]
    while queue:
        p = queue.pop(0)
        try:
            argv0 = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0].decode()
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        if argv0 == RTCBOT[0]:
            return p
        queue += [int(c) for c in children]
    raise RuntimeError(f"no rtcbot serve under process {pid}")


class Walk:
    """The stack, its own PostgreSQL and Redis, Prometheus, and the figures measured."""

    def __init__(self, tmp: Path, unshare: list[str], prometheus: str) -> None:
        self.tmp = tmp
        self.unshare = unshare
        self.data = tmp / "serve-data"  # serve's RTCBOT_DATA_DIR, a tmpfs in serve's namespace
        self.data.mkdir(parents=True)
        self.pg = Postgres()
        self.pg.start()
        self.redis = Redis()
        self.redis.start()
        self.database_url = self.pg.create_database("rtcbot")
        self.stack = Stack(tmp / "stack", overrides={
            "DATABASE_URL": self.database_url, "REDIS_URL": self.redis.url, "RTCBOT_METRICS_TOKEN": METRICS_TOKEN,
            "RTCBOT_DATA_DIR": str(self.data), "RTCBOT_LLM_DAILY_REQUESTS": "1"})
        self.port = free_port()
        self.figures: dict[str, tuple[float, float]] = {}
        self.filler: subprocess.Popen[bytes] | None = None
        self.stop_file = tmp / "stop-filling"
        self.prometheus = Prometheus(tmp / "prometheus", f"127.0.0.1:{self.port}", METRICS_TOKEN, FACTOR,
                                     port=free_port()).start(prometheus)

    # -- serve in its namespace, with its data folder on a tmpfs -----------------------------
    def serve_prefix(self) -> tuple[str, ...]:
        mount = f'mount -t tmpfs -o size={DISK_MB}m,mode=0700 tmpfs "$1" && shift && exec "$@"'
        return (*self.unshare, "sh", "-c", mount, "sh", str(self.data))

    def start_serve(self) -> None:
        self.stack.start_serve(port=self.port, prefix=self.serve_prefix())

    def in_serve_namespace(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """`argv` run in serve's user and mount namespace (where its data disk is mounted)."""
        return subprocess.run(self.nsenter(*argv), capture_output=True, text=True, timeout=60)

    def nsenter(self, *argv: str) -> list[str]:
        pid = self.stack.procs["serve"].pid
        sudo = self.unshare[:3] if self.unshare[0] == "sudo" else []
        if sudo:
            pid = serve_pid(pid)
        return [*sudo, "nsenter", f"--target={pid}", "--user", "--mount", "--preserve-credentials", *argv]

    def start_filling(self, name: str, kib_s: int) -> subprocess.Popen[bytes]:
        """A process in serve's namespace appending `kib_s` KiB a second to `name` on the data
        disk (a job that writes its output there) until `stop_filling`."""
        self.stop_file.unlink(missing_ok=True)
        loop = ('mkdir -p "$(dirname "$0/$1")" && while [ ! -e "$2" ]; do '
                'head -c "$3" /dev/zero >> "$0/$1" && sleep 1; done')
        self.filler = subprocess.Popen(self.nsenter("sh", "-c", loop, str(self.data), name, str(self.stop_file),
                                                    str(kib_s * 1024)))
        return self.filler

    def stop_filling(self) -> None:
        self.stop_file.touch()
        if self.filler is not None:
            self.filler.wait(30)
            self.filler = None

    # -- what the runbooks read --------------------------------------------------------------
    def healthz(self) -> dict[str, object]:
        answer: dict[str, object] = httpx.get(f"{self.stack.url}/healthz", timeout=10).json()
        return answer

    def metric(self, expr: str) -> float | None:
        result = self.prometheus.query(expr)
        return float(result[0]["value"][1]) if result else None

    def wait_metric(self, expr: str, value: float, timeout: float = FIRE_S) -> None:
        deadline = time.monotonic() + timeout
        while self.metric(expr) != value:
            assert time.monotonic() < deadline, f"{expr} is {self.metric(expr)}, not {value}"
            time.sleep(0.25)

    def fired(self, name: str, since: float, timeout: float = FIRE_S) -> float:
        return self.prometheus.wait(name, firing=True, timeout=timeout, since=since)

    def resolved(self, name: str, since: float, fired_s: float, timeout: float = FIRE_S) -> None:
        resolved_s = self.prometheus.wait(name, firing=False, timeout=timeout, since=since)
        self.figures[name] = (fired_s, resolved_s)
        print(f"{name}: fired {fired_s:.1f} s after the condition, resolved {resolved_s:.1f} s after the step")

    def quiet(self, timeout: float = FIRE_S) -> None:
        """Wait until no alert is active (pending or firing), before the next condition is made."""
        deadline = time.monotonic() + timeout
        while self.prometheus.alerts():
            assert time.monotonic() < deadline, f"alerts still active: {self.prometheus.alerts()}"
            time.sleep(0.25)

    def rtcbot(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**self.stack.env, "COLUMNS": "160"}  # rich's tables, not cut to 80 columns
        return subprocess.run([*RTCBOT, *args], env=env, capture_output=True, text=True, timeout=120)

    def close(self) -> None:
        self.stop_filling()
        self.prometheus.stop()
        self.stack.close()
        self.redis.close()
        self.pg.close()


@pytest.fixture
def walk(tmp_path: Path) -> Iterator[Walk]:
    exe = shutil.which("prometheus")
    require(exe and shutil.which("promtool"),
            "prometheus is not installed (Debian: apt-get install prometheus; `make setup-dev` does)")
    require(shutil.which("nsenter"), "nsenter is missing (util-linux)")
    unshare = unshare_command()
    require(unshare, "cannot mount a tmpfs in a user and mount namespace here (unshare, or sudo -n unshare)")
    assert exe is not None and unshare is not None
    try:
        w = Walk(tmp_path, unshare, exe)
    except ServiceUnavailable as e:
        require(False, str(e))
        raise
    try:
        yield w
    finally:
        w.close()


def test_each_alerts_runbook_walked_on_a_real_service(walk: Walk) -> None:
    w, stack, prom = walk, walk.stack, walk.prometheus
    w.start_serve()
    stack.start_worker()
    stack.wait_healthy()
    w.wait_metric('up{job="rtcbot"}', 1)
    w.wait_metric("rtcbot_workers_live", 1)
    time.sleep(3)  # a few evaluations of the healthy service: nothing fires
    assert prom.alerts() == {}, prom.alerts()
    print(f"healthy: up {w.metric('up')}, workers {w.metric('rtcbot_workers_live')}")

    # RtcbotDataDiskFillsWithinADay: a job writing its output onto the data disk at a steady
    # 100 KiB a second (its 1 GiB free would last 3 hours); the runbook (RtcbotDataDiskLow's):
    # `df -h`, `du -sh` twice to see what grows, the job pointed at another disk and what it wrote
    # moved off this one
    t0 = time.monotonic()
    w.start_filling("backups/rtcbot-nightly.dump", FILL_KIB_S)
    fills_fired = w.fired("RtcbotDataDiskFillsWithinADay", t0, timeout=4 * FIRE_S)
    df = w.in_serve_namespace("df", "-h", str(w.data))
    sizes = []
    for _ in range(2):
        du = w.in_serve_namespace("du", "-s", "--block-size=1K", str(w.data / "backups"))
        sizes.append(int(du.stdout.split()[0]))
        time.sleep(2)
    print(df.stdout, f"du -s backups: {sizes[0]} KiB, then {sizes[1]} KiB 2 s later")
    assert "tmpfs" in df.stdout and sizes[1] > sizes[0], (df.stdout, sizes)
    off_disk = w.tmp / "backup-off-disk"  # another disk: "move old backups off it"
    off_disk.mkdir()
    t0 = time.monotonic()
    w.stop_filling()  # the job pointed at the other disk
    moved = w.in_serve_namespace("mv", str(w.data / "backups" / "rtcbot-nightly.dump"), str(off_disk))
    assert moved.returncode == 0, moved.stderr
    w.resolved("RtcbotDataDiskFillsWithinADay", t0, fills_fired, timeout=4 * FIRE_S)
    print(f"the job wrote {(off_disk / 'rtcbot-nightly.dump').stat().st_size / 2**20:.1f} MiB before it was stopped")
    w.quiet()

    # RtcbotLLMBudgetSpent: a daily budget of 1 request, spent by one pull request (its other
    # analyses are cut off: their check runs stay as they were)
    t0 = time.monotonic()
    stack.open_pr(1, edits_diff(1, 2))
    budget_fired = w.fired("RtcbotLLMBudgetSpent", t0)
    stats = w.rtcbot("stats")  # the runbook: who spends it
    assert stats.returncode == 0 and "octo-org/widgets" in stats.stdout, stats.stdout + stats.stderr

    # RtcbotDown: serve stopped; a delivery meanwhile fails (GitHub shows it red)
    t0 = time.monotonic()
    stack.stop("serve")  # SIGTERM, as the unit's KillSignal: gunicorn's graceful stop
    print(f"serve stopped {seconds_since(t0):.1f} s after SIGTERM")
    down_fired = w.fired("RtcbotDown", t0)
    delivery = str(uuid.uuid4())
    redelivered = stack.gh.add_pr(2, diff_text=edits_diff(2, 1)).head_sha
    with pytest.raises(httpx.TransportError):
        deliver(stack.url, "pull_request", stack.gh.pr_event("opened", 2), delivery=delivery)
    # the runbook: its status and last lines ("systemctl status rtcbot-serve"), then start it;
    # the budget raised in the env file meanwhile, which serve (the gauge) and the workers (the
    # cut-off) both read: both restarted
    assert "Shutting down" in stack.log("serve")[-300:]  # its journal's last lines: it was stopped
    stack.env["RTCBOT_LLM_DAILY_REQUESTS"] = "100000"
    t0 = time.monotonic()
    w.start_serve()
    w.resolved("RtcbotDown", t0, down_fired)
    w.wait_metric("rtcbot_llm_budget_spent_installations", 0)
    w.resolved("RtcbotLLMBudgetSpent", t0, budget_fired)
    stack.stop("worker", sig=signal.SIGINT)
    stack.start_worker()
    # "redeliver the failed deliveries": the same delivery, accepted now, analysed on the new budget
    assert deliver(stack.url, "pull_request", stack.gh.pr_event("opened", 2), delivery=delivery).status_code == 202
    stack.wait_status(redelivered, "completed", timeout=120)
    w.quiet()

    # RtcbotNoLiveWorker and RtcbotQueueBacklog: the worker stopped, a job queued, its wait
    # made 11 minutes (created_at moved back: nobody waits 10 minutes in a test)
    t0 = time.monotonic()
    stack.stop("worker", sig=signal.SIGINT)  # as the unit's KillSignal: it finishes its jobs, then exits
    print(f"worker stopped {seconds_since(t0):.1f} s after SIGINT")
    worker_fired = w.fired("RtcbotNoLiveWorker", t0)
    head = stack.open_pr(3, edits_diff(3, 1))
    with psycopg.connect(w.database_url.replace("+psycopg", ""), autocommit=True) as c:
        c.execute("UPDATE jobs SET created_at = created_at - 660 WHERE status = 'queued'")
    t0 = time.monotonic()
    backlog_fired = w.fired("RtcbotQueueBacklog", t0)
    reasons = " ".join(map(str, w.healthz()["reasons"]))  # type: ignore[call-overload]
    assert "no live worker" in reasons and "the oldest queued job has waited" in reasons, reasons
    t0 = time.monotonic()
    stack.start_worker()  # the runbooks: start the worker (a second one would be `rtcbot-worker@2`)
    w.resolved("RtcbotNoLiveWorker", t0, worker_fired)
    w.resolved("RtcbotQueueBacklog", t0, backlog_fired)
    stack.wait_status(head, "completed", timeout=120)
    w.quiet()

    # RtcbotAnalysesFailing: the pull requests' files cannot be read (GitHub answers 404, as it
    # does where the App lacks the permission), three pull requests' analyses fail
    stack.gh.chaos(1.0, statuses=(404,), match="/files")
    t0 = time.monotonic()
    heads = [stack.open_pr(n, edits_diff(n, 1)) for n in (4, 5, 6)]
    failing_fired = w.fired("RtcbotAnalysesFailing", t0)
    # the runbook: the reason in one of those check runs, and in the worker's journal
    stack.wait_status(heads[0], "completed", timeout=60)
    run = stack.gh.runs(None, heads[0])[0]
    assert run["conclusion"] == "neutral", run
    print("check run says:", run.get("output", {}).get("summary", "")[:300])
    assert any("error" in line.lower() for line in stack.log("worker").splitlines())
    stack.gh.chaos(0)  # the permission given back
    t0 = time.monotonic()
    w.resolved("RtcbotAnalysesFailing", t0, failing_fired, timeout=120)
    w.quiet()

    walk_llm_unreachable(w)

    # RtcbotQueueDown: Redis stopped
    t0 = time.monotonic()
    w.redis.stop()
    queue_fired = w.fired("RtcbotQueueDown", t0)
    ping = subprocess.run(["redis-cli", "-u", w.redis.url, "ping"], capture_output=True, text=True, timeout=30)
    assert "PONG" not in ping.stdout, ping.stdout  # the runbook's first step says it does not answer
    t0 = time.monotonic()
    w.redis.start()  # `systemctl start redis-server`
    assert "PONG" in subprocess.run(["redis-cli", "-u", w.redis.url, "ping"], capture_output=True, text=True,
                                    timeout=30).stdout
    w.resolved("RtcbotQueueDown", t0, queue_fired)
    w.quiet()

    # RtcbotDatabaseDown: PostgreSQL stopped
    t0 = time.monotonic()
    w.pg.stop()
    database_fired = w.fired("RtcbotDatabaseDown", t0)
    reasons = " ".join(map(str, w.healthz()["reasons"]))  # type: ignore[call-overload]
    assert "the database does not answer" in reasons, reasons
    ready = subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", str(w.pg.port)], capture_output=True,
                           text=True, timeout=30)
    assert ready.returncode != 0, ready.stdout
    t0 = time.monotonic()
    w.pg.start()  # `systemctl start postgresql`
    w.resolved("RtcbotDatabaseDown", t0, database_fired)
    w.quiet()

    # RtcbotDataDiskLow: a backup written onto the data disk leaves it under 1 GiB free
    t0 = time.monotonic()
    fill = w.in_serve_namespace("sh", "-c", f'mkdir -p "$0/backups" && dd if=/dev/zero '
                                f'of="$0/backups/rtcbot-old.dump" bs=1M count={BACKUP_MB} 2>&1', str(w.data))
    assert fill.returncode == 0, fill.stdout + fill.stderr
    disk_fired = w.fired("RtcbotDataDiskLow", t0)
    df = w.in_serve_namespace("df", "-h", str(w.data))  # the runbook: df -h, du -sh
    du = w.in_serve_namespace("sh", "-c", 'du -sh "$0"/*', str(w.data))
    print(df.stdout, du.stdout)
    assert "tmpfs" in df.stdout and "backups" in du.stdout, df.stdout + du.stdout
    t0 = time.monotonic()  # "move old backups off it"
    moved = w.in_serve_namespace("mv", str(w.data / "backups" / "rtcbot-old.dump"), str(off_disk))
    assert moved.returncode == 0, moved.stderr
    w.resolved("RtcbotDataDiskLow", t0, disk_fired)

    w.quiet()
    assert set(w.figures) == {"RtcbotDown", "RtcbotNoLiveWorker", "RtcbotQueueBacklog", "RtcbotAnalysesFailing",
                              "RtcbotDataDiskLow", "RtcbotDataDiskFillsWithinADay", "RtcbotDatabaseDown",
                              "RtcbotQueueDown", "RtcbotLLMBudgetSpent", "RtcbotLLMUnreachable"}


def walk_llm_unreachable(w: Walk) -> None:
    """RtcbotLLMUnreachable: the LLM endpoint answers 500 to every completion (a gateway whose
    model server is down), a pull request opened every 3 s (each analysis ends once its requests
    have had their retries: its failed attempts are counted then); RtcbotAnalysesFailing stays
    quiet (such an analysis finishes, saying it could not run). The runbook: the failures by
    reason, the worker's journal, one request as the worker sends it; the endpoint fixed."""
    stack, prom = w.stack, w.prometheus
    stack.llm.chaos(1.0, kinds=("500",))
    t0, number, heads = time.monotonic(), 7, []
    while prom.alerts().get("RtcbotLLMUnreachable") != "firing":
        assert seconds_since(t0) < 2 * FIRE_S, f"RtcbotLLMUnreachable did not fire (active: {prom.alerts()})"
        heads.append(stack.open_pr(number, edits_diff(number, 1)))
        number += 1
        time.sleep(3)
    llm_fired = seconds_since(t0)
    assert "RtcbotAnalysesFailing" not in prom.alerts(), prom.alerts()
    failures = {r["metric"]["reason"]: float(r["value"][1]) for r in prom.query("rtcbot_llm_request_failures_total")}
    assert failures["status_5xx"] > 0 and sum(failures.values()) == failures["status_5xx"], failures
    stack.wait_status(heads[0], "completed", timeout=60)
    [run] = stack.gh.runs(CHECK, heads[0])
    print(f"{len(heads)} pull requests opened; failures by reason: {failures}; check run says:",
          str(run.get("output", {}).get("summary", ""))[:300])
    assert run["status"] == "completed" and "could not run" in str(run.get("output")), run
    assert "answered HTTP 500" in stack.log("worker")  # the journal names the failure and the endpoint
    one = httpx.post(f"{stack.llm.base_url}/chat/completions", timeout=10,
                     json={"model": stack.llm.model, "messages": [{"role": "user", "content": "ping"}]})
    assert one.status_code == 500, one.text
    t0 = time.monotonic()
    stack.llm.chaos(0)  # the model server started again
    w.resolved("RtcbotLLMUnreachable", t0, llm_fired)
    w.quiet()
