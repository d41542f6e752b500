"""GitHub's limits on what rtcbot writes (issue #15, items 1 and 4).

- Byte limits: `summary` and `text` ≤ 65,535 UTF-8 bytes, annotation `message` / `raw_details`
  ≤ 64 KB, titles ≤ 255: cut without splitting a UTF-8 sequence, saying what was left out.
  The fake GitHub counts bytes as GitHub does and answers 422 with GitHub's error object.
- Annotations only where the diff shows them (the RIGHT side of a hunk); the others are
  listed in the summary with links.
- Pull requests over 3,000 files: GitHub lists 3,000; the check run says how many were left,
  on the App and on the Action alike (byte-identical check runs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from analyzers.code.diff import parse_diff
from analyzers.report import AnalyzerReport, Finding, Skipped
from bot.core.context import unlisted_files
from reporters import check_run
from reporters.base import Target
from reporters.check_run import CheckRunReporter
from reporters.diff_filter import DiffFilter
from tests.fakes.github_server import PRS, FakeGitHub, diff_lines, files_from_diff
from tests.fakes.llm_server import RoundTrips, ScriptedLLM
from tests.reporters.test_parity import FIXTURE, NUMBER, TOKEN, _action, _app

TOKEN_HEADERS = {"Authorization": f"token {TOKEN}", "Accept": "application/vnd.github+json"}
CJK = "漢字の題名と説明"  # 3 bytes a character in UTF-8


def cjk_report(n: int = 400) -> AnalyzerReport:
    """The issue's case: 400 findings with CJK titles, messages and evidence. A message is
    past an annotation's 64 KB in bytes (72,000) though not in characters (24,000)."""
    findings = [Finding("editing_rtc", CJK * 40, CJK * 3_000, f"src/ü{i}.py", i + 1, i + 2,
                        scores={"rtc": 0.5}, evidence={"descriptions": [CJK * 2000]}) for i in range(n)]
    return AnalyzerReport("editing_rtc", "EditingRTC", findings, scores={"rtc": 0.5},
                          skipped=[Skipped(f"vendor/{CJK}{i}.bin", "binary file") for i in range(2000)])


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


# ---------------------------------------------------------------------------- byte-exact cuts
def test_clip_never_splits_a_utf8_sequence() -> None:
    text = "a\u00e9\u20ac\U0001f600" * 5  # 1-, 2-, 3- and 4-byte characters
    for limit in range(_size(text) + 2):
        got = check_run.clip(text, limit)
        assert _size(got) <= limit and text.startswith(got)
        assert _size(got) > limit - 4 or got == text  # at most one character's bytes lost
        noted = check_run.clip_noted(text * 100, 60 + limit)
        assert _size(noted) <= 60 + limit and "\ufffd" not in noted
        assert noted.endswith(f"{_size(text * 100) - _size(noted.rsplit(chr(10), 1)[0]):,} bytes left out.")


@pytest.mark.slow
def test_the_issues_cjk_report_fits_every_limit_and_says_what_it_left_out() -> None:
    out = check_run.render(cjk_report())
    for text in (out.summary, out.text):
        assert _size(text) <= check_run.MAX_OUTPUT_BYTES and "\ufffd" not in text
        assert "bytes (" in text and "lines) left out." in text
    assert len(out.text) < 65_535 // 2  # cut by bytes, where a character count would not have cut
    assert _size(out.title) <= 255
    for a in out.annotations:
        assert _size(a["title"]) <= 255 and a["title"].startswith(CJK)
        assert _size(a["message"]) <= 64 * 1024 and a["message"].endswith("bytes left out.")
        assert _size(a["raw_details"]) <= 64 * 1024


