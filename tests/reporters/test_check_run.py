"""The one check-run renderer (reporters/check_run.py): GitHub's limits (bytes, 50 annotations
a request, 255-character titles), batches, conclusions, the request bodies both surfaces send,
and the reporter against the fake GitHub.

Attacks and abuse covered: an oversized report (multi-byte text, huge evidence, thousands of
skipped files) never makes GitHub answer 422 — outputs are cut under 65,535 *bytes* with code
blocks and <details> closed; annotation text is bounded in bytes too.
"""

from __future__ import annotations

from collections.abc import Callable

from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from reporters import check_run
from reporters.base import Target
from reporters.check_run import CheckRunReporter
from tests.fakes.github_server import FakeGitHub


def report(n: int = 3, evidence_chars: int = 10) -> AnalyzerReport:
    findings = [Finding("editing_rtc", f"hunk {i}", f"msg {i}", "a.py", i * 10 + 1, i * 10 + 3,
                        scores={"rtc": i / max(n, 1)}, evidence={"descriptions": ["x" * evidence_chars]})
                for i in range(n)]
    return AnalyzerReport("editing_rtc", "EditingRTC", findings, scores={"rtc": 0.4},
                          skipped=[Skipped("logo.png", "binary file")])


def test_render_maps_findings_to_annotations_and_a_summary() -> None:
    out = check_run.render(report())
    assert out.conclusion == "neutral"
    assert [(a["path"], a["start_line"], a["end_line"]) for a in out.annotations] == [
        ("a.py", 1, 3), ("a.py", 11, 13), ("a.py", 21, 23)]
    assert all(a["annotation_level"] == "notice" for a in out.annotations)
    # the verdict says what each figure counts; no "· 3 findings" after it (they are hunks), and
    # no "EditingRTC: " before it (GitHub shows the title after the check's name)
    assert out.title == "2 of 3 changes explained; 1 unclear"
    assert "`logo.png`: binary file" in out.summary
    assert "<details><summary>What the model understood of the lowest RTC</summary>" in out.summary
    assert out.summary.startswith("**2 of 3 changes explained; 1 unclear.**")
    # the model's figures, in a closed fold; evidence as Markdown, not JSON
    assert "<details><summary>How it was measured (the model's figures and notes)</summary>\n\n" in out.summary
    assert "\n- overall: RTC 0.40" in out.summary
    assert "[\"" not in out.summary
    assert out.text.startswith("## EditingRTC")


def test_annotations_in_batches_of_50_and_the_last_update_completes() -> None:
    out = check_run.render(report(120))
    assert [len(b) for b in out.batches()] == [50, 50, 20]
    bodies = check_run.update_bodies(out)
    assert [len(b["output"].get("annotations", [])) for b in bodies] == [50, 50, 20]
    assert all("conclusion" not in b for b in bodies[:-1])
    assert bodies[-1]["status"] == "completed" and bodies[-1]["conclusion"] == "neutral"
    assert bodies[-1]["actions"] == [check_run.rerun_action()]
    (only,) = check_run.update_bodies(check_run.render(AnalyzerReport("x", "X")))
    assert "annotations" not in only["output"] and only["conclusion"] == "neutral"


def test_create_body_carries_the_pr_for_forks() -> None:
    body = check_run.create_body(Target(repo="o/r", number=12, head_sha="abc"), "crscore", "CRScore")
    assert body == {"name": "rtcbot / CRScore", "head_sha": "abc", "external_id": "12:crscore",
                    "status": "in_progress"}


def test_summary_is_cut_cleanly_under_the_byte_limit() -> None:
    big = report(5, evidence_chars=30_000)
    big.skipped = [Skipped(f"vendor/fïlé{i}.bin", "binäre Datei ✓") for i in range(5000)]
    out = check_run.render(big)
    assert len(out.summary.encode("utf-8")) <= check_run.MAX_OUTPUT_BYTES
    assert "lines) left out." in out.summary
    assert out.summary.count("```") % 2 == 0
    assert out.summary.count("<details>") == out.summary.count("</details>")
    wide = "ünïcødé ✓ line\n" * 10_000  # ~190 KB in UTF-8, 150,000 characters
    cut = check_run.cut(wide)
    assert len(cut.encode("utf-8")) <= 65_535 and cut.endswith("(6,884 lines) left out.") and "line\nünï" in cut
    assert check_run.cut("short") == "short"


