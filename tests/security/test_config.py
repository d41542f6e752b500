"""Repository config is data, never a program (issue #21).

Attacks covered, each against the real loader, real analyzers, real Semgrep and a scripted
OpenAI-compatible server on loopback:
- `.github/rtcbot.yml` names the program the worker runs (`options.autofix.semgrep: python3`,
  `node`, or a script the pull request added): refused; an analysis handed those options
  runs nothing (a planted script's marker never appears);
- `options.autofix.extra_rules` makes Semgrep read a file on the server: refused; only the
  operator's rule files (Tools) are scanned with;
- `options.crscore.model` names an embedding model by path or one the operator does not
  allow: refused before any model loads;
- unbounded cost (`n_forward: 60, forward_max_tokens: 100000`, huge timeouts, memory,
  hunks, findings, regions): refused with the maximum named; no LLM request is made;
- a YAML alias bomb ("billion laughs") under `options`: refused at once, memory bounded;
- deep nesting (a RecursionError in the loader): one line on the service and in the Action;
- an oversized file, several documents, a duplicate key that would override a setting;
- `rtcbot config validate` rejects each of these with exit 2 and one line per problem.
"""

from __future__ import annotations

import stat
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import bot.action.workflow
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext, Tools
from analyzers.pipeline import run_one
from bot.cli.commands.config import command as config_command
from bot.core.config import parse_config
from bot.core.config_file import MAX_CONFIG_BYTES, MAX_DEPTH
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM
from tests.support import require

SEMGREP = Path(sys.executable).parent / "semgrep"
EDIT_DIFF = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x+1\n+    return x + 2\n"
PLANTED_RULE = """rules:
- id: planted-rule
  pattern: danger_call()
  message: planted by the operator
  languages: [python]
  severity: WARNING
"""


def new_file_diff(path: str, text: str) -> str:
    lines = text.splitlines()
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{x}\n" for x in lines)


def marker_script(tmp_path: Path) -> tuple[Path, Path]:
    """A 'semgrep' a pull request could add: it only leaves a marker when it runs."""
    marker = tmp_path / "ran.marker"
    script = tmp_path / "evil-semgrep"
    script.write_text(f"#!/bin/sh\ntouch {marker}\necho '{{\"results\": [], \"errors\": []}}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, marker


def recording_semgrep(tmp_path: Path) -> tuple[str, Path]:
    """The operator's Semgrep: the real one behind a wrapper that logs each run."""
    log = tmp_path / "semgrep-runs.log"
    wrapper = tmp_path / "operator-semgrep"
    wrapper.write_text(f"#!{sys.executable}\nimport os, sys\n"
                       f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
                       f"os.execv({str(SEMGREP)!r}, [{str(SEMGREP)!r}] + sys.argv[1:])\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper), log


# -- programs and paths ------------------------------------------------------------------
@pytest.mark.parametrize("program", ["python3", "node", "SCRIPT"])
def test_config_cannot_choose_the_program_the_worker_runs(tmp_path: Path, program: str) -> None:
    script, marker = marker_script(tmp_path)
    program = str(script) if program == "SCRIPT" else program
    loaded = parse_config(f"options:\n  autofix: {{semgrep: {program}}}\n")
    assert loaded.error is not None and "options.autofix.semgrep" in loaded.error
    assert "operator setting" in loaded.error and "RTCBOT_SEMGREP" in loaded.error
    assert loaded.config.options == {}  # the defaults apply

    # any surface that hands such options to the analysis gets an error, and nothing runs
    ctx = AnalysisContext(options={"autofix": {"semgrep": program}},
                          file_loader=lambda p: "eval(input())\n")
    report = run_one("autofix", parse_diff(new_file_diff("a.py", "eval(input())\n")), ctx)
    assert report.error is not None and "options.autofix.semgrep" in report.error
    assert not marker.exists()


def test_extra_rules_are_the_operators_not_the_repositorys(tmp_path: Path) -> None:
    require(SEMGREP.exists(), "semgrep is not installed beside this Python")
    rule = tmp_path / "planted.yml"
    rule.write_text(PLANTED_RULE)
    loaded = parse_config(f"options: {{autofix: {{extra_rules: [{rule}, /etc/passwd]}}}}")
    assert loaded.error is not None and "options.autofix.extra_rules" in loaded.error
    assert "RTCBOT_SEMGREP_RULES" in loaded.error

    text = "danger_call()\ny = 1\n"
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n danger_call()\n+y = 1\n"
    wrapper, log = recording_semgrep(tmp_path)
    from_repo = AnalysisContext(options={"autofix": {"extra_rules": [str(rule)]}},
                                tools=Tools(semgrep=wrapper), file_loader=lambda p: text)
    report = run_one("autofix", parse_diff(diff), from_repo)
    assert report.error is not None and "extra_rules" in report.error
    assert not log.exists()  # refused before any scan

    # the operator's rule file and Semgrep are the ones used
    from_operator = AnalysisContext(tools=Tools(semgrep=wrapper, extra_rules=(str(rule),)),
                                    file_loader=lambda p: text)
    report = run_one("autofix", parse_diff(diff), from_operator)
    assert report.error is None, report.error
    assert report.scores["semgrep_findings_total"] >= 1.0  # the planted rule matched line 1
    assert log.exists() and str(rule) in log.read_text()


def test_embedding_model_only_from_the_operators_allow_list(tmp_path: Path) -> None:
    fake_model = tmp_path / "model"
    fake_model.mkdir()
    for name in (str(fake_model), "../../models/x", "intfloat/e5-large-v2"):
        loaded = parse_config(f"options: {{crscore: {{model: '{name}'}}}}")
        assert loaded.error is not None and "options.crscore.model" in loaded.error
        assert "RTCBOT_EMBEDDING_MODELS" in loaded.error
    allowed = Tools(embedding_models=("intfloat/e5-large-v2",))
    assert parse_config("options: {crscore: {model: intfloat/e5-large-v2}}", allowed).error is None
    assert parse_config("options: {crscore: {model: all-MiniLM-L6-v2}}").error is None  # the default

    # the analysis refuses it too, before loading anything from that path
    from analyzers.context import ReviewComment

    ctx = AnalysisContext(options={"crscore": {"model": str(fake_model)}},
                          comments=[ReviewComment("m.py", 2, "Why add 2?")])
    report = run_one("crscore", parse_diff(EDIT_DIFF), ctx)
    assert report.error is not None and "options.crscore.model" in report.error
    assert not report.findings


# -- cost ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("analyzer", "key", "value", "maximum"), [
    ("editing_rtc", "n_forward", 60, 5),
    ("editing_rtc", "forward_max_tokens", 100000, 1024),
    ("editing_rtc", "backward_max_tokens", 100000, 2048),
    ("editing_rtc", "max_hunks", 100000, 100),
    ("autofix", "fix_tokens", 100000, 2048),
    ("autofix", "max_findings", 100000, 50),
    ("synthesis_rtc", "test_timeout_s", 86400, 600),
    ("synthesis_rtc", "memory_mb", 65536, 4096),
    ("synthesis_rtc", "max_regions", 1000, 10),
    ("synthesis_rtc", "n_forward", 60, 5),
])
def test_counts_tokens_timeouts_are_bounded(analyzer: str, key: str, value: int, maximum: int) -> None:
    loaded = parse_config(f"options: {{{analyzer}: {{{key}: {value}}}}}")
    assert loaded.error is not None
    assert f"options.{analyzer}.{key}: {value} is over the maximum of {maximum}" in loaded.error
    assert parse_config(f"options: {{{analyzer}: {{{key}: {maximum}}}}}").error is None


