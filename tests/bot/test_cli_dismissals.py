"""`rtcbot review --dismissals FILE`: the file the Action reads at the base commit, applied by
the same review core: a dismissed finding is a line of the output, not a finding, and does not
count toward the config's gate; an invalid file is one clear error (exit 2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.entry import main
from tests.bot.test_cli import llm_args, rtcbot
from tests.fakes.llm_server import RoundTrips, ScriptedLLM

PATCH = ("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
         "--- a/tests/t.py\n+++ b/tests/t.py\n@@ -1 +1 @@\n-y = 1\n+y = 2\n")
FILE = ('dismissals:\n  - rule: editing_rtc\n    paths: "tests/*"\n    by: alice\n    date: 2026-11-26\n'
        "    reason: tests are not scored\n")


def test_review_with_dismissals_shows_them_as_lines_outside_the_gate(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(RoundTrips())  # re-creates both hunks: findings a gate counts, none inconclusive
    patch, dismissals, cfg = tmp_path / "p.diff", tmp_path / "d.yml", tmp_path / "rtcbot.yml"
    patch.write_text(PATCH)
    dismissals.write_text(FILE)
    cfg.write_text("fail_on: editing_rtc.findings>1\n")
    args = ["review", str(patch), "--config", str(cfg), *llm_args(srv)]
    r = CliRunner().invoke(main, [*args, "--dismissals", str(dismissals), "--format", "json"])
    assert r.exit_code == 0, r.output  # one finding left: the gate does not count the dismissed one
    (rep,) = json.loads(r.stdout)["reports"]
    assert [f["path"] for f in rep["findings"]] == ["m.py"]
    assert len(rep["dismissed"]) == 1 and rep["dismissed"][0].startswith("tests/t.py:1 ")
    assert rep["dismissed"][0].endswith("dismissed by @alice on 2026-11-26 in tests/*: tests are not scored")
    text = CliRunner().invoke(main, [*args, "--dismissals", str(dismissals), "--format", "markdown"])
    assert "**Dismissed**" in text.stdout and "dismissed by @\u2060alice on 2026-11-26 in tests/\\*" in text.stdout
    without = CliRunner().invoke(main, [*args, "--format", "json"])
    assert without.exit_code == 1 and len(json.loads(without.stdout)["reports"][0]["findings"]) == 2
    cfg.write_text("fail_on: editing_rtc.findings>1\ngate_dismissed: true\n")
    counted = CliRunner().invoke(main, [*args, "--dismissals", str(dismissals), "--format", "json"])
    assert counted.exit_code == 1 and len(json.loads(counted.stdout)["reports"][0]["findings"]) == 1
    cfg.write_text("dismissals: off\n")
    off = CliRunner().invoke(main, [*args, "--dismissals", str(dismissals), "--format", "json"])
    assert off.exit_code == 0 and len(json.loads(off.stdout)["reports"][0]["findings"]) == 2


@pytest.mark.slow
def test_review_refuses_an_invalid_dismissals_file(tmp_path: Path) -> None:
    patch, bad = tmp_path / "p.diff", tmp_path / "d.yml"
    patch.write_text(PATCH)
    bad.write_text("dismissals:\n  - rule: editing_rtc\n    finding: 0123456789abcdef\n"
                   "    by: a\n    date: 2026-11-26\n")
    p = rtcbot("review", str(patch), "--dismissals", str(bad))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == (f"Error: {bad} is invalid: entry 1: name exactly one of `rule` (a rule id or an "
                                "analyzer) and `finding` (a fingerprint)")
    missing = rtcbot("review", str(patch), "--dismissals", str(tmp_path / "nope.yml"))
    assert missing.returncode == 2 and missing.stderr.strip() == f"Error: {tmp_path / 'nope.yml'}: no such file"


def test_stats_lists_the_dismissals(tmp_path: Path) -> None:
    """`rtcbot stats` names every dismissal in the App's store, in the table's words and in JSON."""
    from bot.core.dismissals import Dismissal
    from bot.store.store import Store

    data = tmp_path / "data"
    data.mkdir()
    store = Store(f"sqlite:///{data / 'rtcbot.sqlite3'}")
    try:
        store.dismissals.add(7, "o/r", Dismissal("python.sqli", "rule", "tests/*", "alice", 1_795_651_200.0, "fixture"))
        store.dismissals.add(8, "o/other", Dismissal("0123456789abcdef", "finding", None, "bob", 1_795_651_200.0, ""))
    finally:
        store.close()
    env = {"RTCBOT_DATA_DIR": str(data), "DATABASE_URL": ""}
    r = CliRunner().invoke(main, ["stats"], env=env)
    assert r.exit_code == 0, r.output
    assert "Dismissed (2):" in r.output
    assert "  o/r: rule python.sqli — dismissed by @alice on 2026-11-26 in tests/*: fixture" in r.output
    assert "  o/other: finding 0123456789abcdef — dismissed by @bob on 2026-11-26" in r.output
    j = CliRunner().invoke(main, ["stats", "--json", "--repo", "o/r"], env=env)
    assert j.exit_code == 0, j.output
    assert json.loads(j.output)["dismissals"] == [{"repo": "o/r", "target": "python.sqli", "kind": "rule",
                                                   "paths": "tests/*", "by": "alice", "at": 1_795_651_200.0,
                                                   "reason": "fixture"}]
    empty = CliRunner().invoke(main, ["stats", "--repo", "o/none"], env=env)
    assert "No dismissals in o/none." in empty.output
