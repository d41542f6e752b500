"""Run Semgrep offline on named files with local rules, and read its JSON.

The command is always `semgrep scan --metrics=off --disable-version-check --json --verbose
--disable-nosem --max-target-bytes N --config <local rule files or folders> -- TARGETS`, run through
`analyzers.tools.programs` (a clean environment with SEMGREP_ENABLE_VERSION_CHECK=0, a private HOME,
`root` as the working directory): no registry configs, no metrics, no version check, so a
scan never waits on the network. Inline suppressions (`# nosemgrep`) are not honoured by Semgrep:
the one scan reports every finding, and the caller keeps the base branch's suppressions only
(analyzers/code/suppressions.py). Only the targets given are scanned (a pull request's changed
files), with paths relative to `root`, each under a neutral name in its language's extension so
that no name (`*.min.js`, `.mts`, a shebang script) leaves it out (analyzers/semgrep/targets.py);
findings come back under the targets' own names.

Semgrep's native command line (osemgrep, `--experimental`) runs the same engine on the same
rules and writes the same JSON, but starts in about a quarter of the time of the Python one
(which spends ~2 s importing itself and re-parsing the rules on every run). It is the default;
where it gives no JSON (an old semgrep without it), the scan is run again the classic way.
`engine="python"` (the operator's RTCBOT_SEMGREP_ENGINE=python) always uses the classic one.

Gates that hold: every target is either scanned or listed in `ScanResult.skipped` with the
reason (Semgrep's own `paths.skipped`, such as the size limit, or "not scanned" for one it
dropped without saying); targets go in batches (MAX_BATCH_TARGETS names, MAX_BATCH_ARG_BYTES
bytes) so that the argument list never exceeds the system's limit; an error Semgrep reports
for a file (a timeout, out of memory) puts it in `ScanResult.failed`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from analyzers.semgrep.targets import aliased
from analyzers.tools.programs import run, tool_path

RULES_DIR = Path(__file__).resolve().parent / "rules"
# --verbose: the JSON lists skipped targets; --disable-nosem: a `# nosemgrep` hides nothing here
# (the analyzer honours only the base branch's: analyzers/code/suppressions.py)
BASE_FLAGS: tuple[str, ...] = ("scan", "--metrics=off", "--disable-version-check", "--json",
                               "--verbose", "--disable-nosem")
# Semgrep's own default: a larger file is skipped (and reported as skipped, never silently).
MAX_TARGET_BYTES = 1_000_000
# One run gets at most this many targets / bytes of target names: a quarter of the system's
# limit on arguments and environment together (ARG_MAX: 2 MiB on Linux), at most 512 KiB.
MAX_BATCH_TARGETS = 1000
MAX_BATCH_ARG_BYTES = min(512 * 1024, os.sysconf("SC_ARG_MAX") // 4)
_ENV = {"SEMGREP_ENABLE_VERSION_CHECK": "0", "SEMGREP_SEND_METRICS": "off"}
NATIVE_FLAGS: tuple[str, ...] = ("--experimental",)  # the native command line (osemgrep)
# Syntax errors Semgrep reports (error code 3 / these types) make a file "unparsable".
_PARSE_ERROR_TYPES = ("PartialParsing", "Syntax error", "Lexical error", "Parse error")
# paths.skipped's reason for a file whose analysis failed (its error is in "errors" too)
_ANALYSIS_FAILED = "analysis_failed_parser_or_internal_error"
_TOO_BIG = ("too_big", "exceeded_size_limit")  # paths.skipped's reasons for the size limit
SIZE_LIMIT = "over Semgrep's size limit"  # how ScanResult.skipped says such a file (in `oversize`)


class SemgrepUnavailable(RuntimeError):
    """No semgrep executable could be found (one clear line)."""


class SemgrepFailed(RuntimeError):
    """Semgrep ran but gave no readable result (one clear line)."""


def find_semgrep(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The semgrep to run: `explicit` (the operator's: `Tools.semgrep`, RTCBOT_SEMGREP), else
    `semgrep`. A name is looked up only on the tool PATH (our interpreter's folder, then the
    system's), a path must be absolute: never a program found relative to the folder we are in."""
    return _executable(os.fspath(explicit) if explicit else "semgrep")


def _executable(name: str) -> str | None:
    if "/" not in name:
        return shutil.which(name, path=tool_path())
    p = Path(name).expanduser()
    if not p.is_absolute():
        return None
    return str(p) if p.is_file() and os.access(p, os.X_OK) else None


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
    argv: list[str] = field(default_factory=list)  # the first run's command line
    targets: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # target → why Semgrep did not scan it
    failed: dict[str, str] = field(default_factory=dict)  # target → an error other than syntax
    oversize: set[str] = field(default_factory=set)  # the skipped targets over Semgrep's size limit
    runs: int = 0  # Semgrep processes started (batches, and the classic retry)

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


def parse_output(data: dict[str, Any], targets: Sequence[str] = ()) -> ScanResult:
    """Semgrep's --json output → ScanResult (pure). With `targets`, any target that Semgrep
    neither scanned nor listed as skipped is recorded as skipped all the same."""
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
        first = str(e.get("message", "") or e.get("type", "error")).strip().splitlines()
        line = first[0] if first else "error"
        if _is_parse_error(e) and path:
            out.unparsable.add(str(path))
        elif path:
            out.failed.setdefault(str(path), " ".join(line.split())[:300])
        out.errors.append(f"{path + ': ' if path else ''}{line}")
    paths = data.get("paths", {}) or {}
    for item in paths.get("skipped", []) or []:
        if not (isinstance(item, dict) and item.get("path")):
            continue
        path, reason = str(item["path"]), str(item.get("reason") or "")
        why = " ".join(str(item.get("details") or reason or "skipped by semgrep").split())[:300]
        if reason == _ANALYSIS_FAILED:  # a syntax error (unparsable) or an internal one
            if path not in out.unparsable:
                out.failed.setdefault(path, why)
        elif reason.lower() in _TOO_BIG:
            out.skipped[path] = f"{SIZE_LIMIT}: {why}"
            out.oversize.add(path)
        else:
            out.skipped[path] = why
    if targets:
        scanned = {str(p) for p in paths.get("scanned", []) or []}
        for t in targets:
            if t not in scanned and t not in out.skipped and t not in out.failed:
                out.skipped[t] = "not scanned by semgrep (no reason given)"
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


