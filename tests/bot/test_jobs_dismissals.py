"""Dismissals through the App, end to end: deliveries over real HTTP → jobs → check runs on the
fake GitHub. A finding dismissed on one pull request does not come back as an annotation on
another with the same fingerprint at another line; its summary names who dismissed it; the
store's remove (`unignore`) brings it back; `dismissals: off` in the config shows it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analyzers.report import Finding
from bot.core.dismissals import Dismissal
from tests.bot import test_jobs
from tests.bot.app_support import App
from tests.bot.test_action_dismissals import PATH, moved_diff
from tests.bot.test_jobs import finished
from tests.fakes.github_server import many_hunks_diff

world = test_jobs.world  # the fixture: the App on the fake GitHub (tests/bot/test_jobs.py)

AT = 1_795_651_200.0  # 2026-11-26 UTC


def _open(w: App, number: int, diff: str) -> dict[str, Any]:
    pr = w.gh.add_pr(number, diff_text=diff, head_sha=f"{number:040x}")  # a head of its own
    w.deliver("pull_request", w.gh.pr_event("opened", number))
    w.run()
    return finished(w, sha=pr.head_sha)


def test_a_dismissed_finding_stays_dismissed_on_other_pull_requests(world: Callable[..., App]) -> None:
    w = world()
    first = _open(w, 1, many_hunks_diff(PATH, hunks=2))
    assert sorted(a["start_line"] for a in first["annotations"]) == [2, 12]
    row = w.rt.store.checks.get(w.gh.repo, "rtcbot / EditingRTC", first["head_sha"])
    assert row is not None
    stored = [Finding.from_dict(f.data) for f in w.rt.store.checks.findings(row.id)]
    f1 = next(f for f in stored if f.start_line == 12)  # hunk 1: `return x * 1`
    fp = f1.fingerprint()
    assert any(a["start_line"] == 12 and f"fingerprint {fp}" in a["message"] for a in first["annotations"])
    d = Dismissal(fp, "finding", None, "alice", AT, "a multiplication by one is the point")
    assert w.rt.store.dismissals.add(w.gh.repository_id, w.gh.repo, d)

    second = _open(w, 2, moved_diff(41))  # another pull request: the same edit at line 42
    assert second["annotations"] == []
    summary = second["output"]["summary"]
    assert "### Dismissed" in summary
    assert "src/many.py:42" in summary
    # who dismissed it, the mention made inert (a word joiner after the @: no notification)
    assert "dismissed by @\u2060alice on 2026-11-26: a multiplication by one is the point" in summary
    assert f"(fingerprint {fp})" in summary
    assert second["conclusion"] == "neutral"
    third = _open(w, 3, many_hunks_diff(PATH, hunks=2))  # hunk 0 is not dismissed
    assert [a["start_line"] for a in third["annotations"]] == [2]

    assert w.rt.store.dismissals.remove(w.gh.repository_id, w.gh.repo, fp, None) == 1  # unignore
    back = _open(w, 4, moved_diff(61))
    assert [a["start_line"] for a in back["annotations"]] == [62]
    assert "Dismissed" not in back["output"]["summary"]
    assert [r for r in w.gh.rejections if r[0] != 404] == []


def test_a_dismissed_rule_does_not_gate_unless_the_config_says_so(world: Callable[..., App]) -> None:
    w = world()
    w.rt.store.dismissals.add(w.gh.repository_id, w.gh.repo, Dismissal("editing_rtc", "rule", "src/*", "bob", AT, ""))
    w.gh.set_file(".github/rtcbot.yml", "fail_on: editing_rtc.findings>0\n")
    run = _open(w, 5, many_hunks_diff(PATH, hunks=2))
    assert run["annotations"] == [] and run["conclusion"] == "neutral"
    assert run["output"]["summary"].count("dismissed by @\u2060bob on 2026-11-26") == 2
    w.gh.set_file(".github/rtcbot.yml", "fail_on: editing_rtc.findings>0\ngate_dismissed: true\n")
    run = _open(w, 6, moved_diff(21))
    assert run["annotations"] == [] and run["conclusion"] == "failure"  # counted, still not annotated
    w.gh.set_file(".github/rtcbot.yml", "dismissals: off\n")
    run = _open(w, 7, moved_diff(31))
    assert [a["start_line"] for a in run["annotations"]] == [32] and "Dismissed" not in run["output"]["summary"]
