"""Every author-controlled transformation of the catalogue, on every gate (issue #51, item 10).

A metamorphic harness: take a change a gate fails on — a vulnerable file of the repository's
fixtures (Python, Java, JavaScript) for `fail_on: autofix.findings>0`, an authentication bypass
with an instruction planted for the describing model for `fail_on: editing_rtc.rtc<0.5` — apply
one transformation the pull request's author controls (tests/security/catalogue.py: move the file,
rename it, mark its lines, copy a dismissed line, add a same-named twin, disguise the quote) and
assert that the gate stays red. What the author controls can only add findings: where the
transformation keeps the fixture's code, no finding of it may disappear (or the file is said to
be unanalysed, and the gate fails closed on it).

Played through `rtcbot review` (real Semgrep, the scripted model) for every line of the
catalogue, and through the Action and the App (the fake GitHub) for a sample of them.
"""

from __future__ import annotations

import difflib
import json
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.entry import main
from tests.bot.app_support import App
from tests.bot.test_action import EVENT, TOKEN, read_outputs
from tests.bot.test_jobs import finished, world  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM
from tests.security.catalogue import CATALOGUE, Change, Gate, Transformation, cases, findings_fixtures
from tests.security.test_action import action
from tests.security.test_fingerprints import dismissals_file, finding
from tests.security.test_leak_disguised import _model
from tests.security.test_semgrep_gates import _semgrep

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------------- a change → a review
def patch_of(base: Mapping[str, str], head: Mapping[str, str]) -> str:
    """A git patch from `base` to `head` (new, changed and deleted files)."""
    out: list[str] = []
    for path in sorted(set(base) | set(head)):
        old, new = base.get(path), head.get(path)
        if old == new:
            continue
        a = f"a/{path}" if old is not None else "/dev/null"
        b = f"b/{path}" if new is not None else "/dev/null"
        out.append(f"diff --git a/{path} b/{path}\n")
        if old is None:
            out.append("new file mode 100644\n")
        if new is None:
            out.append("deleted file mode 100644\n")
        out.extend(difflib.unified_diff((old or "").splitlines(True), (new or "").splitlines(True), a, b))
    return "".join(out)


