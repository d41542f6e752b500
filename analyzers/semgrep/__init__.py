"""Semgrep, run offline with rtcbot's own rules (`rules/*.yml`), as a scanner and an oracle."""

from analyzers.semgrep.scan import (
    RULES_DIR,
    ScanResult,
    SemgrepFinding,
    SemgrepUnavailable,
    find_semgrep,
    scan,
)

__all__ = [
    "RULES_DIR",
    "ScanResult",
    "SemgrepFinding",
    "SemgrepUnavailable",
    "find_semgrep",
    "scan",
]