def test_the_fake_counts_bytes_and_answers_like_github(fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    gh.add_pr(NUMBER, fixture=FIXTURE)
    gh.grant_token(TOKEN)
    summary = CJK[0] * 30_000  # 30,000 characters, 90,000 bytes
    r = httpx.post(f"{gh.base_url}/repos/{gh.repo}/check-runs", headers=TOKEN_HEADERS, timeout=10,
                   json={"name": "x", "head_sha": "a" * 40, "output": {"title": "t", "summary": summary}})
    assert r.status_code == 422
    assert r.json()["errors"] == [{"resource": "CheckRun", "code": "custom", "field": "summary",
                                   "message": "summary exceeds a maximum bytesize of 65535"}]


@pytest.mark.slow
def test_the_cjk_report_goes_through_the_fake_github(fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    gh.add_pr(NUMBER, fixture=FIXTURE)
    gh.grant_token(TOKEN)
    from bot.github import GitHubSettings, token_client

    client = token_client(gh.base_url, TOKEN, GitHubSettings(write_interval_s=0.0))  # 8 writes, unpaced
    try:
        reporter = CheckRunReporter(client)
        reporter.start(Target(repo=gh.repo, number=NUMBER, head_sha=gh.pulls[NUMBER].head_sha),
                       {"editing_rtc": "EditingRTC"})
        reporter.publish(cjk_report())
    finally:
        client.close()
    assert gh.rejections == []
    (run,) = gh.runs()
    assert run["conclusion"] == "neutral" and len(run["annotations"]) == 400


# ---------------------------------------------------------------------------- outside the diff
def test_only_lines_the_diff_shows_are_annotated_the_rest_are_listed(
        fake_github: Callable[..., FakeGitHub]) -> None:
    text = (PRS / FIXTURE).read_text(encoding="utf-8")
    changes = parse_diff(text)
    diff = DiffFilter.of(changes)
    path, ranges = next(iter(diff.right.items()))
    first, last = ranges[0]
    findings = [
        Finding("autofix", "inside", "m", path, first, first),
        Finding("autofix", "overlapping", "m", path, max(1, first - 3), first + 1),  # cut to the hunk
        Finding("autofix", "below every hunk", "m", path, 100_000, 100_001),
        Finding("autofix", "unchanged file", "m", "docs/untouched [v2].md", 7, 9, scores={"x": 1.0}),
    ]
    report = AnalyzerReport("autofix", "AutoFix", findings)
    gh = fake_github()
    pr = gh.add_pr(NUMBER, diff_text=text)
    gh.grant_token(TOKEN)
    from bot.github import GitHubSettings, token_client

    client = token_client(gh.base_url, TOKEN, GitHubSettings(write_interval_s=0.0))
    try:
        reporter = CheckRunReporter(client)
        reporter.start(Target(repo=gh.repo, number=NUMBER, head_sha=pr.head_sha, diff=diff), {"autofix": "AutoFix"})
        out = reporter.publish(report)
    finally:
        client.close()
    assert out is not None and gh.rejections == []
    (run,) = gh.runs()
    shown = {f["filename"]: diff_lines(f["patch"])["RIGHT"] for f in pr.files if f.get("patch")}
    assert [a["title"] for a in run["annotations"]] == ["inside", "overlapping"]
    for a in run["annotations"]:  # the fake's own reading of the patches
        assert set(range(a["start_line"], a["end_line"] + 1)) <= shown[a["path"]]
    assert run["annotations"][1]["start_line"] == first
    summary = run["output"]["summary"]
    assert "### Outside the diff" in summary and "2 findings are on lines" in summary
    shown_path = path.replace("_", "\\_")  # a path is not rtcbot's text: it renders literally (inert)
    assert (f"[{shown_path}:100000-100001](/{gh.repo}/blob/{pr.head_sha}/{path}#L100000-L100001) "
            "below every hunk") in summary
    assert (f"[docs/untouched \\[v2\\].md:7-9](/{gh.repo}/blob/{pr.head_sha}/docs/untouched%20%5Bv2%5D.md"
            "#L7-L9) unchanged file (x 1.00)") in summary
    # without a diff (a caller that has none) every finding is annotated, as before
    assert len(check_run.render(report).annotations) == 4


def test_the_outside_list_is_short() -> None:
    findings = [Finding("autofix", f"f{i}", "m", "other.py", i + 1) for i in range(check_run.OUTSIDE_SHOWN + 7)]
    out = check_run.render(AnalyzerReport("autofix", "AutoFix", findings),
                           target=Target(diff=DiffFilter(right={"a.py": ((1, 5),)})))
    assert out.annotations == []
    assert out.summary.count("\n- ") == check_run.OUTSIDE_SHOWN + 1
    assert "- … and 7 more (every finding is in the details below)." in out.summary


# ---------------------------------------------------------------------------- over 3,000 files
def unlisted_files_note(listed: int, changed_files: Callable[[], int | None]) -> str | None:
    unlisted = unlisted_files(listed, changed_files)
    return unlisted.note if unlisted else None


def test_the_unlisted_files_note() -> None:
    assert unlisted_files_note(2999, lambda: pytest.fail("not asked below 3,000")) is None
    assert unlisted_files_note(3000, lambda: 3000) is None
    assert unlisted_files_note(3000, lambda: 4321) == (
        "This pull request changes 4,321 files, but GitHub lists at most 3,000: 1,321 files were not analysed.")

    def down() -> int:
        raise RuntimeError("GitHub answered 502: Bad Gateway")

    note = unlisted_files_note(3000, down)
    assert note is not None and "listed 3,000 here: any files after those were not analysed" in note
    assert "could not be read: GitHub answered 502: Bad Gateway" in note


def _big_pr(gh: FakeGitHub, extra: int) -> None:
    files = files_from_diff((PRS / FIXTURE).read_text(encoding="utf-8"))
    files += [{"sha": f"{i:040x}", "filename": f"assets/img{i}.png", "status": "added", "additions": 0,
               "deletions": 0, "changes": 0} for i in range(extra)]  # binary: no patch
    gh.add_pr(NUMBER, files=files)


@pytest.mark.slow
def test_a_pr_over_3000_files_says_so_on_the_app_and_the_action(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    llm = scripted_llm(RoundTrips())  # passes every baseline: its hunks are annotated
    app_gh, action_gh = fake_github(), fake_github()
    for gh in (app_gh, action_gh):
        _big_pr(gh, 3004)
    action_gh.grant_token(TOKEN)
    total = len(app_gh.pulls[NUMBER].files)
    app, action = _app(tmp_path, app_gh, llm), _action(tmp_path, action_gh, llm)
    final: dict[str, Any] = app[-1]
    note = (f"> **Note:** This pull request changes {total:,} files, but GitHub lists at most 3,000: "
            f"{total - 3000:,} files were not analysed.")
    verdict, rest = final["output"]["summary"].split("\n\n", 1)
    assert verdict.startswith("**") and rest.startswith(note)  # the verdict, then the note
    assert _size(final["output"]["summary"]) <= 65_535 and final["output"]["annotations"]
    assert json.dumps(action, sort_keys=True) == json.dumps(app, sort_keys=True)
    summary = (tmp_path / "action" / "summary.md").read_text(encoding="utf-8")
    assert f"{total - 3000:,} files were not analysed" in summary  # the step summary says it too
