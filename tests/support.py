"""Small helpers shared by the tests."""

from __future__ import annotations

import ast
import os
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"  # real diffs, vulnerable programs, webhook payloads
DATA = ROOT / "bot" / "cli" / "datasets"  # the bundled evaluation datasets (package data)
IN_CI = os.environ.get("CI") == "true"
# For the `rtcbot worker` processes tests start, whose pull requests carry no Java: a worker's
# warm-up would start PMD's JVM and run it eight times for nothing, about 7 CPU-s a worker (with
# 32 workers, a tenth of the xdist lane's CPU). The warm-up itself is tested in
# tests/analyzers/crscore, and tests/deploy runs the documented set-up, which keeps it.
NO_PMD_WARM_UP = {"RTCBOT_PMD_SERVER": "off"}


def syntax_nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a Python file's syntax tree (ast.walk's order), read and parsed once per
    process for each version of the file: six tests read the whole product's tree (its limits,
    import cycles, the names it uses), ~2 s of CPU a reading. The nodes are shared: read them,
    never change them."""
    stat = path.stat()
    return _syntax_nodes(path.resolve(), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=1024)
def _syntax_nodes(path: Path, mtime_ns: int, size: int) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))))


def require(condition: object, reason: str) -> None:
    """Skip with a reason outside CI; fail in CI, where everything must be present."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)
