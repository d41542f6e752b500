"""Fingerprints with context (issue #38, item 3): a dismissal names one finding in its place.

Attack covered: a fingerprint was analyzer + rule + path + the flagged line's text, so
`subprocess.call(cmd, shell=True)` in `cleanup()` (a constant command) and in `run_user()` (the
request's) shared one: a team that dismissed the first also hid the second — and any copy the
pull request's author added later — and `fail_on: autofix.findings>0` passed. A fingerprint now
names the finding's content and its place (the enclosing definition and the occurrence among
identical lines there), so the twin and a later copy are findings of their own, and moving the
whole definition keeps the dismissal. An old-style fingerprint dismisses nothing (issue #51), and
the output says which finding it meant. Played through
`rtcbot review --dismissals FILE` on real Semgrep (the team's file; the author writes the code).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyzers.report import Finding
from tests.fakes.llm_server import ScriptedLLM
from tests.security.test_fail_closed import review
from tests.security.test_semgrep_gates import _semgrep

pytestmark = pytest.mark.slow
GATE = "autofix.findings>0"
RULE = "python-shell-injection"
CLEANUP = '''def cleanup():
    cmd = "rm -rf /tmp/cache"
    subprocess.call(cmd, shell=True)
'''
RUN_USER = '''def run_user(request):
    cmd = request.args["cmd"]
    subprocess.call(cmd, shell=True)
'''
TWINS = f"import shlex\nimport subprocess\n\n{CLEANUP}\n\n{RUN_USER}"  # cleanup's call at line 6, run_user's at 11
FIELDS = {f.name for f in dataclasses.fields(Finding)}


def finding(data: dict[str, Any]) -> Finding:
    """A finding of the JSON output (whatever display fields the output adds)."""
    return Finding.from_dict({k: v for k, v in data.items() if k in FIELDS})


def old_style(f: Finding) -> str:
    """The fingerprint as b3e8eed made it: analyzer, rule, path and content, nothing else."""
    h = hashlib.sha256()
    for part in (f.analyzer, f.rule_id or "", f.path or "", f.key):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:16]


def dismissals_file(tmp_path: Path, fp: str) -> Path:
    path = tmp_path / "rtcbot-dismissals.yml"
    path.write_text(f"dismissals:\n  - finding: {fp}\n    by: alice\n    date: 2026-11-26\n"
                    "    reason: the command is a constant\n")
    return path


def run(tmp_path: Path, llm: ScriptedLLM, text: str, *more: str) -> tuple[int, dict[str, Any]]:
    """`rtcbot review` of a change adding app.py with `text` (AutoFix, the gate on its findings)."""
    r = review(tmp_path, [("app.py", text)], GATE, "--analyzers", "autofix", "--llm-base-url", llm.base_url,
               "--model", llm.model, *more, limit=None)
    (rep,) = json.loads(r.stdout)["reports"]
    return r.exit_code, rep


def lines(rep: dict[str, Any]) -> list[int]:
    return sorted(f["start_line"] for f in rep["findings"] if f["rule_id"] == RULE)


def test_dismissing_the_twin_in_cleanup_leaves_run_user_and_later_copies_and_survives_a_move(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    llm = scripted_llm("NOT_VULNERABLE: test input")
    code, rep = run(tmp_path, llm, TWINS)
    assert code == 1 and lines(rep) == [6, 11]
    cleanup, run_user = sorted((finding(f) for f in rep["findings"]), key=lambda f: f.start_line or 0)
    dismiss = dismissals_file(tmp_path, cleanup.fingerprint())

    code, rep = run(tmp_path, llm, TWINS, "--dismissals", str(dismiss))
    assert lines(rep) == [11]  # run_user's call is still a finding ...
    assert code == 1  # ... and the gate fails on it
    assert [d.split(" ", 1)[0] for d in rep["dismissed"]] == ["app.py:6"]
    assert f"(fingerprint {cleanup.fingerprint()})" in rep["dismissed"][0]
    assert cleanup.fingerprint() != run_user.fingerprint()  # the twins are two findings, by their places
    assert cleanup.place is not None and cleanup.place.definition == "function cleanup"

    # the author adds copies: one below in cleanup(), one in a new function: neither pre-dismissed,
    # and the copy in cleanup() voids the dismissal there (issue #51: the count of identical lines)
    copied = TWINS.replace(CLEANUP, CLEANUP + "    subprocess.call(cmd, shell=True)\n") + (
        '\n\ndef again(request):\n    cmd = request.form["cmd"]\n    subprocess.call(cmd, shell=True)\n')
    code, rep = run(tmp_path, llm, copied, "--dismissals", str(dismiss))
    assert code == 1 and lines(rep) == [6, 7, 12, 17] and rep["dismissed"] == []
    assert any("no longer covers app.py:6" in n and "holds 2 now" in n for n in rep["notes"])

    # the whole of cleanup() moved below run_user(), lines added above: still dismissed
    moved = f'"""Jobs."""\nimport subprocess\n\n\n{RUN_USER}\n\n# the clean-up, last\n{CLEANUP}'
    code, rep = run(tmp_path, llm, moved, "--dismissals", str(dismiss))
    assert code == 1 and lines(rep) == [7]  # run_user's, now at line 7
    assert [d.split(" ", 1)[0] for d in rep["dismissed"]] == ["app.py:13"]


def test_an_old_fingerprint_dismisses_nothing_and_the_note_names_the_finding_it_meant(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """Issue #51: an old-style (content-only) fingerprint named "the one finding" among those
    reported, and a copy in another function was that one whenever the original was not (its
    lines unchanged): it dismisses nothing now, and the note says which finding it meant."""
    _semgrep()
    llm = scripted_llm("NOT_VULNERABLE: test input")
    alone = f"import subprocess\n\n\n{RUN_USER}"
    _, rep = run(tmp_path, llm, alone)
    (only,) = [finding(f) for f in rep["findings"]]
    old = old_style(only)
    code, rep = run(tmp_path, llm, alone, "--dismissals", str(dismissals_file(tmp_path, old)))
    assert code == 1 and lines(rep) == [6] and rep["dismissed"] == []
    assert (f"The dismissal of {old} by @alice no longer covers app.py:6 (fingerprint {only.fingerprint()}): it is "
            "an old-style fingerprint (content only), which no longer dismisses anything") in " ".join(rep["notes"])

    # the same old fingerprint once the file holds the twin: both shown, both named
    code, rep = run(tmp_path, llm, TWINS, "--dismissals", str(dismissals_file(tmp_path, old)))
    assert code == 1 and lines(rep) == [6, 11] and rep["dismissed"] == []
    said = [n for n in rep["notes"] if old in n]
    assert len(said) == 2 and "app.py:6" in said[0] and "app.py:11" in said[1]
    assert old == only.legacy_fingerprint() != only.fingerprint()


def test_places_in_brace_languages_tell_twins_apart_and_survive_a_move() -> None:
    """The same rule for Java, JavaScript and TypeScript (a scan of braces)."""
    from analyzers.code.place import places

    a = "function cleanup() {\n  exec(cmd);\n}\n"
    b = "function runUser(req) {\n  exec(cmd);\n  exec(cmd);\n}\n"
    got = places(a + b, "javascript", [(2, 2), (5, 5), (6, 6)])
    assert [(p.definition, p.occurrence) for p in got if p] == [
        ("function cleanup", 0), ("function runUser", 0), ("function runUser", 1)]
    moved = places("// moved\n" + b + a, "javascript", [(7, 7)])
    assert moved == [got[0]]
