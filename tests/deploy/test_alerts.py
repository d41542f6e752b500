"""The alert rules that ship (deploy/prometheus/alerts.yml): valid for Prometheus (`promtool
check rules`), each one made to fire by its unit test's series and none by a healthy service's
(`promtool test rules deploy/prometheus/alerts_test.yml`), named by the scrape config, reading
only metrics `rtcbot serve` exposes, and each explained in docs/deploy.md ("Alerts")."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.app_support import make_settings, scrape, serve
from tests.deploy.prometheus_server import RANGE, derive_rules, seconds
from tests.support import ROOT, require

RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
UNIT_TEST = ROOT / "deploy" / "prometheus" / "alerts_test.yml"
DEPLOY_MD = ROOT / "docs" / "deploy.md"


def promtool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("promtool")
    require(tool, "promtool is not installed (Debian: apt-get install prometheus; `make setup-dev` does)")
    assert tool is not None
    return subprocess.run([tool, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def rules() -> list[dict[str, Any]]:
    return [r for group in yaml.safe_load(RULES.read_text())["groups"] for r in group["rules"]]


def test_the_rules_pass_promtool_check() -> None:
    r = promtool("check", "rules", str(RULES))
    assert r.returncode == 0 and f"SUCCESS: {len(rules())} rules found" in r.stdout, r.stdout + r.stderr


def test_each_alert_fires_on_its_series_and_none_on_a_healthy_service() -> None:
    r = promtool("test", "rules", UNIT_TEST.name, cwd=UNIT_TEST.parent)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def test_the_unit_test_makes_every_alert_fire() -> None:
    tests = yaml.safe_load(UNIT_TEST.read_text())["tests"]
    fired = {case["alertname"] for t in tests for case in t["alert_rule_test"] if case.get("exp_alerts")}
    quiet = {case["alertname"] for case in tests[0]["alert_rule_test"] if case["exp_alerts"] == []}
    names = {r["alert"] for r in rules()}
    assert fired == names and quiet == names, (names - fired, names - quiet)
    wanted = {"RtcbotNoLiveWorker", "RtcbotQueueBacklog", "RtcbotAnalysesFailing", "RtcbotDataDiskLow",
              "RtcbotDatabaseDown", "RtcbotQueueDown", "RtcbotLLMBudgetSpent",  # #48 item 7
              "RtcbotLLMUnreachable"}  # #48 Operable III: an LLM endpoint that is down pages someone
    assert wanted <= names


def test_the_scrape_config_names_the_rules(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    assert config["rule_files"] == ["prometheus/alerts.yml"]
    token = tmp_path / "token"
    token.write_text("a-token-of-the-tests\n")
    config["scrape_configs"][0]["authorization"]["credentials_file"] = str(token)
    (tmp_path / "prometheus").mkdir()
    shutil.copy(RULES, tmp_path / "prometheus" / "alerts.yml")
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    r = promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert r.returncode == 0 and "SUCCESS: 1 rule files found" in r.stdout, r.stdout + r.stderr


def test_the_rules_read_only_metrics_rtcbot_serve_exposes(tmp_path: Path) -> None:
    rt = Runtime(make_settings(tmp_path))
    with serve(create_app(rt.settings, runtime=rt)) as url:
        text = scrape(url).text
    rt.store.close()
    exposed = {m.group(1) for m in re.finditer(r"^(?:# HELP )?(rtcbot_\w+)", text, re.MULTILINE)}
    read = {name for r in rules() for name in re.findall(r"\brtcbot_\w+", r["expr"])}
    assert read and read <= exposed, sorted(read - exposed)
    assert all('job="rtcbot"' in r["expr"] for r in rules() if re.search(r"\bup\b", r["expr"]))


def test_each_alert_is_explained_in_deploy_md() -> None:
    doc = DEPLOY_MD.read_text()
    headings = {h.strip().lower() for h in re.findall(r"^#{2,4} (.+)$", doc, re.MULTILINE)}
    alerts = doc.split("## Alerts", 1)[1].split("\n## ", 1)[0]
    for rule in rules():
        anchor = rule["annotations"]["runbook"].removeprefix("docs/deploy.md#")
        assert anchor in headings, f"{rule['alert']}: no heading {anchor!r} in docs/deploy.md"
        assert f"`{rule['alert']}`" in alerts, f"{rule['alert']} is not named under docs/deploy.md's Alerts"


def test_the_walks_rules_differ_from_the_shipped_ones_only_in_their_durations() -> None:
    """tests/deploy/test_runbooks.py's Prometheus evaluates the shipped rules with `for:` and
    range windows scaled (derive_rules): every other character of every rule is the shipped one's."""
    shipped = yaml.safe_load(RULES.read_text())
    derived = derive_rules(shipped, 1 / 60)
    pairs = list(zip(rules(), [r for g in derived["groups"] for r in g["rules"]], strict=True))
    for old, new in pairs:
        assert RANGE.sub("[]", new["expr"]) == RANGE.sub("[]", old["expr"]), new["expr"]
        assert {k: v for k, v in new.items() if k not in ("expr", "for")} == \
               {k: v for k, v in old.items() if k not in ("expr", "for")}
        assert ("for" in new) == ("for" in old)
    by_name = {new["alert"]: new for _, new in pairs}
    assert by_name["RtcbotDown"]["for"] == "2s" and by_name["RtcbotDataDiskFillsWithinADay"]["for"] == "60s"
    assert "[30s]" in by_name["RtcbotAnalysesFailing"]["expr"]
    assert "[360s]" in by_name["RtcbotDataDiskFillsWithinADay"]["expr"]
    with pytest.raises(ValueError, match="one-unit"):
        seconds("1h30m")