def test_gate_decides_the_conclusion_and_says_why() -> None:
    out = check_run.render(report(), conclusion="failure", crossed=["editing_rtc.rtc<0.5 (rtc is 0.40)"])
    assert out.conclusion == "failure"
    assert "**Threshold crossed:** editing_rtc.rtc<0.5 (rtc is 0.40)" in out.summary
    assert check_run.render(report()).conclusion == "neutral"  # no gate: never a failure


def test_error_report_fix_and_long_title() -> None:
    r = AnalyzerReport("autofix", "AutoFix", error="semgrep is not installed")
    out = check_run.render(r)
    assert out.title == "could not run" and "semgrep is not installed" in out.summary
    f = Finding("autofix", "t" * 400, "use a safe call", "b.py", 5, 5, level="warning",
                fix=Fix("b.py", 5, 5, "safe()\n"), evidence={"big": "é" * 70_000})
    ann = check_run.annotation_of(f)
    assert ann is not None and len(ann["title"].encode()) == 255 and ann["title"].endswith("t…")
    assert "```suggestion\nsafe()\n```" in ann["message"]
    assert len(ann["raw_details"].encode("utf-8")) <= check_run.MAX_ANNOTATION_BYTES
    assert check_run.annotation_of(Finding("x", "no place")) is None


def test_the_summary_says_the_samples_and_their_bill_never_what_the_caches_spared() -> None:
    bill = {"samples": 15, "billed_requests": 5, "billed_prompt_tokens": 2345, "billed_completion_tokens": 678}
    r = report()
    r.usage = {"requests": 5, "tokens": 900, "cache_hits": 3, "cached_prompt_tokens": 111, **bill}
    summary = check_run.render(r).summary
    assert "LLM work: 15 samples (5 requests, 2,345 prompt and 678 completion tokens)" in summary
    assert "900" not in summary and "cache" not in summary and "111" not in summary
    r.usage = {"requests": 0, "tokens": 0, "cache_hits": 15, **bill}  # every answer cached
    assert check_run.render(r).summary == summary
    r.usage = {"requests": 5, "tokens": 900, "samples": 15}  # no bill (a report of before bills)
    assert "LLM work: 15 samples\n" in check_run.render(r).summary + "\n"


def test_reporter_opens_and_completes_runs_on_the_fake_github(
        fake_github: Callable[..., FakeGitHub]) -> None:
    from bot.github import GitHubSettings, token_client

    gh = fake_github()
    gh.grant_token("t0ken")
    gh.add_pr(3, files=[])
    client = token_client(gh.base_url, "t0ken", GitHubSettings(write_interval_s=0.0))
    target = Target(repo=gh.repo, number=3, head_sha=gh.pulls[3].head_sha)
    reporter = CheckRunReporter(client, gate=lambda r: ("failure", ["total.findings>0"]))
    reporter.start(target, {"editing_rtc": "EditingRTC", "crscore": "CRScore"})
    assert sorted(r["name"] for r in gh.runs()) == ["rtcbot / CRScore", "rtcbot / EditingRTC"]
    out = reporter.publish(report(60))
    assert out is not None and out.conclusion == "failure"
    reporter.flush()
    runs = {r["name"]: r for r in gh.runs()}
    edit, crs = runs["rtcbot / EditingRTC"], runs["rtcbot / CRScore"]
    assert edit["conclusion"] == "failure" and len(edit["annotations"]) == 60
    assert edit["external_id"] == "3:editing_rtc"
    # a run not published stays open: a surface that cannot finish completes it (bot/core/checks.py's
    # fail, tests/bot/test_action.py's "rtcbot could not finish")
    assert crs["status"] == "in_progress" and crs.get("conclusion") is None
    assert gh.rejections == []
