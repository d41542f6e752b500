"""rtcbot run the way docs/deploy.md says: `rtcbot serve` and `rtcbot worker` started with the
command lines of the systemd units (deploy/systemd/) and the settings of the env file
(deploy/rtcbot.env.example), on a fresh schema of the local PostgreSQL and a database of the
local Redis; GitHub is the fake GitHub server, the LLM endpoint a scripted one. Used by
tests/deploy/test_walkthrough.py and scripts/measure_deploy.py.

What is read from the deployment files, so that a change there is what runs here: the env
file's names and values (the App's, the database's, the queue's and the LLM endpoint's are
pointed at this machine's), and each unit's ExecStart arguments (the port moved to a free one).
"""

from __future__ import annotations

import configparser
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.bot.app_support import REDIS_URL, SECRET, deliver, drop_schema, postgres_url
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import Responder, RoundTrips, ScriptedLLM
from tests.support import ROOT

DEPLOY = ROOT / "deploy"
ENV_FILE = DEPLOY / "rtcbot.env.example"
UNITS = {"serve": DEPLOY / "systemd" / "rtcbot-serve.service", "worker": DEPLOY / "systemd" / "rtcbot-worker@.service"}
RTCBOT = [sys.executable, "-m", "bot"]  # what /opt/rtcbot/bin/rtcbot runs, from this checkout
CHECK = "rtcbot / EditingRTC"


def parse_env(text: str, name: str = "env file") -> dict[str, str]:
    """KEY=value lines, as systemd's EnvironmentFile= and compose's env_file read them (blank
    lines and `#` comments skipped; values unquoted)."""
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ValueError(f"{name}:{n}: not KEY=value: {line!r}")
        out[key.strip()] = value.strip()
    return out


def read_env_file(path: Path) -> dict[str, str]:
    return parse_env(path.read_text(encoding="utf-8"), path.name)


def parse_unit(text: str, source: str = "<unit>") -> configparser.ConfigParser:
    """A systemd unit file (or a piece of one) as sections of keys (a key given twice keeps its
    last value)."""
    unit = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    unit.read_string(text, source=source)
    return unit


def read_unit(path: Path) -> configparser.ConfigParser:
    return parse_unit(path.read_text(encoding="utf-8"), str(path))


def exec_args(path: Path) -> list[str]:
    """A unit's ExecStart as argv, after the rtcbot executable."""
    argv = shlex.split(read_unit(path)["Service"]["ExecStart"])
    if Path(argv[0]).name != "rtcbot":
        raise ValueError(f"{path.name}: ExecStart does not run rtcbot: {argv[0]}")
    return argv[1:]


def edits_diff(number: int, hunks: int) -> str:
    """A diff of `hunks` small edits to one file, distinct per pull request (no cached answers)."""
    lines = [f"--- a/app/pr{number}.py", f"+++ b/app/pr{number}.py"]
    for i in range(hunks):
        lines += [f"@@ -{1 + 20 * i},3 +{1 + 20 * i},3 @@", f" def step_{i}(total):",
                  f"-    total += {number + i}", f"+    total -= {number * 7 + i}", "     return total"]
    return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def with_port(args: list[str], port: int) -> list[str]:
    """`args` with `--port`'s value replaced."""
    out = list(args)
    out[out.index("--port") + 1] = str(port)
    return out


def with_env_file(args: list[str], path: Path) -> list[str]:
    """`args` with `--env-file`'s value (the unit's EnvironmentFile=) replaced, where it is given."""
    out = list(args)
    if "--env-file" in out:
        out[out.index("--env-file") + 1] = str(path)
    return out


