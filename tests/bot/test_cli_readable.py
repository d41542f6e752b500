"""`rtcbot review` as a pull request's author reads it (issue #43): what was not analysed said
once, in a few lines; an analyzer that did not run says "not run" and why, never a result; every
finding carries its fingerprint, and the line shown is the one that dismisses it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzers.report import Finding
from bot.entry import main
from tests.bot.test_cli import llm_args
from tests.fakes.llm_server import ScriptedLLM, describes_only

NON_CODE = (".github/workflows/ci.yml", ".github/workflows/release.yml", "deploy/values.yaml", "pyproject.toml")


def _hunks(path: str, n: int) -> str:
    out = [f"diff --git a/{path} b/{path}", "index 1111111..2222222 100644", f"--- a/{path}", f"+++ b/{path}"]
    for i in range(n):
        start = 1 + i * 20
        out += [f"@@ -{start},2 +{start},2 @@", f" key{i}: keep", f"-value{i}: old", f"+value{i}: new"]
    return "\n".join(out)


def change() -> str:
    """12 non-code hunks in 4 files, one Python hunk."""
    py = ("diff --git a/app.py b/app.py\nindex 3333333..4444444 100644\n--- a/app.py\n+++ b/app.py\n"
          "@@ -1,2 +1,2 @@\n def area(r):\n-    return 3.14 * r * r\n+    return math.pi * r * r")
    return "\n".join([*(_hunks(p, 3) for p in NON_CODE), py]) + "\n"


answer = describes_only("Uses math.pi instead of a rounded constant for the area of a circle.")


def review(srv: ScriptedLLM, patch: Path, fmt: str, *more: str) -> str:
    r = CliRunner().invoke(main, ["review", str(patch), "--format", fmt, *llm_args(srv), "--no-cache", "-q", *more])
    assert r.exit_code == 0, r.output
    return r.stdout


def section(md: str, heading: str) -> list[str]:
    """The lines of a "## heading" section, up to the next heading."""
    part = md.split(f"## {heading}\n", 1)[1]
    return re.split(r"\n#{1,3} ", part, maxsplit=1)[0].splitlines()


@pytest.mark.slow
@pytest.mark.model  # CRScore and Review embed their sentences
def test_all_analyzers_on_a_mostly_non_code_change_read_as_the_author_needs(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(answer)
    patch = tmp_path / "change.diff"
    patch.write_text(change())
    md = review(srv, patch, "markdown", "--analyzers", "all")
    listed = section(md, "Not analysed")
    items = [ln for ln in listed if ln.startswith("- ")]
    assert 1 <= len(items) <= 5, listed  # at most 5 lines, each file once
    for path in NON_CODE:
        assert sum(f"`{path}`" in ln for ln in items) == 1, (path, items)
    assert all(ln.endswith("— 3 hunks (EditingRTC, Review)") for ln in items), items
    assert "| SynthesisRTC | not run: no test command | not run |" in md
    assert "**not run: no test command**" in md
    assert "over no findings" not in md and "Skipped" not in md
    data = json.loads(review(srv, patch, "json", "--analyzers", "all"))
    findings = [f for r in data["reports"] for f in r["findings"]]
    assert findings  # the Python hunk, at least
    for f in findings:  # the value a dismissal names, as Finding.fingerprint gives it
        assert f["fingerprint"] == Finding.from_dict(f).fingerprint()
    assert {e["what"]: e["hunks"] for e in data["not_analysed"]} == dict.fromkeys(NON_CODE, 3)
    assert next(r for r in data["reports"] if r["name"] == "synthesis_rtc")["not_run"] == "no test command"


def test_the_fingerprint_shown_is_the_line_that_dismisses_the_finding(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(answer)
    patch, dismissals = tmp_path / "change.diff", tmp_path / "rtcbot-dismissals.yml"
    patch.write_text(change())
    (finding,) = json.loads(review(srv, patch, "json"))["reports"][0]["findings"]
    md = review(srv, patch, "markdown")
    line = f"finding: {finding['fingerprint']}"
    assert f"`{line}`" in md and f"  - {line}\n" in md  # on the finding, and in the entry to copy
    assert finding["fingerprint"] in review(srv, patch, "text")
    dismissals.write_text(f"dismissals:\n  - {line}\n    by: alice\n    date: 2026-11-27\n")
    (rep,) = json.loads(review(srv, patch, "json", "--dismissals", str(dismissals)))["reports"]
    assert rep["findings"] == [] and len(rep["dismissed"]) == 1
    assert finding["fingerprint"] in rep["dismissed"][0]
