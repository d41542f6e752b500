"""AutoFix end to end: real Semgrep, a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import difflib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from analyzers.autofix.analyzer import AutoFix
from analyzers.autofix.text import Edit, apply_edits, context_of, parse_fix_answer, pseudo_file, reindent
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext, Tools
from analyzers.semgrep.scan import find_semgrep
from analyzers.semgrep.targets import ALIAS_PREFIX
from tests.conftest import client_for
from tests.fakes.llm_server import last_user_text
from tests.support import require

APP = '''import ast, hashlib  # ast: the right fix's (a fix that uses a name not defined is refused)
import pickle
import subprocess


def calc(expr):
    return eval(expr)


def load(blob):
    return pickle.loads(blob)


def run(cmd):
    subprocess.call(cmd, shell=True)


def evaluate(text):
    exec(text)


def digest(data):
    return hashlib.md5(data).hexdigest()
'''

# what the scripted model answers, keyed by a piece of the flagged code
FIXES = {
    "eval(expr)": "Here you go:\n```python\nreturn ast.literal_eval(expr)\n```",  # right
    "pickle.loads": "```python\nreturn pickle.load(io.BytesIO(blob))\n```",  # wrong: still unsafe
    "shell=True": "```python\nsubprocess.call(cmd.split(), shell=False\n```",  # unparsable
    "exec(text)": "NOT_VULNERABLE: only trusted test code reaches this function.",
    "hashlib.md5": "```python\nreturn subprocess.getoutput('sha256sum ' + data)\n```",  # new finding
}
REGENERATED = {  # Patched RTC's second half: same code for the right fix, other code otherwise
    "ast.literal_eval": "```python\nreturn ast.literal_eval(expr)\n```",
    "pickle.load(io": "```python\nreturn json.loads(blob)\n```",
    "cmd.split()": "```python\nsubprocess.call(cmd.split())\n```",
    "getoutput": "```python\nreturn subprocess.getoutput('sha256sum ' + data)\n```",
}


def responder(req: dict[str, Any]) -> str:
    system = req["messages"][0]["content"]
    user = last_user_text(req)
    if system.startswith("Task: fix"):
        flagged = user.split("Flagged lines:", 1)[1]
        return next(v for k, v in FIXES.items() if k in flagged)
    if system.startswith("Task: describe"):
        changed = user.split("Changed lines:", 1)[1]
        tag = next(k for k in REGENERATED if k in changed)
        return f"Rewrite the line using {tag}."
    assert system.startswith("Task: apply"), system
    instruction = user.split("Instruction:", 1)[1]
    return next(v for k, v in REGENERATED.items() if k in instruction)


def new_file_diff(path: str, text: str) -> str:
    body = "".join(difflib.unified_diff([], text.splitlines(keepends=True), f"a/{path}", f"b/{path}"))
    return f"diff --git a/{path} b/{path}\n{body}"


def recording_semgrep(tmp_path: Path) -> tuple[str, Path]:
    """A real semgrep behind a wrapper that logs each argv (to prove what is scanned)."""
    real = find_semgrep()
    require(real, "semgrep is not installed")
    log = tmp_path / "argv.jsonl"
    wrapper = tmp_path / "semgrep-wrapper"
    wrapper.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"os.execv({real!r}, [{real!r}] + sys.argv[1:])\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper), log


def scan_targets(log: Path) -> list[list[str]]:
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return [argv[argv.index("--") + 1:] for argv in calls]


@pytest.mark.slow
def test_review_fixes_are_judged_by_oracle_and_rtc(tmp_path: Path, scripted_llm: Any) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text(APP)
    (repo / "untouched.py").write_text("import os\nos.system(input())\n")
    wrapper, log = recording_semgrep(tmp_path)
    server = scripted_llm(responder)
    ctx = AnalysisContext(llm_factory=lambda: client_for(server), repo_path=repo,
                          tools=Tools(semgrep=wrapper))
    report = AutoFix().run(parse_diff(new_file_diff("app.py", APP)), ctx)

    assert report.error is None, report.error
    by_rule = {f.rule_id: f for f in report.findings}
    assert set(by_rule) == {"python-code-injection", "python-unsafe-deserialization",
                            "python-shell-injection", "python-weak-hash"}
    evals = {f.start_line: f for f in report.findings if f.rule_id == "python-code-injection"}
    right, not_vuln = evals[7], evals[19]

    # right fix: fixed by the oracle, RTC pass, shown as a suggestion with indentation kept
    assert right.evidence["oracle"] == "fixed" and right.evidence["rtc"] == "pass"
    # what SARIF reads is typed, not in the display-only evidence
    assert right.cwe[0].startswith("CWE-95") and right.tags == ["security"]
    assert right.rule_description and right.rule_description in right.message
    assert right.scores == {"fixed": 1.0, "rtc_pass": 1.0, "rtc_exact": 1.0, "rtc_normalised": 1.0}
    assert right.fix is not None and right.fix.replacement == "    return ast.literal_eval(expr)\n"
    assert "-    return eval(expr)\n+    return ast.literal_eval(expr)\n" in right.fix.diff
    assert right.fix.suggestion.startswith("```suggestion\n    return ast.literal_eval(expr)")
    assert right.evidence["description"] == "Rewrite the line using ast.literal_eval."
    assert right.evidence["regenerated"].strip() == "return ast.literal_eval(expr)"

    # wrong fix: the finding stays; RTC fails; no suggestion
    wrong = by_rule["python-unsafe-deserialization"]
    assert wrong.evidence["oracle"] == "not fixed" and wrong.evidence["rtc"] == "fail"
    assert wrong.evidence["remaining"] == ["python-unsafe-deserialization@11"]
    assert wrong.fix is None and wrong.scores["fixed"] == 0.0

    # unparsable fix
    broken = by_rule["python-shell-injection"]
    assert broken.evidence["oracle"] == "unparsable" and broken.fix is None

    # "not vulnerable": no fix, no RTC, the reason kept
    assert not_vuln.evidence["oracle"] == "not applicable" and not_vuln.evidence["rtc"] is None
    assert not_vuln.scores == {} and "trusted test code" in not_vuln.evidence["answer"]

    # the weak hash disappears but a new finding appears: not fixed, though RTC passes
    swapped = by_rule["python-weak-hash"]
    assert swapped.evidence["oracle"] == "not fixed" and swapped.evidence["rtc"] == "pass"
    assert swapped.evidence["remaining"] == []
    assert swapped.evidence["new_findings"] == ["python-shell-injection"]

    s = report.scores
    assert (s["findings"], s["fixed"], s["fix_pct"], s["rtc_pass_pct"]) == (5, 1, 20.0, 50.0)
    assert (s["fix_pct_rtc_pass"], s["fix_pct_rtc_fail"], s["not_vulnerable"]) == (50.0, 0.0, 1)
    assert server.request_count == 5 + 2 * 4  # 5 fix prompts, 2 RTC calls per proposed fix

    # only the changed file reached semgrep: once for the scan, once for the oracle batch
    targets = scan_targets(log)
    # (each under a neutral name in its language's extension: analyzers/semgrep/targets.py)
    assert len(targets[0]) == 1 and targets[0][0].startswith(ALIAS_PREFIX) and targets[0][0].endswith(".py")
    assert len(targets) == 2 and len(targets[1]) > 1 and all(t.endswith(".py") for t in targets[1])
    assert not any("untouched" in t for call in targets for t in call)


@pytest.mark.slow
def test_only_findings_on_changed_lines_count(tmp_path: Path, scripted_llm: Any) -> None:
    require(find_semgrep(), "semgrep is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    new = "import pickle\n\n\ndef load(b):\n    return pickle.loads(b)\n\n\nx = eval(input())\n"
    (repo / "m.py").write_text(new)
    old = new.replace("x = eval(input())", "x = 1")
    diff = "diff --git a/m.py b/m.py\n" + "".join(difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), "a/m.py", "b/m.py", n=1))
    server = scripted_llm("NO_FIX: needs a design change")
    ctx = AnalysisContext(llm_factory=lambda: client_for(server), repo_path=repo)
    report = AutoFix().run(parse_diff(diff), ctx)
    assert [(f.rule_id, f.start_line) for f in report.findings] == [("python-code-injection", 8)]
    assert report.findings[0].evidence["answer"] == "needs a design change"
    assert report.scores["no_fix"] == 1 and report.scores["semgrep_findings_total"] == 2


@pytest.mark.slow
def test_without_a_checkout_the_hunks_are_scanned_and_the_notes_say_so(
        tmp_path: Path, scripted_llm: Any) -> None:
    require(find_semgrep(), "semgrep is not installed")
    text = "def f(blob):\n    import marshal\n    return marshal.loads(blob)\n"
    diff = new_file_diff("pkg/m.py", text)
    server = scripted_llm("NOT_VULNERABLE: trusted input")
    ctx = AnalysisContext(llm_factory=lambda: client_for(server))
    report = AutoFix().run(parse_diff(diff), ctx)
    assert any("could not be read" in n and "pkg/m.py" in n for n in report.notes)
    assert [(f.path, f.start_line, f.rule_id) for f in report.findings] == [
        ("pkg/m.py", 3, "python-unsafe-deserialization")]


def test_missing_semgrep_is_skipped_with_the_reason(tmp_path: Path) -> None:
    ctx = AnalysisContext(tools=Tools(semgrep=str(tmp_path / "missing-semgrep")),
                          file_loader=lambda p: "eval(input())\n")
    report = AutoFix().run(parse_diff(new_file_diff("a.py", "eval(input())\n")), ctx)
    assert report.error is None and not report.findings
    assert [s.item for s in report.skipped] == ["a.py"]
    assert "semgrep is not installed" in report.skipped[0].reason


def test_several_fixes_in_one_file_apply_bottom_up_with_indentation() -> None:
    text = "def f():\n    a = 1\n    b = 2\n    c = 3\n\n\ndef g():\n    d = 4\n"
    edits = [Edit(2, 2, reindent("a = 10\nif a:\n    a += 1", "    a = 1\n")),
             Edit(4, 4, reindent("        c = 30", "    c = 3\n")),
             Edit(8, 8, "")]
    out, applied = apply_edits(text, edits)
    assert out == ("def f():\n    a = 10\n    if a:\n        a += 1\n    b = 2\n    c = 30\n"
                   "\n\ndef g():\n")
    assert [e.start_line for e in applied] == [2, 4, 8]
    # an edit overlapping one already applied (bottom up) is dropped, never garbled
    out2, applied2 = apply_edits(text, [Edit(2, 3, "    x = 0\n"), Edit(3, 4, "    y = 0\n")])
    assert out2 == "def f():\n    a = 1\n    y = 0\n\n\ndef g():\n    d = 4\n"
    assert [e.start_line for e in applied2] == [3]


def test_answers_are_parsed() -> None:
    assert parse_fix_answer("not vulnerable - constant").kind == "not_vulnerable"
    assert parse_fix_answer("NO_FIX: needs redesign").reason == "needs redesign"
    assert parse_fix_answer("```js\nfoo()\n```").code == "foo()\n"
    assert parse_fix_answer("```python\nx = 1\n").code == "x = 1\n"  # cut by the token limit
    assert parse_fix_answer("just prose").kind == "no_code"


def test_context_is_the_enclosing_function_or_a_window() -> None:
    text = "import os\n\n\ndef f(x):\n    y = x\n    return eval(y)\n\n\nz = 1\n"
    assert context_of(text, "python", 6, 6, 1) == (4, "def f(x):\n    y = x\n    return eval(y)\n")
    assert context_of(text, "javascript", 6, 6, 1) == (5, "    y = x\n    return eval(y)\n\n")


def test_pseudo_file_keeps_line_numbers() -> None:
    diff = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -10,2 +10,2 @@ def f():\n"
            "     a = 1\n-    b = 2\n+    b = eval(a)\n")
    fc = parse_diff(diff).files[0]
    lines = pseudo_file(fc).splitlines()
    assert lines[9:11] == ["a = 1", "b = eval(a)"] and lines[:9] == [""] * 9


@pytest.mark.skipif(os.name != "posix", reason="POSIX only")
def test_rule_messages_reach_the_prompt(tmp_path: Path, scripted_llm: Any) -> None:
    require(find_semgrep(), "semgrep is not installed")
    server = scripted_llm("NO_FIX: x")
    ctx = AnalysisContext(llm_factory=lambda: client_for(server),
                          file_loader=lambda p: "import yaml\nyaml.load(open('f'))\n")
    AutoFix().run(parse_diff(new_file_diff("c.py", "import yaml\nyaml.load(open('f'))\n")), ctx)
    prompt = last_user_text(server.requests[0])
    assert "python-yaml-unsafe-load" in prompt and "CWE-502" in prompt and "safe_load" in prompt


@pytest.mark.slow
def test_eval_autofix_prints_the_paper_table(tmp_path: Path, scripted_llm: Any) -> None:
    from click.testing import CliRunner

    from bot.cli.commands.eval_autofix import command

    require(find_semgrep(), "semgrep is not installed")
    progs = tmp_path / "progs"
    progs.mkdir()
    (progs / "calc.py").write_text(APP)
    (progs / "notes.txt").write_text("eval(x)\n")  # not a program: ignored
    server = scripted_llm(responder)
    args = [str(progs), "--llm-base-url", server.base_url, "--model", server.model, "--no-cache"]
    res = CliRunner().invoke(command, args + ["--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    fig = data["figures"]
    assert (fig["programs"], fig["findings"], fig["fix_pct"], fig["rtc_pass_pct"]) == (1, 5, 20.0, 50.0)
    assert (fig["fix_pct_rtc_pass"], fig["fix_pct_rtc_fail"], fig["not_vulnerable"]) == (50.0, 0.0, 1)
    # the parsable fixes applied together: eval and md5 gone, a shell injection added by the
    # md5 "fix", pickle, shell=True (unparsable fix left out) and exec kept => 5 before, 4 after
    assert fig["file_fix_pct"] == 20.0
    assert data["usage"]["requests"] == 13
    verdicts = sorted((f["rule"], f["oracle"]) for f in data["findings"])
    assert ("python-unsafe-deserialization", "not fixed") in verdicts
    res = CliRunner().invoke(command, args)
    assert res.exit_code == 0, res.output
    for label in ("Fix %", "RTC pass %", "Fix % (RTC pass)", "Fix % (RTC fail)", "not vulnerable",
                  "LLM requests"):
        assert label in res.output
    bad = CliRunner().invoke(command, [str(tmp_path / "progs" / "notes.txt")])
    assert bad.exit_code != 0 and "no Python, JavaScript or Java files" in bad.output


@pytest.mark.model
@pytest.mark.slow
def test_embedded_model_runs_the_whole_loop(tmp_path: Path, embedded_llm: Any) -> None:
    from analyzers.autofix.analyzer import Options, fix_all, table
    from analyzers.autofix.oracle import FixTarget
    from analyzers.semgrep.scan import scan

    require(find_semgrep(), "semgrep is not installed")
    (tmp_path / "e.py").write_text("import sys\n\n\ndef run(code):\n    exec(code)\n")
    found = scan(tmp_path, ["e.py"]).findings
    assert [f.rule_id for f in found] == ["python-code-injection"]
    before = embedded_llm.usage.requests + embedded_llm.usage.cache_hits
    outcomes = fix_all([FixTarget(found[0], "python", (tmp_path / "e.py").read_text())], embedded_llm,
                       Options(fix_tokens=128, describe_tokens=64))
    o = outcomes[0]
    assert o.verdict in {"fixed", "not fixed", "unparsable", "not applicable"}
    assert (o.verdict == "not applicable") == (o.answer.kind != "code")
    if o.answer.kind == "code":
        assert o.rtc_exact is not None and o.description
    spent = embedded_llm.usage.requests + embedded_llm.usage.cache_hits - before
    assert spent == (3 if o.answer.kind == "code" else 1)
    assert table(outcomes, Options())["findings"] == 1.0


@pytest.mark.slow
def test_an_attempt_that_fails_does_not_leave_the_oracle_waiting(tmp_path: Path, scripted_llm: Any) -> None:
    from analyzers.autofix.analyzer import Options, fix_all
    from analyzers.autofix.oracle import FixTarget
    from analyzers.llm.client import BudgetExceeded
    from analyzers.semgrep.scan import scan

    require(find_semgrep(), "semgrep is not installed")
    (tmp_path / "app.py").write_text(APP)
    found = scan(tmp_path, ["app.py"]).findings
    targets = [FixTarget(f, "python", APP) for f in found[:3]]
    # one request slot: the attempts run one after another, and the budget ends the second
    llm = client_for(scripted_llm(responder), max_concurrency=1, max_requests=4)
    with pytest.raises(BudgetExceeded):
        fix_all(targets, llm, Options())
    assert llm.usage.requests == 4


def test_notes_give_no_command_line_advice() -> None:
    """The App and the Action show these notes in check runs: no `--repo` there."""
    require(find_semgrep(), "semgrep is not installed")
    report = AutoFix().run(parse_diff(new_file_diff("app.py", "x = 1\n")), AnalysisContext())
    assert any("could not be read; scanned only the new code" in n for n in report.notes), report.notes
    assert not any("--" in n for n in report.notes)