def engines(engine: str = "auto") -> list[tuple[str, ...]]:
    """The command lines to try, in order: native then classic, or (`python`) only classic."""
    if engine == "python":
        return [()]
    return [NATIVE_FLAGS, ()]


def build_argv(exe: str, configs: Sequence[Path], targets: Sequence[str],
               engine: Sequence[str] = (), max_target_bytes: int = MAX_TARGET_BYTES) -> list[str]:
    argv = [exe, *BASE_FLAGS, *engine, f"--max-target-bytes={max_target_bytes}"]
    for c in configs:
        argv += ["--config", str(c)]
    return argv + ["--", *targets]


def batches(targets: Sequence[str], max_targets: int = MAX_BATCH_TARGETS,
            max_bytes: int = MAX_BATCH_ARG_BYTES) -> Iterator[list[str]]:
    """`targets` in order, cut so that no batch has more than `max_targets` names or more
    than `max_bytes` bytes of them (a name alone over the limit is a batch of its own)."""
    batch: list[str] = []
    size = 0
    for t in targets:
        n = len(os.fsencode(t)) + 1
        if batch and (len(batch) >= max_targets or size + n > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(t)
        size += n
    if batch:
        yield batch


def scan(
    root: Path,
    targets: Sequence[str],
    *,
    extra_rules: Sequence[str | os.PathLike[str]] = (),
    semgrep: str | None = None,
    timeout: float = 600.0,
    max_target_bytes: int | None = None,
    engine: str = "auto",
    languages: Mapping[str, str | None] | None = None,
) -> ScanResult:
    """Scan exactly `targets` (paths relative to `root`), in batches, within `timeout` seconds
    in all, whatever their names: each in its language (`languages`, else what its name and
    content say: analyzers/semgrep/targets.py); a file over `max_target_bytes` (None:
    MAX_TARGET_BYTES) is skipped, with why; `engine`: see `engines`. Raises SemgrepUnavailable /
    SemgrepFailed."""
    max_target_bytes = max_target_bytes or MAX_TARGET_BYTES
    exe = find_semgrep(semgrep)
    if exe is None:
        where = (f" ({semgrep!r} not found: give an absolute path or a program name on PATH)"
                 if semgrep else "")
        raise SemgrepUnavailable(f"semgrep is not installed{where}; install it with `pip install semgrep`")
    targets = list(dict.fromkeys(targets))
    if not targets:
        return ScanResult()
    configs = rule_configs(extra_rules)
    deadline = time.monotonic() + timeout
    todo = engines(engine)
    total = ScanResult()
    with aliased(root, targets, languages) as names:
        for batch in batches(list(names)):
            result = _scan_batch(exe, configs, batch, root, deadline, timeout, todo,
                                 max_target_bytes, total)
            total.findings += result.findings
            total.errors += result.errors
            total.unparsable |= result.unparsable
            total.skipped.update(result.skipped)
            total.failed.update(result.failed)
            total.oversize |= result.oversize
            total.argv = total.argv or result.argv
    total = unalias(total, names)
    total.targets = targets
    total.findings.sort(key=lambda f: (f.path, f.start_line, f.start_col, f.rule_id))
    return total


def unalias(result: ScanResult, names: Mapping[str, str]) -> ScanResult:
    """The result with every name Semgrep was given read back as its target's own."""
    def own(path: str) -> str:
        return names.get(path, path)

    errors = []
    for line in result.errors:
        alias = line.split(": ", 1)[0]
        errors.append(own(alias) + line[len(alias):] if alias in names else line)
    return replace(
        result, findings=[replace(f, path=own(f.path)) for f in result.findings], errors=errors,
        unparsable={own(p) for p in result.unparsable},
        skipped={own(p): why for p, why in result.skipped.items()},
        failed={own(p): why for p, why in result.failed.items()}, oversize={own(p) for p in result.oversize})


def _scan_batch(exe: str, configs: Sequence[Path], batch: list[str], root: Path,
                deadline: float, timeout: float, todo: list[tuple[str, ...]],
                max_target_bytes: int, total: ScanResult) -> ScanResult:
    """One batch, native then classic; an engine that gives no JSON is dropped from `todo`
    (for the batches after this one too)."""
    failure = ""
    while todo:
        argv = build_argv(exe, configs, batch, todo[0], max_target_bytes)
        left = deadline - time.monotonic()
        if left <= 0:
            raise SemgrepFailed(f"semgrep did not finish within {timeout:.0f} s")
        total.runs += 1
        data = _run_json(argv, root, left, timeout)
        if isinstance(data, dict):
            result = parse_output(data, batch)
            result.argv = argv
            return result
        failure = data
        todo.pop(0)
    raise SemgrepFailed(failure)


def _run_json(argv: list[str], root: Path, left: float, timeout: float) -> dict[str, Any] | str:
    """Semgrep's JSON output, or why there is none. Raises on a timeout or no executable."""
    try:
        proc = run(argv, timeout=left, cwd=root, extra_env=_ENV)
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
