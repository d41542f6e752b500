"""Local tools beside the LLM round, never in front of it (issue #31): the review's first LLM
request arrives while AutoFix's first Semgrep scan runs (pipeline.run_all runs the analyzers at
once), and CRScore's smell detectors run while its claims request is out.

Each tool here is the real one behind a stand-in the operator could name (Tools.semgrep; `java`
on PATH) that first waits for the scripted LLM server to have received a request, and writes
down whether it came: a tool run in front of the LLM round would wait in vain. No timing is
asserted, only the order.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from analyzers import pipeline
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext, ReviewComment, Tools
from analyzers.crscore.smells import pmd
from analyzers.semgrep.scan import find_semgrep
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text
from tests.support import require

WAIT_S = 60  # how long a stand-in waits for the LLM's first request before it gives up

VULNERABLE = "import subprocess\n\n\ndef run(name):\n    return subprocess.call('make ' + name, shell=True)\n"
JAVA = "import java.util.List;\n\npublic class A {\n    int f(int x) { return x + 1; }\n}\n"
CLAIMS = "1. The change adds a class.\n\nImplications:\n1. Callers may use it.\n"


def new_file(path: str, text: str) -> str:
    lines = text.splitlines(keepends=True)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n" + "".join("+" + ln for ln in lines)


def stand_in(tmp_path: Path, name: str, then: str) -> tuple[Path, Path, Path]:
    """A program `name` that waits for the marker (the LLM's first request), logs "saw" or
    "waited", then runs `then` (Python, with `args`: its own arguments). Its folder, the
    marker and the log."""
    folder, marker, log = tmp_path / "bin", tmp_path / "llm-asked", tmp_path / f"{name}.log"
    folder.mkdir(exist_ok=True)
    program = folder / name
    program.write_text(
        f"#!{sys.executable}\nimport os, sys, time\nargs = sys.argv[1:]\n"
        f"end = time.monotonic() + {WAIT_S}\n"
        f"while not os.path.exists({str(marker)!r}) and time.monotonic() < end:\n    time.sleep(0.01)\n"
        f"open({str(log)!r}, 'a').write(('saw' if os.path.exists({str(marker)!r}) else 'waited') + '\\n')\n"
        + then)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return folder, marker, log


def marking(marker: Path, answer: Any) -> Any:
    def respond(req: dict[str, Any]) -> Any:
        marker.touch()
        return answer(req)
    return respond


def answers(req: dict[str, Any]) -> str | list[str]:
    text = last_user_text(req)
    if "Summary of changes" in text:
        return CLAIMS
    if "[edit description]" in text:
        return "```\nnothing\n```\n[end]"
    if "[new]" in text:
        return [f"edit {i}" for i in range(int(req.get("n") or 1))]
    return "```\npass\n```"


@pytest.mark.slow
def test_the_first_semgrep_scan_runs_beside_the_reviews_first_llm_round(tmp_path: Path, scripted_llm: Any) -> None:
    real = find_semgrep()
    require(real is not None, "semgrep is not installed")
    folder, marker, log = stand_in(tmp_path, "semgrep", f"os.execv({real!r}, [{real!r}] + args)\n")
    server: ScriptedLLM = scripted_llm(marking(marker, answers))
    ctx = AnalysisContext(llm_factory=lambda: client_for(server), tools=Tools(semgrep=str(folder / "semgrep")))
    rtc, autofix = pipeline.run_all(["editing_rtc", "autofix"], parse_diff(new_file("tools/run.py", VULNERABLE)), ctx)
    assert rtc.error is None and autofix.error is None, (rtc.error, autofix.error)
    assert autofix.findings and autofix.findings[0].rule_id == "python-shell-injection"
    scans = log.read_text().split()
    assert len(scans) == 2  # the first scan, then the oracle's
    assert scans[0] == "saw"  # EditingRTC's first request came while the first scan ran


@pytest.mark.model
def test_the_smell_detectors_run_while_the_claims_request_is_out(tmp_path: Path, scripted_llm: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    require(pmd.PMD_LIB.is_dir(), "PMD is not installed")
    empty = '{"files": [], "processingErrors": [], "configurationErrors": []}'
    folder, marker, log = stand_in(tmp_path, "java", f"print({empty!r})\n")
    monkeypatch.setenv("PATH", f"{folder}:{Path(sys.executable).parent}:/usr/bin:/bin")
    server: ScriptedLLM = scripted_llm(marking(marker, answers))
    ctx = AnalysisContext(llm_factory=lambda: client_for(server), tools=Tools(pmd_server="off"),
                          comments=[ReviewComment("A.java", 4, "Please document f.")])
    report = pipeline.run_one("crscore", parse_diff(new_file("A.java", JAVA)), ctx)
    assert report.error is None and report.findings, report.error
    assert server.request_count == 1  # the claims request, the only LLM round
    assert log.read_text().split() == ["saw"]  # PMD ran after the claims request went out