def review(tmp_path: Path, change: Change, gate: Gate, llm: ScriptedLLM,
           dismissals: Path | None = None) -> tuple[int, dict[str, Any], str]:
    """`rtcbot review` of `change` (a checkout at its head, its patch) gated by `gate`: the exit
    status, the one report and stderr."""
    work = tmp_path / uuid.uuid4().hex[:8]
    repo = work / "repo"
    for path, text in change.head.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    patch, cfg = work / "change.diff", work / "rtcbot.yml"
    patch.write_text(patch_of(change.base, change.head))
    cfg.write_text(f'fail_on: "{gate.value}"\n')
    analyzer = "autofix" if gate is Gate.FINDINGS else "editing-rtc"
    args = ["review", str(patch), "--repo", str(repo), "--config", str(cfg), "--format", "json", "--quiet",
            "--analyzers", analyzer, "--llm-base-url", llm.base_url, "--model", llm.model, "--no-cache"]
    if dismissals is not None:
        args += ["--dismissals", str(dismissals)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code in (0, 1), r.output  # a verdict, not bad input or a crash
    (rep,) = json.loads(r.stdout)["reports"]
    return r.exit_code, rep, r.stderr


def unanalysed(rep: dict[str, Any], path: str) -> bool:
    """The report says `path` could not be analysed (a gate fails closed over it)."""
    return any(s["item"] == path and s["kind"] == "failed" for s in rep.get("skipped", []))


# ------------------------------------------------------------------------- the models
def not_vulnerable(scripted_llm: Callable[..., ScriptedLLM]) -> ScriptedLLM:
    """AutoFix's model: it proposes no fix (the findings are what the gate reads)."""
    return scripted_llm("NOT_VULNERABLE: test input", model=f"nofix-{uuid.uuid4().hex[:8]}")


def obeying(change: Change, scripted_llm: Callable[..., ScriptedLLM]) -> ScriptedLLM:
    """EditingRTC's model obeys the planted instruction: forward, it quotes the planted line the
    way `change.quote` disguises it; backward, it re-creates the edit from its own description
    (the quote reads as the line) and never from the baseline "Edit."."""
    answer = _model(patch_of(change.base, change.head), change.quote(change.planted))
    return scripted_llm(answer, model=f"obeys-{uuid.uuid4().hex[:8]}")


# ------------------------------------------------------------------------- the catalogue itself
def test_the_catalogue_has_at_least_15_transformations_and_each_changes_its_fixture() -> None:
    assert len(CATALOGUE) >= 15
    assert len({t.name for t in CATALOGUE}) == len(CATALOGUE)
    for _, t, change in cases(Gate.FINDINGS) + cases(Gate.RTC):
        changed = t.apply(change)
        assert (changed.base, changed.head, changed.quote(change.planted)) != (
            change.base, change.head, change.planted), t.name


# ------------------------------------------------------------------------- the findings gate
FINDINGS_CASES = cases(Gate.FINDINGS)
_BEFORE: dict[str, int] = {}


def _findings_before(tmp_path: Path, change: Change, llm: ScriptedLLM) -> int:
    """The untransformed fixture: its gate fails, with this many findings (once per language)."""
    key = change.language.value
    if key not in _BEFORE:
        code, rep, _ = review(tmp_path, change, Gate.FINDINGS, llm)
        assert code == 1 and rep["findings"], f"the {key} fixture must fail the gate before any transformation"
        _BEFORE[key] = len(rep["findings"])
    return _BEFORE[key]


def _dismissal_of(tmp_path: Path, change: Change, llm: ScriptedLLM) -> Path | None:
    """A maintainer's dismissal of `change.dismissed` as it stood at the base (the base's file
    reviewed as it was added), or None when the transformation dismisses nothing."""
    if not change.dismissed:
        return None
    as_added = Change(change.language, {}, dict(change.base), change.target)
    _, rep, _ = review(tmp_path, as_added, Gate.FINDINGS, llm)
    lines = change.base[change.target].splitlines()
    (named,) = [finding(f) for f in rep["findings"]
                if lines[f["start_line"] - 1].strip() == change.dismissed][:1]
    return dismissals_file(tmp_path, named.fingerprint())


@pytest.mark.parametrize(("case", "t", "fixture"), FINDINGS_CASES, ids=[c[0] for c in FINDINGS_CASES])
def test_the_findings_gate_stays_red(case: str, t: Transformation, fixture: Change,
                                     scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    llm = not_vulnerable(scripted_llm)
    changed = t.apply(fixture)
    dismissals = _dismissal_of(tmp_path, changed, llm)
    code, rep, stderr = review(tmp_path, changed, Gate.FINDINGS, llm, dismissals)
    assert code == 1, f"{case}: the gate passed\n{stderr}"
    if t.keeps_fixture:
        before = _findings_before(tmp_path, fixture, llm)
        assert len(rep["findings"]) >= before or unanalysed(rep, changed.target), (
            f"{case}: {len(rep['findings'])} findings, {before} before the transformation")
    else:
        assert rep["findings"], f"{case}: the author's code is no finding"


# ------------------------------------------------------------------------- the round-trip gate
RTC_CASES = cases(Gate.RTC)


@pytest.mark.parametrize(("case", "t", "fixture"), RTC_CASES, ids=[c[0] for c in RTC_CASES])
def test_the_round_trip_gate_stays_red(case: str, t: Transformation, fixture: Change,
                                       scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    changed = t.apply(fixture)
    code, rep, stderr = review(tmp_path, changed, Gate.RTC, obeying(changed, scripted_llm))
    assert code == 1, f"{case}: the gate passed\n{stderr}"
    scores = [f["scores"].get("rtc") for f in rep["findings"] if "rtc" in f.get("scores", {})]
    assert all(s == 0.0 for s in scores), f"{case}: a leaking round trip scored {scores}"


def test_the_untransformed_fixtures_fail_their_gates(scripted_llm: Callable[..., ScriptedLLM],
                                                     tmp_path: Path) -> None:
    """The controls: before any transformation each fixture fails its gate."""
    _semgrep()
    llm = not_vulnerable(scripted_llm)
    for change in findings_fixtures().values():
        assert _findings_before(tmp_path, change, llm) > 0
    from tests.security.catalogue import rtc_fixture
    code, rep, _ = review(tmp_path, rtc_fixture(), Gate.RTC, obeying(rtc_fixture(), scripted_llm))
    assert code == 1 and rep["findings"][0]["scores"]["rtc"] == 0.0





# ------------------------------------------------------------------------- the Action and the App
SAMPLE = ("into vendor/ [python]", "renamed .mts [javascript]", "trailing nosemgrep [python]",
          "no extension, a shebang [python]")


def github_files(change: Change) -> list[dict[str, Any]]:
    """The change as GitHub's pull request files: each with its `patch` (no file header)."""
    out: list[dict[str, Any]] = []
    for path in sorted(set(change.base) | set(change.head)):
        old, new = change.base.get(path), change.head.get(path)
        if old == new:
            continue
        body = list(difflib.unified_diff((old or "").splitlines(True), (new or "").splitlines(True), n=3))[2:]
        added = sum(1 for ln in body if ln.startswith("+"))
        removed = sum(1 for ln in body if ln.startswith("-"))
        status = "added" if old is None else "removed" if new is None else "modified"
        out.append({"filename": path, "status": status, "additions": added, "deletions": removed,
                    "changes": added + removed, "patch": "".join(body)})
    return out


def _sampled() -> list[tuple[str, Transformation, Change]]:
    picked = {c[0]: c for c in FINDINGS_CASES if c[0] in SAMPLE}
    assert len(picked) == len(SAMPLE), "a sampled case left the catalogue"
    return [picked[name] for name in SAMPLE]


@pytest.mark.parametrize(("case", "t", "fixture"), _sampled(), ids=list(SAMPLE))
def test_the_action_keeps_the_findings_gate_red(
        case: str, t: Transformation, fixture: Change, fake_github: Callable[..., FakeGitHub],  # noqa: F811
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    changed = t.apply(fixture)
    pr = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]
    gh = fake_github(repo=pr["base"]["repo"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(pr["number"], files=github_files(changed), head_sha=pr["head"]["sha"])
    for path, text in changed.head.items():
        gh.set_file(path, text, ref=pr["head"]["sha"])
    proc = action(gh, not_vulnerable(scripted_llm), tmp_path, analyzers="autofix", fail_on=Gate.FINDINGS.value)
    assert proc.returncode == 1, f"{case}: the Action passed\n{proc.stderr[-3000:]}"
    (run,) = gh.check_runs.values()
    assert run["conclusion"] == "failure", case
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"


@pytest.mark.parametrize(("case", "t", "fixture"), _sampled()[::2], ids=list(SAMPLE[::2]))
def test_the_app_keeps_the_findings_check_run_red(case: str, t: Transformation, fixture: Change,
                                                  world: Callable[..., App]) -> None:  # noqa: F811
    _semgrep()
    changed = t.apply(fixture)
    w = world(analyzers=["autofix"])
    w.gh.set_file(".github/rtcbot.yml", f'fail_on: "{Gate.FINDINGS.value}"\n')
    pr = w.gh.add_pr(41, files=github_files(changed))
    for path, text in changed.head.items():
        w.gh.set_file(path, text, ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("opened", 41))
    w.run()
    run = finished(w, "rtcbot / AutoFix", sha=pr.head_sha)
    assert run["conclusion"] == "failure", f"{case}: the check run is {run['conclusion']}"
