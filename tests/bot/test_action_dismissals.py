"""Dismissals through the Action, end to end (`rtcbot action` as a subprocess against the fake
GitHub): `.github/rtcbot-dismissals.yml` at the BASE commit dismisses a finding wherever it
moves; the pull request's own copy of the file (what its author can write) dismisses nothing;
an invalid file is named in the summary and dismisses nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.core.dismissals_file import DISMISSALS_PATH
from tests.bot.test_action import EVENT, TOKEN, run_action
from tests.fakes.github_server import FakeGitHub, files_from_diff, many_hunks_diff
from tests.fakes.llm_server import RoundTrips, ScriptedLLM, varied

pytestmark = pytest.mark.slow
EDITING = "rtcbot / EditingRTC"
PATH = "src/many.py"


def moved_diff(start: int) -> str:
    """Hunk 1 of many_hunks_diff(hunks=2), the same edit, at line `start`."""
    return "\n".join([f"--- a/{PATH}", f"+++ b/{PATH}", f"@@ -{start},3 +{start},3 @@", " def f1(x):",
                      "-    return x + 1", "+    return x * 1", "     # end"]) + "\n"


def _pr(fake_github: Callable[..., FakeGitHub], diff: str, *, base: str | None = None,
        head: str | None = None) -> tuple[FakeGitHub, dict[str, Any]]:
    """The event's pull request with `diff`; the dismissals file at the base and (added by the
    pull request itself) at the head."""
    event = json.loads(EVENT.read_text(encoding="utf-8"))
    gh = fake_github(repo=event["repository"]["full_name"])
    gh.grant_token(TOKEN)
    files = files_from_diff(diff)
    if head is not None:
        files += files_from_diff(f"--- /dev/null\n+++ b/{DISMISSALS_PATH}\n@@ -0,0 +1,1 @@\n+{head.splitlines()[0]}\n")
        gh.set_file(DISMISSALS_PATH, head, ref=event["pull_request"]["head"]["sha"])
    if base is not None:
        gh.set_file(DISMISSALS_PATH, base, ref=event["pull_request"]["base"]["sha"])
    gh.add_pr(event["pull_request"]["number"], files=files, head_sha=event["pull_request"]["head"]["sha"])
    return gh, event


def _editing(gh: FakeGitHub) -> dict[str, Any]:
    return next(r for r in gh.check_runs.values() if r["name"] == EDITING)


def _file(fp: str) -> str:
    return (f"dismissals:\n  - finding: {fp}\n    by: alice\n    date: 2026-11-26\n"
            "    reason: a multiplication by one is the point\n")


def test_the_base_commits_file_dismisses_a_finding_wherever_it_moves(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    llm = scripted_llm(RoundTrips())  # its two hunks conclusive, so each annotated with its fingerprint
    for run_dir in ("1", "2"):
        (tmp_path / run_dir).mkdir()
    gh, _ = _pr(fake_github, many_hunks_diff(PATH, hunks=2))
    proc = run_action(gh, llm, tmp_path / "1", analyzers="editing-rtc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    at12 = next(a for a in _editing(gh)["annotations"] if a["start_line"] == 12)
    m = re.search(r"fingerprint ([0-9a-f]{16})", at12["message"])
    assert m, at12["message"]
    fp = m.group(1)

    gh, event = _pr(fake_github, moved_diff(41), base=_file(fp))
    proc = run_action(gh, llm, tmp_path / "2", analyzers="editing-rtc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = _editing(gh)
    assert run["annotations"] == []
    assert "dismissed by @\u2060alice on 2026-11-26: a multiplication by one is the point" in run["output"]["summary"]
    assert f"1 dismissal(s) from {DISMISSALS_PATH} at the base commit {event['pull_request']['base']['sha'][:12]}" \
        in proc.stderr
    summary = (tmp_path / "2" / "summary.md").read_text()
    assert "**Dismissed**" in summary and "dismissed by @\u2060alice on 2026-11-26" in summary


def test_a_pull_request_cannot_dismiss_its_own_findings(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The author adds the file in the pull request, dismissing every EditingRTC finding: the
    base commit has no such file, so nothing is dismissed."""
    own = "dismissals:\n  - rule: editing_rtc\n    by: mallory\n    date: 2026-11-26\n"
    gh, _ = _pr(fake_github, moved_diff(41), head=own)
    (tmp_path / "workspace" / ".github").mkdir(parents=True)
    (tmp_path / "workspace" / DISMISSALS_PATH).write_text(own)  # and in the checkout at the head
    proc = run_action(gh, scripted_llm(varied), tmp_path, analyzers="editing-rtc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = _editing(gh)
    assert [a["start_line"] for a in run["annotations"] if a["path"] == PATH] == [42]
    assert "dismissed" not in run["output"]["summary"] and "dismissal(s)" not in proc.stderr


def test_an_invalid_file_dismisses_nothing_and_says_why(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    bad = "dismissals:\n  - rule: editing_rtc\n    by: alice\n"
    gh, _ = _pr(fake_github, moved_diff(41), base=bad)
    proc = run_action(gh, scripted_llm(varied), tmp_path, analyzers="editing-rtc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = _editing(gh)
    assert [a["start_line"] for a in run["annotations"] if a["path"] == PATH] == [42]
    why = f"{DISMISSALS_PATH} is invalid: entry 1.date: Field required; no dismissal applies"
    assert why in run["output"]["summary"]
    assert "entry 1.date: Field required" in proc.stderr
