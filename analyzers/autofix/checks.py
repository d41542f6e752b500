"""The checks a proposed fix meets after the re-scan, none of which trusts the model.

Each returns None when the fix passes, else why not, in words a pull request's author reads
after "fix proposed, not verified: ":

- `suppression`: the replacement adds no suppression comment (`# nosemgrep`, `// NOPMD`,
  `# noqa`, `eslint-disable`, …) that the flagged lines did not have;
- `parses`: the fixed file parses where the original did (Python: its own parser, in
  analyzers/autofix/oracle.py; Java: `javac` stopped after parsing; JavaScript: `node --check`);
- `names`: on Python, pyflakes on the fixed file against the original: a name the fix uses
  that is not defined at that point, or a definition it removes that the rest of the file
  uses (only diagnostics the original did not have count; an import left unused does not);
- `tests`: where a test command is configured (the Action, the CLI), the tests pass in the
  sandbox on the checkout with the fixed file.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyflakes import checker as pyflakes

from analyzers.code import pyparse, suppressions
from analyzers.context import Tools
from analyzers.crscore.smells.jshint import config_for
from analyzers.execution.oracle import Limits
from analyzers.sandbox.box import Sandbox, SandboxUnavailable
from analyzers.sandbox.suite import Suite
from analyzers.tools.programs import run, tool_path, workdir

PARSE_TIMEOUT_S = 60.0
# pyflakes' diagnostics about something left unused: a fix may leave an import unused (it
# replaced the only call that needed it) and be a good fix all the same
_HARMLESS = frozenset({"UnusedImport", "UnusedVariable", "UnusedAnnotation", "UnusedIndirectAssignment"})
_JAVAC_ERROR = re.compile(r"^(.*?\.java):\d+: error: (.*)$", re.M)


@dataclass(frozen=True)
class Checks:
    """What a fix is checked with beyond the re-scan: the operator's tools (the sandbox mode)
    and, where the surface has them (the Action, the CLI), a checkout and its test command."""

    tools: Tools = field(default_factory=Tools)
    repo: Path | None = None
    test_command: str | None = None
    test_timeout_s: float = 300.0
    memory_mb: int = 4096


def suppression(language: str | None, flagged: str, replacement: str) -> str | None:
    added = suppressions.added_markers(language, flagged, replacement)
    if not added:
        return None
    return (f"it adds a suppression comment ({', '.join(f'`{m}`' for m in added)}); a fix must "
            "remove the weakness, not hide it from the scan")


# --------------------------------------------------------------------------- names (Python)
@functools.lru_cache(maxsize=16)  # an original with several fixes is checked once
def _diagnostics(text: str) -> tuple[pyflakes.Message, ...] | None:
    try:
        tree = pyparse.parse(text)
    except SyntaxError:
        return None
    return tuple(pyflakes.Checker(tree, filename="fixed.py").messages)


def _key(m: pyflakes.Message) -> tuple[str, tuple[object, ...]]:
    return type(m).__name__, tuple(m.message_args)


def names(original: str, fixed: str, region: range) -> str | None:
    """pyflakes on the fixed file against the original (Python); `region`: the fixed lines."""
    before, after = _diagnostics(original), _diagnostics(fixed)
    if before is None or after is None:  # a file that does not parse is the parse check's
        return None
    new = Counter(_key(m) for m in after if type(m).__name__ not in _HARMLESS)
    new.subtract(Counter(_key(m) for m in before))
    fresh = [m for m in after if new[_key(m)] > 0]
    if not fresh:
        return None
    undefined = [m for m in fresh if type(m).__name__ in ("UndefinedName", "UndefinedLocal")]
    used_here = sorted({str(m.message_args[0]) for m in undefined if m.lineno in region})
    used_elsewhere = sorted({str(m.message_args[0]) for m in undefined if m.lineno not in region})
    if used_here:
        return f"it uses {_names(used_here)}, not defined at that point"
    if used_elsewhere:
        return f"it removes the definition of {_names(used_elsewhere)}, which the rest of the file uses"
    m = fresh[0]
    return f"pyflakes finds a problem the original did not have: {m.message % m.message_args}"


def _names(items: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")


# --------------------------------------------------------------------------- parse (Java, JS)
def _which(name: str) -> str | None:
    return shutil.which(name, path=tool_path())


def _javac_failures(texts: Sequence[tuple[str, str]]) -> dict[int, str]:
    """javac, stopped after parsing, over (path, text) pairs: index → its first error."""
    exe = _which("javac") or "javac"
    with workdir("rtcbot-javac-") as tmp:
        files = []
        for i, (_, text) in enumerate(texts):
            p = tmp / str(i) / "Fixed.java"  # parsing checks no class name against the file's
            p.parent.mkdir()
            p.write_text(text, encoding="utf-8")
            files.append(p)
        argv = [exe, "-proc:none", "-XDshould-stop.ifError=PARSE", "-XDshould-stop.ifNoError=PARSE",
                "-d", str(tmp / "out"), "-encoding", "UTF-8", *map(str, files)]
        proc = run(argv, timeout=PARSE_TIMEOUT_S, cwd=tmp)
        failed: dict[int, str] = {}
        for m in _JAVAC_ERROR.finditer(proc.stdout + proc.stderr):
            rel = Path(m.group(1))
            rel = rel if rel.is_absolute() else tmp / rel
            for i, p in enumerate(files):
                if rel.resolve() == p.resolve():
                    failed.setdefault(i, m.group(2).strip()[:200])
        if proc.returncode != 0 and not failed:
            failed = dict.fromkeys(range(len(texts)), (proc.stderr.strip().splitlines() or ["javac failed"])[-1][:200])
    return failed


def _node_failure(text: str) -> str | None:
    exe = _which("node") or "node"
    with workdir("rtcbot-node-check-") as tmp:
        p = tmp / ("fixed.mjs" if config_for(text)["module"] else "fixed.js")  # JSHint's reading
        p.write_text(text, encoding="utf-8")
        proc = run([exe, "--check", str(p)], timeout=PARSE_TIMEOUT_S, cwd=tmp)
    if proc.returncode == 0:
        return None
    errors = [ln.strip() for ln in proc.stderr.splitlines() if "Error" in ln]
    return (errors or ["node --check failed"])[0][:200]


def parse_failures(items: Sequence[tuple[str, str, str, str]]) -> dict[int, str]:
    """(language, path, original, fixed) → index → why the fixed file does not parse, for
    those whose original parses (Java and JavaScript; one javac for all the Java files). A
    parser that is not installed refuses the fix: it could not be checked."""
    out: dict[int, str] = {}
    for language, tool in (("java", "javac"), ("javascript", "node")):
        if _which(tool) is None:
            out.update({i: f"the fixed file could not be parsed: {tool} is not installed"
                        for i, it in enumerate(items) if it[0] == language})
    try:
        java = [i for i, it in enumerate(items) if it[0] == "java" and i not in out]
        bad = _javac_failures([(items[i][1], items[i][3]) for i in java]) if java else {}
        suspects = sorted(bad)
        orig_bad = _javac_failures([(items[java[j]][1], items[java[j]][2]) for j in suspects]) if suspects else {}
        out.update({java[j]: f"the fixed file does not parse (javac: {bad[j]})"
                    for k, j in enumerate(suspects) if k not in orig_bad})
        for i, (language, _, original, fixed) in enumerate(items):
            if language == "javascript" and i not in out and (why := _node_failure(fixed)) \
                    and _node_failure(original) is None:
                out[i] = f"the fixed file does not parse (node: {why})"
    except (OSError, subprocess.TimeoutExpired) as e:
        for i, it in enumerate(items):
            if it[0] in ("java", "javascript"):
                out.setdefault(i, f"the fixed file could not be parsed: {e}")
    return out


# --------------------------------------------------------------------------- tests
def test_suite(checks: Checks) -> Suite | str | None:
    """The suite that runs the tests on a fixed tree, None where no test command is set, or
    why it cannot run."""
    if not checks.test_command:
        return None
    if checks.repo is None:
        return "the tests could not be run: there is no checkout of the repository at the head"
    limits = Limits(wall_s=checks.test_timeout_s, cpu_s=checks.test_timeout_s, memory_mb=checks.memory_mb,
                    nproc=256, fsize_mb=256)
    try:
        return Suite(Sandbox(mode=checks.tools.sandbox), limits, checks.repo, checks.test_command)
    except (SandboxUnavailable, ValueError) as e:
        return f"the tests could not be run: {e}"


def tests(suite: Suite, path: str, fixed: str) -> str | None:
    try:
        ok, tail = suite.passes(path, fixed)
    except (SandboxUnavailable, OSError, ValueError) as e:
        return f"the tests could not be run on the fixed code: {e}"
    if ok:
        return None
    last = tail.strip().splitlines()[-1:] or ["no output"]
    return f"the tests fail with the fix applied (`{suite.command}`: {last[0].strip()[:200]})"


def region_of(start_line: int, replacement: str) -> range:
    """The fixed file's lines that the replacement occupies."""
    return range(start_line, start_line + max(len(replacement.splitlines()), 1))


