"""What was not analysed, said once (reporters/unanalysed.py): a file once with its reasons, the
hunks any one analysis left out of it (two analyses naming the same hunks count them once), which
analyses when not all; an item in no file (a comment, "LLM claims") its own entry; at most five
lines, the rest in a closed fold."""

from __future__ import annotations

from analyzers.report import AnalyzerReport, Skipped
from reporters import unanalysed


def yaml_hunks(path: str, item: str) -> list[Skipped]:
    return [Skipped(item.format(path=path, i=i), "not code (yaml)", "policy", path) for i in range(3)]


def test_a_file_is_one_entry_whatever_each_analysis_calls_its_hunks() -> None:
    rtc = AnalyzerReport("editing_rtc", "EditingRTC", skipped=[
        *yaml_hunks("ci.yml", "{path} @@ -{i},2 +{i},2 @@"), Skipped("old.txt", "file deleted", "policy", "old.txt")])
    review = AnalyzerReport("review", "Review", skipped=[
        *yaml_hunks("ci.yml", "{path}:{i}"), Skipped("old.txt", "file deleted", "policy", "old.txt")])
    crscore = AnalyzerReport("crscore", "CRScore", skipped=[
        Skipped("comment at ci.yml:3", "written by rtcbot: its own comments are not scored", "policy"),
        Skipped("old.txt", "file deleted", "policy", "old.txt")])
    entries = unanalysed.collect([rtc, review, crscore])
    assert [(e.what, e.reasons, e.hunks, e.analyzers, e.failed) for e in entries] == [
        ("ci.yml", ["not code (yaml)"], 3, ["EditingRTC", "Review"], False),
        ("old.txt", ["file deleted"], 0, ["EditingRTC", "Review", "CRScore"], False),
        ("comment at ci.yml:3", ["written by rtcbot: its own comments are not scored"], 0, ["CRScore"], False)]
    lines = unanalysed.markdown([rtc, review, crscore])
    assert lines[:5] == ["## Not analysed", "", "- `ci.yml`: not code (yaml) — 3 hunks (EditingRTC, Review)",
                         "- `old.txt`: file deleted",  # every analysis: not named
                         "- `comment at ci.yml:3`: written by rtcbot: its own comments are not scored (CRScore)"]
    assert "<details>" not in "\n".join(lines)  # three lines: no fold


def test_past_five_files_one_line_per_reason_and_every_file_in_the_fold() -> None:
    skipped = [Skipped(f"req{i}.txt", "file deleted", "policy", f"req{i}.txt") for i in range(11)]
    skipped += [s for p in ("a.yml", "b.yml") for s in yaml_hunks(p, "{path}:{i}")]
    skipped += [Skipped("big.py @@ -1 +1 @@", "hunk over 4000 characters", "failed", "big.py")]
    lines = unanalysed.markdown([AnalyzerReport("editing_rtc", "EditingRTC", skipped=skipped)])
    shown = lines[2:lines.index("<details><summary>Every file not analysed (14)</summary>")]
    assert [ln for ln in shown if ln] == [
        "- **file deleted**: 11 files — `req0.txt`, `req1.txt`, `req2.txt` and 8 more",
        "- **not code (yaml)**: 2 files, 6 hunks — `a.yml`, `b.yml`",
        "- **hunk over 4000 characters**: 1 file, 1 hunk — `big.py`"]
    assert lines[-2:] == ["</details>", ""] and sum(ln.startswith("- `") for ln in lines) == 14
    assert unanalysed.data([AnalyzerReport("x", "X", skipped=skipped)])[-1] == {
        "what": "big.py", "reasons": ["hunk over 4000 characters"], "hunks": 1, "analyzers": ["X"], "failed": True}
    many = [Skipped(f"f{i}", f"reason {i}", "policy", f"f{i}") for i in range(8)]
    reasons = unanalysed.reason_lines(unanalysed.collect([AnalyzerReport("x", "X", skipped=many)]))
    assert len(reasons) == 5 and reasons[-1] == "- … and 4 more reasons (in the list below)"
