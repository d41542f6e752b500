"""Run Semgrep offline on named files with local rules, and read its JSON.

The command is always `semgrep scan --metrics=off --disable-version-check --json --config
<local rule files or folders> TARGETS` with SEMGREP_ENABLE_VERSION_CHECK=0: no registry
configs, no metrics, no version check, so a scan never waits on the network. Only the
targets given are scanned (a pull request's changed files), run from `root` with relative
paths so that findings come back under the same names.

Semgrep's native command line (osemgrep, `--experimental`) runs the same engine on the same
rules and writes the same JSON, but starts in about a quarter of the time of the Python one
(which spends ~2 s importing itself and re-parsing the rules on every run). It is the default;
where it gives no JSON (an old semgrep without it), the scan is run again the classic way.
RTCBOT_SEMGREP_ENGINE=python always uses the classic command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RULES_DIR = Path(__file__).resolve().parent / "rules"
BASE_FLAGS: tuple[str, ...] = ("scan", "--metrics=off", "--disable-version-check", "--json")
NATIVE_FLAGS: tuple[str, ...] = ("--experimental",)  # the native command line (osemgrep)
# Syntax errors Semgrep reports (error code 3 / these types) make a file "unparsable".
_PARSE_ERROR_TYPES = ("PartialParsing", "Syntax error", "Lexical error", "Parse error")


class SemgrepUnavailable(RuntimeError):
    """No semgrep executable could be found (one clear line)."""


class SemgrepFailed(RuntimeError):
    """Semgrep ran but gave no readable result (one clear line)."""


def find_semgrep(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The semgrep to run: `explicit`, $RTCBOT_SEMGREP, the one next to this Python, PATH."""
    for candidate in (explicit, os.environ.get("RTCBOT_SEMGREP")):
        if candidate:
            found = shutil.which(str(candidate))
            return found if found else None
    beside = Path(sys.executable).parent / "semgrep"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("semgrep")


@dataclass(frozen=True)
class SemgrepFinding:
    rule_id: str
    path: str
    start_line: int
    end_line: int
    message: str
    severity: str = "WARNING"  # ERROR | WARNING | INFO
    cwe: tuple[str, ...] = ()
    category: str = ""
    start_col: int = 1
    end_col: int = 1

    def lines(self) -> range:
        return range(self.start_line, self.end_line + 1)

    def touches(self, lines: Iterable[int]) -> bool:
        wanted = set(lines)
        return any(n in wanted for n in self.lines())

    @property
    def level(self) -> str:
        """The report level: failure for ERROR, warning for WARNING, notice otherwise."""
        return {"ERROR": "failure", "WARNING": "warning"}.get(self.severity.upper(), "notice")


@dataclass
class ScanResult:
    findings: list[SemgrepFinding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line each
    unparsable: set[str] = field(default_factory=set)  # paths with syntax errors
    argv: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)

    def in_path(self, path: str) -> list[SemgrepFinding]:
        return [f for f in self.findings if f.path == path]


def short_rule_id(check_id: str) -> str:
    """Semgrep prefixes local rule ids with the config's dotted path; keep the rule's own id."""
    return check_id.rsplit(".", 1)[-1]


def _cwe(meta: dict[str, Any]) -> tuple[str, ...]:
    raw = meta.get("cwe", ())
    items = [raw] if isinstance(raw, str) else list(raw or ())
    return tuple(str(x) for x in items)


def _is_parse_error(err: dict[str, Any]) -> bool:
    kind = err.get("type")
    name = kind[0] if isinstance(kind, list) and kind else str(kind or "")
    return err.get("code") == 3 or any(t in name for t in _PARSE_ERROR_TYPES)


def parse_output(data: dict[str, Any]) -> ScanResult:
    """Semgrep's --json output → ScanResult (pure)."""
    out = ScanResult()
    for r in data.get("results", []):
        extra = r.get("extra", {}) or {}
        meta = extra.get("metadata", {}) or {}
        out.findings.append(SemgrepFinding(
            rule_id=short_rule_id(str(r.get("check_id", ""))),
            path=str(r.get("path", "")),
            start_line=int(r["start"]["line"]),
            end_line=int(r["end"]["line"]),
            start_col=int(r["start"].get("col", 1)),
            end_col=int(r["end"].get("col", 1)),
            message=" ".join(str(extra.get("message", "")).split()),
            severity=str(extra.get("severity", "WARNING")),
            cwe=_cwe(meta),
            category=str(meta.get("category", "")),
        ))
    for e in data.get("errors", []):
        path = e.get("path") or ""
        if _is_parse_error(e) and path:
            out.unparsable.add(str(path))
        first = str(e.get("message", "") or e.get("type", "error")).strip().splitlines()
        out.errors.append(f"{path + ': ' if path else ''}{first[0] if first else 'error'}")
    out.findings.sort(key=lambda f: (f.path, f.start_line, f.start_col, f.rule_id))
    return out


def rule_configs(extra: Sequence[str | os.PathLike[str]] = ()) -> list[Path]:
    """Our rules folder plus extra local rule files or folders (checked to exist)."""
    configs = [RULES_DIR]
    for item in extra:
        p = Path(item).expanduser()
        if not p.exists():
            raise SemgrepFailed(f"rule path {str(p)!r} does not exist")
        configs.append(p)
    return configs


def engines() -> list[tuple[str, ...]]:
    """The command lines to try, in order: native then classic, or only classic."""
    if os.environ.get("RTCBOT_SEMGREP_ENGINE", "").strip().lower() == "python":
        return [()]
    return [NATIVE_FLAGS, ()]


def build_argv(exe: str, configs: Sequence[Path], targets: Sequence[str],
               engine: Sequence[str] = ()) -> list[str]:
    argv = [exe, *BASE_FLAGS, *engine]
    for c in configs:
        argv += ["--config", str(c)]
    return argv + ["--", *targets]


def scan(
    root: Path,
    targets: Sequence[str],
    *,
    extra_rules: Sequence[str | os.PathLike[str]] = (),
    semgrep: str | None = None,
    timeout: float = 600.0,
) -> ScanResult:
    """Scan exactly `targets` (paths relative to `root`). Raises SemgrepUnavailable / SemgrepFailed."""
    exe = find_semgrep(semgrep)
    if exe is None:
        where = f" ({semgrep!r} not found)" if semgrep else ""
        raise SemgrepUnavailable(f"semgrep is not installed{where}; install it with `pip install semgrep`")
    targets = list(dict.fromkeys(targets))
    if not targets:
        return ScanResult()
    configs = rule_configs(extra_rules)
    failure = ""
    for engine in engines():
        argv = build_argv(exe, configs, targets, engine)
        data = _run_json(argv, root, timeout)
        if isinstance(data, dict):
            result = parse_output(data)
            result.argv, result.targets = argv, targets
            return result
        failure = data
    raise SemgrepFailed(failure)


def _run_json(argv: list[str], root: Path, timeout: float) -> dict[str, Any] | str:
    """Semgrep's JSON output, or why there is none. Raises on a timeout or no executable."""
    env = dict(os.environ, SEMGREP_ENABLE_VERSION_CHECK="0", SEMGREP_SEND_METRICS="off")
    try:
        proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise SemgrepFailed(f"semgrep did not finish within {timeout:.0f} s") from None
    except OSError as e:
        raise SemgrepUnavailable(f"cannot run semgrep ({argv[0]}): {e}") from None
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        return data
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    return f"semgrep failed (exit {proc.returncode}): {tail[0][:300]}"
