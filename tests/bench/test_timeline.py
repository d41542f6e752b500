"""The E2E timelines and the summary over a set of PRs (bench/timeline.py, bench/e2e_wide.py,
bench/wide_set.py): rounds from the server's log, the stage that made a PR slow, the maths."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from analyzers.spans import Span
from bench import PRS, e2e_floor, e2e_wide, timeline, wide_set

FWD = {"messages": [{"role": "user", "content": "[old]\nx\n[new]\ny"}]}
BWD = {"messages": [{"role": "user", "content": "[edit description]\nEdit."}]}
CLAIMS = {"messages": [{"role": "user", "content": "Summary of changes:\n…\nImplications"}]}
FIX = {"messages": [{"role": "system", "content": "Task: fix a security finding."}]}


def test_rounds_come_from_the_servers_log_and_tools_from_spans() -> None:
    t0 = 100.0
    served = [(0, 100.3, 100.7), (1, 100.3, 100.7), (2, 100.7, 101.1), (3, 100.31, 100.71)]
    spans = [Span("semgrep", 100.0, 100.25), Span("smells java", 100.05, 100.1)]
    t = timeline.build("pr", t0, 1.2, 0.8, [FWD, FWD, BWD, CLAIMS], served, spans)
    by = {e.stage: e for e in t.entries}
    assert by["EditingRTC forward"].count == 2
    assert (by["EditingRTC forward"].start, by["EditingRTC forward"].end) == pytest.approx((0.3, 0.7))
    assert by["EditingRTC backward"].count == 1 and by["CRScore claims"].count == 1
    assert by["smells java (PMD)"].end == pytest.approx(0.1)
    assert [e.stage for e in t.entries][0] == "semgrep"  # by start
    assert t.first_request == pytest.approx(0.3)
    assert t.ratio == pytest.approx(1.5)
    # 0.3 s before the first request (Semgrep ran 0.25 s of it) is the largest part over the floor
    assert t.idle() == [("before the first request", 0.0, pytest.approx(0.3)),
                        ("after the last answer", pytest.approx(1.1), 1.2)]
    assert t.slow_stage() == "before the first request 0.30 s; semgrep ran 0.25 s of it"
    text = timeline.render(t)
    assert "first request at 0.300 s" in text and "EditingRTC forward ×2" in text
    assert text.startswith("```text\n") and text.endswith("\n```")


def test_rounds_longer_than_the_floor_are_named_when_they_are_the_larger_part() -> None:
    served = [(0, 0.01, 0.6), (1, 0.6, 1.3)]  # two rounds of 0.6 and 0.7 s against a 0.8 s floor
    t = timeline.build("slow-llm", 0.0, 1.32, 0.8, [FWD, BWD], served, [])
    assert t.slow_stage() == "LLM rounds 0.49 s longer than the floor"
    assert timeline.llm_round(FIX) == "AutoFix fix"


def test_summary_is_the_mean_median_and_worst_of_the_ratios() -> None:
    ts = [timeline.Timeline("a", 1.0, 0.8), timeline.Timeline("b", 1.2, 0.8),
          timeline.Timeline("c", 2.0, 0.8), timeline.Timeline("no-llm", 0.5, 0.0)]
    s = timeline.summarise(ts)
    assert s is not None
    assert s.mean == pytest.approx((1.25 + 1.5 + 2.5) / 3)
    assert s.median == pytest.approx(1.5)
    assert s.worst.name == "c"
    assert s.aggregate == pytest.approx(4.2 / 2.4)
    assert [t.name for t in timeline.worst(ts, 2)] == ["c", "b"]
    assert timeline.summarise([timeline.Timeline("x", 1.0, 0.0)]) is None


def test_the_wide_set_lists_enough_permissively_licensed_real_prs() -> None:
    listed = wide_set.manifest()
    assert len(listed) >= 30 and len({s.repo for s in listed}) >= 6
    assert {s.language for s in listed} == {"python", "java", "javascript"}
    assert {s.licence for s in listed} <= {"MIT", "BSD-3-Clause", "BSD-2-Clause", "Apache-2.0"}
    assert len({s.name for s in listed}) == len(listed)


def test_the_wide_set_is_in_the_repository_with_every_licence() -> None:
    built, missing = wide_set.load()
    assert missing == [] and len(built) == len(wide_set.manifest())
    assert all(pr.diff.startswith("diff --git ") and pr.head for pr in built)
    licences = {p.name for p in (wide_set.WIDE / "licences").iterdir()}
    for repo in {pr.source.repo for pr in built}:  # each repository's licence text, by its name
        assert any(name.startswith(repo.replace("/", "-") + "-LICENSE") for name in licences), repo


def test_a_listed_commit_is_built_from_a_clone_with_its_files_at_the_head(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (repo / "a.py").write_text("x = 1\n")
    (repo / "gone.py").write_text("y = 1\n")
    git("add", ".")
    git("commit", "-qm", "one")
    (repo / "a.py").write_text("x = 2\n")
    (repo / "gone.py").unlink()
    git("add", "-A")
    git("commit", "-qm", "two")
    sha = git("rev-parse", "HEAD").strip()
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "SOURCES.md").write_text("| name | repository | commit | licence | language |\n|---|---|---|---|---|\n"
                                       f"| demo-1 | o/demo | {sha} | MIT | python |\n"
                                       f"| demo-2 | o/other | {'0' * 40} | MIT | java |\n")
    assert wide_set.build({"o/demo": repo / ".git"}, folder) == ["demo-1"]
    built, missing = wide_set.load(folder)
    assert missing == ["demo-2"]
    assert built[0].head == {"a.py": "x = 2\n"}  # the deleted file has no head
    assert "-x = 1\n+x = 2" in built[0].diff
    assert json.loads((folder / "demo-1.head.json").read_text()) == built[0].head


@pytest.mark.slow  # the wide bench on a real PR's hunks: ~10 s of CPU
def test_the_wide_run_gives_each_pr_a_timeline_from_real_requests() -> None:
    diff = sorted(PRS.glob("more-itertools-*.diff"))[0]
    pr = e2e_floor.load_prs([diff], synthetic=False)[0]
    (res, t), = e2e_wide.measure([pr], names=("editing_rtc",), delay_s=0.0)
    rounds = {e.stage: e.count for e in t.entries if e.stage.startswith("EditingRTC")}
    assert sum(rounds.values()) == res.whole.requests == 5 * pr.code_hunks
    assert t.floor_s == 0.0 and t.wall == res.whole.wall  # no latency: a zero floor
    rows = e2e_wide.rows_from([(res, t)], {pr.name: "python"}, 1)
    assert rows[0]["met"] is False and "no PR made an LLM request" in rows[0]["value"]
