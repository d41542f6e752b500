"""A real Prometheus server (Debian's `prometheus`) on a loopback port, scraping `rtcbot serve`'s
/metrics every second with the shipped scrape job (deploy/prometheus.yml: only its target, its
token file and its rule file moved) and evaluating the shipped alert rules
(deploy/prometheus/alerts.yml) every second. The rules are derived from the shipped file
mechanically, never copied by hand: every `for:` and every range window `[…]` of an `expr` is
scaled by one factor (`derive_rules`), nothing else changes. Used by tests/deploy/test_runbooks.py.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.support import ROOT

RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
SCRAPE = ROOT / "deploy" / "prometheus.yml"
UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
DURATION = re.compile(r"(\d+)([smhdwy])")
RANGE = re.compile(r"\[(\d+[smhdwy])\]")


def seconds(duration: str) -> int:
    """A Prometheus duration of one unit ("2m", "6h") in seconds."""
    m = DURATION.fullmatch(duration.strip())
    if m is None:
        raise ValueError(f"not a one-unit Prometheus duration: {duration!r}")
    return int(m.group(1)) * UNIT_S[m.group(2)]


def scaled(duration: str, factor: float) -> str:
    """`duration` times `factor`, in whole seconds (at least 1)."""
    return f"{max(1, round(seconds(duration) * factor))}s"


def derive_rules(shipped: dict[str, Any], factor: float, interval_s: int = 1) -> dict[str, Any]:
    """The shipped rule file with each `for:` and each range window of each `expr` scaled by
    `factor` and the groups evaluated every `interval_s`; expressions otherwise as shipped."""
    out = copy.deepcopy(shipped)
    for group in out["groups"]:
        group["interval"] = f"{interval_s}s"
        for rule in group["rules"]:
            rule["expr"] = RANGE.sub(lambda m: f"[{scaled(m.group(1), factor)}]", rule["expr"])
            if "for" in rule:
                rule["for"] = scaled(str(rule["for"]), factor)
    return out


def scrape_config(target: str, token_file: Path, rule_file: Path, interval_s: int = 1) -> dict[str, Any]:
    """The shipped scrape job (deploy/prometheus.yml) aimed at `target`, reading the token from
    `token_file`, with `rule_file` as its one rule file, scraping and evaluating every `interval_s`."""
    config: dict[str, Any] = yaml.safe_load(SCRAPE.read_text(encoding="utf-8"))
    (job,) = config["scrape_configs"]
    job["authorization"]["credentials_file"] = str(token_file)
    job["static_configs"] = [{"targets": [target]}]
    config["rule_files"] = [str(rule_file)]
    config["global"] = {"scrape_interval": f"{interval_s}s", "scrape_timeout": f"{interval_s}s",
                        "evaluation_interval": f"{interval_s}s"}
    return config


@dataclass
class Prometheus:
    """`start()`, `alerts()` (name → state), `wait(name, state)`, `stop()`."""

    tmp: Path
    target: str
    token: str
    factor: float
    port: int = 0
    proc: subprocess.Popen[bytes] | None = field(init=False, default=None)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, exe: str, timeout: float = 60.0) -> Prometheus:
        self.tmp.mkdir(parents=True, exist_ok=True)
        token_file = self.tmp / "token"
        token_file.write_text(self.token + "\n", encoding="utf-8")
        token_file.chmod(0o400)
        rules = self.tmp / "alerts.yml"
        rules.write_text(yaml.safe_dump(derive_rules(yaml.safe_load(RULES.read_text(encoding="utf-8")),
                                                     self.factor), sort_keys=False), encoding="utf-8")
        config = self.tmp / "prometheus.yml"
        config.write_text(yaml.safe_dump(scrape_config(self.target, token_file, rules)), encoding="utf-8")
        check = subprocess.run([shutil.which("promtool") or "promtool", "check", "config", str(config)],
                               capture_output=True, text=True, timeout=60)
        if check.returncode != 0:
            raise RuntimeError(f"promtool check config: {check.stdout}{check.stderr}")
        log = open(self.tmp / "prometheus.log", "wb")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen(
            [exe, f"--config.file={config}", f"--storage.tsdb.path={self.tmp / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"prometheus did not start:\n{self.log()[-3000:]}")
            time.sleep(0.2)

    def log(self) -> str:
        path = self.tmp / "prometheus.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def alerts(self) -> dict[str, str]:
        """Each active alert's name and state ("pending" or "firing"), from /api/v1/alerts."""
        answer = httpx.get(f"{self.url}/api/v1/alerts", timeout=5).json()
        return {a["labels"]["alertname"]: a["state"] for a in answer["data"]["alerts"]}

    def query(self, expr: str) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=5).json()
        return list(answer["data"]["result"])

    def wait(self, name: str, firing: bool, timeout: float, since: float | None = None) -> float:
        """Seconds (from `since`, a time.monotonic(), or now) until alert `name` fires (or, with
        `firing` false, is no longer active: resolved)."""
        t0 = time.monotonic() if since is None else since
        deadline = time.monotonic() + timeout
        while True:
            state = self.alerts().get(name)
            if (state == "firing") if firing else state is None:
                return time.monotonic() - t0
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} did not {'fire' if firing else 'resolve'} in {timeout:g} s "
                                     f"(active: {self.alerts()})\n{self.log()[-2000:]}")
            time.sleep(0.25)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