@dataclass
class Stack:
    """The services and their fakes; `start_serve`, `start_worker`, `open_pr`, `stop`."""

    tmp: Path
    llm_delay_s: float = 0.05
    # a model that can edit code: each one-line hunk re-created, so each is annotated
    responder: Responder = field(default_factory=RoundTrips)
    overrides: dict[str, str] = field(default_factory=dict)
    gh: FakeGitHub = field(init=False)
    llm: ScriptedLLM = field(init=False)
    env: dict[str, str] = field(init=False)
    url: str = field(init=False, default="")
    procs: dict[str, subprocess.Popen[bytes]] = field(init=False, default_factory=dict)
    schema: str = field(init=False, default_factory=lambda: f"deploy_{uuid.uuid4().hex[:8]}")

    def __post_init__(self) -> None:
        self.tmp.mkdir(parents=True, exist_ok=True)
        database_url = postgres_url(self.schema)
        if database_url is None:
            raise RuntimeError("the local PostgreSQL (127.0.0.1:5432, db test) does not answer")
        import redis

        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).flushdb()
        self.gh = FakeGitHub().start()
        self.llm = ScriptedLLM(self.responder, delay_s=self.llm_delay_s).start()
        key = self.tmp / "private-key.pem"
        key.write_text(self.gh.private_key_pem, encoding="utf-8")
        key.chmod(0o600)
        documented = read_env_file(ENV_FILE)
        here = {"RTCBOT_WEBHOOK_SECRET": SECRET, "RTCBOT_APP_ID": str(self.gh.app_id),
                "RTCBOT_PRIVATE_KEY_PATH": str(key), "RTCBOT_GITHUB_API_URL": self.gh.base_url,
                "DATABASE_URL": database_url, "REDIS_URL": REDIS_URL,
                "RTCBOT_LLM_BASE_URL": self.llm.base_url, "RTCBOT_LLM_MODEL": self.llm.model,
                "RTCBOT_DATA_DIR": str(self.tmp / "data")}
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL")}
        cache = os.environ.get("RTCBOT_CACHE_DIR")
        self.env = {**base, **documented, **here, **({"RTCBOT_CACHE_DIR": cache} if cache else {}),
                    "PYTHONPATH": str(ROOT), **self.overrides}

    # -- processes ----------------------------------------------------------------------------
    def _start(self, name: str, args: list[str], env: dict[str, str] | None = None,
               prefix: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115 - the child holds it
        p = subprocess.Popen([*prefix, *RTCBOT, *args], cwd=self.tmp, env=env or self.env, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.procs[name] = p
        return p

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def start_serve(self, timeout: float = 120.0, port: int | None = None, prefix: tuple[str, ...] = ()) -> str:
        """`rtcbot serve` as its unit runs it, on `port` (default: a free one), its command line
        after `prefix` where given; its URL once /healthz answers (with 503 while no worker is
        alive)."""
        port = port or free_port()
        env_file = self.tmp / "rtcbot.env"  # what the unit's EnvironmentFile= and --env-file name
        names = [k for k in self.env if k.startswith("RTCBOT_") or k in ("DATABASE_URL", "REDIS_URL")]
        env_file.write_text("".join(f"{k}={self.env[k]}\n" for k in names), encoding="utf-8")
        env_file.chmod(0o600)
        p = self._start("serve", with_env_file(with_port(exec_args(UNITS["serve"]), port), env_file), prefix=prefix)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                httpx.get(f"{self.url}/healthz", timeout=5)  # any answer: 503 until a worker beats
                return self.url
            except httpx.TransportError:
                pass
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"rtcbot serve did not come up:\n{self.log('serve')[-3000:]}")
            time.sleep(0.2)

    def start_worker(self, name: str = "worker", without: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
        """`rtcbot worker` as its unit runs it (`without` those variables of the env file);
        returns once it consumes the queue."""
        env = {k: v for k, v in self.env.items() if k not in without}
        p = self._start(name, exec_args(UNITS["worker"]), env)
        deadline = time.monotonic() + 120
        while "rtcbot: worker on the" not in self.log(name):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"rtcbot worker did not start:\n{self.log(name)[-3000:]}")
            time.sleep(0.1)
        return p

    def wait_healthy(self, timeout: float = 60.0) -> float:
        """Seconds until /healthz answers 200 (the database, the queue and a live worker)."""
        t0 = time.monotonic()
        self.gh.wait_for(lambda: httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200,
                         timeout=timeout, interval=0.2)
        return time.monotonic() - t0

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 60.0) -> None:
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        p.send_signal(sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)

    def close(self) -> None:
        for name in list(self.procs):
            self.stop(name)
        self.gh.stop()
        self.llm.stop()
        drop_schema(self.schema)

    # -- pull requests ------------------------------------------------------------------------
    def open_pr(self, number: int, diff_text: str) -> str:
        """A pull request on the fake GitHub and its signed `pull_request.opened` delivery
        (GitHub's own example payload); its head SHA."""
        pr = self.gh.add_pr(number, diff_text=diff_text)
        answer = deliver(self.url, "pull_request", self.gh.pr_event("opened", number))
        if answer.status_code != 202:
            raise RuntimeError(f"the delivery was answered {answer.status_code}: {answer.text}")
        return pr.head_sha

    def run_status(self, head: str, name: str = CHECK) -> str | None:
        runs = self.gh.runs(name, head)
        return str(runs[0]["status"]) if runs else None

    def wait_status(self, head: str, status: str, timeout: float, name: str = CHECK) -> float:
        """Seconds until the check run `name` on `head` has `status`."""
        t0 = time.monotonic()
        self.gh.wait_for(lambda: self.run_status(head, name) == status, timeout=timeout, interval=0.05)
        return time.monotonic() - t0