def test_unbounded_options_make_no_llm_request(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("a description")
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv),
                          options={"editing_rtc": {"n_forward": 60, "forward_max_tokens": 100000}})
    report = run_one("editing_rtc", parse_diff(EDIT_DIFF), ctx)
    assert report.error is not None and "over the maximum of 5" in report.error
    assert srv.request_count == 0


# -- the YAML itself -------------------------------------------------------------------------
def alias_bomb(levels: int = 12) -> str:
    lines = ["options:", "  editing_rtc:", '    l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"    l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_at_once() -> None:
    tracemalloc.start()
    t0 = time.perf_counter()
    loaded = parse_config(alias_bomb())
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert loaded.error is not None and "anchors" in loaded.error and "line 3" in loaded.error
    # at once: the memory is the measure (an expanded bomb takes gigabytes, and minutes); 5 s,
    # not 1 s, for a loaded machine's stalls (as tests/security/test_paths.py's huge hunk)
    assert elapsed < 5.0 and peak < 5 * 2**20
    # an alias alone (no anchor in sight) is refused as well
    assert "aliases" in (parse_config("options: *x\n").error or "")


@pytest.mark.parametrize("opener", ["[", "{a: "])
def test_deep_nesting_is_one_line_not_a_recursion_error(opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    deep = "options: " + opener * 10_000 + closer * 10_000 + "\n"  # under 64 KiB
    loaded = parse_config(deep)
    assert loaded.error is not None and f"more than {MAX_DEPTH} levels" in loaded.error
    assert "\n" not in loaded.error
    # the Action reads the file with the same loader (tests/bot/test_config.py runs all three
    # surfaces on one invalid file)
    assert vars(bot.action.workflow)["parse_config"] is parse_config


def test_oversized_file_several_documents_and_duplicate_keys() -> None:
    big = "# " + "x" * MAX_CONFIG_BYTES + "\n"
    assert "larger than 64 KiB" in (parse_config(big).error or "")
    assert "one YAML document" in (parse_config("drafts: true\n---\ndrafts: false\n").error or "")
    dup = "options: {editing_rtc: {n_forward: 3}}\noptions: {autofix: {semgrep: python3}}\n"
    assert "duplicate key 'options'" in (parse_config(dup).error or "")


# -- the validate command ----------------------------------------------------------------------
@pytest.mark.slow
def test_validate_command_rejects_programs_and_paths(tmp_path: Path) -> None:
    bad = tmp_path / "rtcbot.yml"
    bad.write_text("options:\n  autofix: {semgrep: python3, extra_rules: [/etc/passwd]}\n"
                   "  editing_rtc: {n_forward: 60}\n")
    p = subprocess.run([sys.executable, "-m", "bot", "config", "validate", str(bad)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert any("options.autofix.semgrep" in x and "operator" in x for x in lines)
    assert any("options.autofix.extra_rules" in x for x in lines)
    assert any("options.editing_rtc.n_forward: 60 is over the maximum of 5" in x for x in lines)
    assert "Traceback" not in p.stderr and p.stdout == ""


@pytest.mark.parametrize("text", [alias_bomb(), "options: " + "[" * 20_000 + "]" * 20_000,
                                  "# " + "x" * (MAX_CONFIG_BYTES + 10), "a: [1,\n", "\xff"])
def test_validate_command_one_line_exit_2(tmp_path: Path, text: str) -> None:
    f = tmp_path / "rtcbot.yml"
    f.write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
    result = CliRunner().invoke(config_command, ["validate", str(f)])
    assert result.exit_code == 2, result.output
    oversize = len(text) > MAX_CONFIG_BYTES  # refused as it is read, before any parsing: one line
    assert "Traceback" not in result.output and len(result.output.splitlines()) == (1 if oversize else 2)
    assert not oversize or result.output.strip() == f"`{f}` is over 64 KiB"
