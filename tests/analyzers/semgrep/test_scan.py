"""The scanner: our rules pass `semgrep --test`, find the known issues, and run offline."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from analyzers.semgrep.scan import (
    BASE_FLAGS,
    RULES_DIR,
    SemgrepFailed,
    SemgrepUnavailable,
    build_argv,
    find_semgrep,
    parse_output,
    scan,
    short_rule_id,
)
from analyzers.semgrep.targets import ALIAS_PREFIX
from tests.support import FIXTURES, require

VULNERABLE = FIXTURES / "vulnerable" / "python"
pytestmark = pytest.mark.slow


def _semgrep() -> str:
    exe = find_semgrep()
    require(exe, "semgrep is not installed")
    assert exe is not None
    return exe


def test_every_rule_has_metadata_and_a_test_file() -> None:
    import yaml

    ids = []
    for path in sorted(RULES_DIR.glob("*.yml")):
        tests = [p for p in RULES_DIR.glob(path.stem + ".*") if p.suffix != ".yml"]
        assert tests, f"{path.name} has no test file next to it"
        for rule in yaml.safe_load(path.read_text())["rules"]:
            ids.append(rule["id"])
            assert rule["message"].strip() and rule["severity"] in {"ERROR", "WARNING", "INFO"}
            assert any(c.startswith("CWE-") for c in rule["metadata"]["cwe"]), rule["id"]
    assert len(ids) == len(set(ids)) and "." not in "".join(ids)
    langs = {i.split("-")[0] for i in ids}
    assert {"python", "javascript", "java"} <= langs


def test_semgrep_test_passes_for_every_rule() -> None:
    exe = _semgrep()
    env = dict(os.environ, SEMGREP_ENABLE_VERSION_CHECK="0")
    proc = subprocess.run([exe, "--test", "--metrics=off", "--disable-version-check", str(RULES_DIR)],
                          capture_output=True, text=True, env=env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "All tests passed" in out


def test_rules_find_issues_in_at_least_10_of_the_12_vulnerable_programs() -> None:
    _semgrep()
    require(VULNERABLE.is_dir(), f"missing fixtures {VULNERABLE}")
    files = sorted(p.name for p in VULNERABLE.glob("*.py"))
    assert len(files) == 12
    result = scan(VULNERABLE, files)
    hit = {f.path for f in result.findings}
    assert len(hit) >= 10, sorted(set(files) - hit)
    assert result.targets == files
    # a few exact expectations
    rules = {(f.path, f.rule_id) for f in result.findings}
    assert ("yaml_load.py", "python-yaml-unsafe-load") in rules
    assert ("subprocess_shell.py", "python-shell-injection") in rules
    assert ("pickle_deserialize.py", "python-unsafe-deserialization") in rules
    evals = [f for f in result.findings if f.path == "eval.py"]
    assert [f.start_line for f in evals] == [5]  # constant eval("1+1") and self.eval() are not flagged


def test_scan_passes_only_the_named_targets_and_offline_flags(tmp_path: Path) -> None:
    _semgrep()
    (tmp_path / "a.py").write_text("import pickle\npickle.loads(b'')\n")
    (tmp_path / "b.py").write_text("exec(input())\n")
    result = scan(tmp_path, ["a.py"])
    assert [f.path for f in result.findings] == ["a.py"]
    # one target, under a neutral name in its language's extension (analyzers/semgrep/targets.py)
    assert result.argv[-2] == "--" and result.argv[-1].startswith(ALIAS_PREFIX)
    assert result.argv[-1].endswith("/0.py") and result.targets == ["a.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]  # the neutral names are gone
    for flag in ("--metrics=off", "--disable-version-check", "--json"):
        assert flag in result.argv
    assert "auto" not in result.argv
    assert result.argv[result.argv.index("--config") + 1] == str(RULES_DIR)


def test_extra_rule_folders_are_added_and_checked(tmp_path: Path) -> None:
    _semgrep()
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "x.yml").write_text(
        "rules:\n  - id: no-print\n    languages: [python]\n    severity: INFO\n"
        "    message: no print\n    pattern: print(...)\n")
    (tmp_path / "a.py").write_text("print(1)\n")
    result = scan(tmp_path, ["a.py"], extra_rules=[rules])
    assert [f.rule_id for f in result.findings] == ["no-print"]
    with pytest.raises(SemgrepFailed, match="does not exist"):
        scan(tmp_path, ["a.py"], extra_rules=[tmp_path / "nope"])


def test_unparsable_files_are_reported(tmp_path: Path) -> None:
    _semgrep()
    (tmp_path / "bad.py").write_text("import os\nos.system(x\n")
    result = scan(tmp_path, ["bad.py"])
    assert "bad.py" in result.unparsable
    assert result.errors and result.errors[0].startswith("bad.py: ")


def test_missing_semgrep_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SemgrepUnavailable, match="not installed"):
        scan(tmp_path, ["a.py"], semgrep=str(tmp_path / "no-such-semgrep"))


def test_parse_output_reads_results_and_errors() -> None:
    data = {
        "results": [{
            "check_id": "analyzers.semgrep.rules.python-code-injection", "path": "x.py",
            "start": {"line": 3, "col": 1}, "end": {"line": 4, "col": 2},
            "extra": {"message": "eval  is\n bad", "severity": "ERROR",
                      "metadata": {"cwe": "CWE-95: x", "category": "security"}},
        }],
        "errors": [{"code": 3, "type": ["PartialParsing", []], "path": "y.py", "message": "Syntax error\nmore"}],
    }
    r = parse_output(json.loads(json.dumps(data)))
    f = r.findings[0]
    assert (f.rule_id, f.start_line, f.end_line, f.message, f.cwe, f.level) == (
        "python-code-injection", 3, 4, "eval is bad", ("CWE-95: x",), "failure")
    assert f.touches([4]) and not f.touches([5])
    assert r.unparsable == {"y.py"} and r.errors == ["y.py: Syntax error"]
    assert short_rule_id("plain-id") == "plain-id"
    argv = build_argv("semgrep", [RULES_DIR], ["a.py"])
    assert argv[:1 + len(BASE_FLAGS)] == ["semgrep", *BASE_FLAGS]


def test_native_and_classic_command_lines_find_the_same() -> None:
    _semgrep()
    require(VULNERABLE.is_dir(), f"missing fixtures {VULNERABLE}")
    files = sorted(p.name for p in VULNERABLE.glob("*.py"))
    native = scan(VULNERABLE, files)
    assert "--experimental" in native.argv
    classic = scan(VULNERABLE, files, engine="python")  # the operator's RTCBOT_SEMGREP_ENGINE=python
    assert "--experimental" not in classic.argv
    assert native.findings == classic.findings and native.unparsable == classic.unparsable
    assert len(native.findings) >= 10


def test_a_semgrep_without_the_native_command_line_is_run_the_classic_way(tmp_path: Path) -> None:
    real = _semgrep()
    wrapper = tmp_path / "old-semgrep"
    wrapper.write_text("#!/bin/sh\n"
                       "for a in \"$@\"; do [ \"$a\" = --experimental ] && "
                       "{ echo 'no such option' >&2; exit 2; }; done\n"
                       f"exec {real} \"$@\"\n")
    wrapper.chmod(0o755)
    (tmp_path / "a.py").write_text("import pickle\npickle.loads(b'')\n")
    result = scan(tmp_path, ["a.py"], semgrep=str(wrapper))
    assert [f.rule_id for f in result.findings] == ["python-unsafe-deserialization"]
    assert "--experimental" not in result.argv
    wrapper.write_text("#!/bin/sh\necho 'broken' >&2\nexit 2\n")
    with pytest.raises(SemgrepFailed, match=r"semgrep failed \(exit 2\): broken"):
        scan(tmp_path, ["a.py"], semgrep=str(wrapper))


def test_a_file_over_the_size_limit_is_a_fact_not_words_found_again() -> None:
    """AutoFix lists a file over Semgrep's size limit in Semgrep's words, any other skip as "not
    scanned by semgrep: …", told apart by `oversize`, not by how the words start."""
    from analyzers.autofix.analyzer import _note_unscanned
    from analyzers.report import AnalyzerReport
    from analyzers.semgrep.scan import SIZE_LIMIT, parse_output

    result = parse_output({"results": [], "errors": [], "paths": {"skipped": [
        {"path": "big.py", "reason": "exceeded_size_limit", "details": "3 MB"},
        {"path": "odd.py", "reason": "excluded_by_config", "details": f"{SIZE_LIMIT} (a rule's words)"}]}})
    assert result.oversize == {"big.py"}
    report = AnalyzerReport("autofix", "AutoFix")
    _note_unscanned(result, [], report)
    assert {s.item: s.reason for s in report.skipped} == {
        "big.py": f"{SIZE_LIMIT}: 3 MB", "odd.py": f"not scanned by semgrep: {SIZE_LIMIT} (a rule's words)"}
