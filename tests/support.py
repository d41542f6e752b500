"""Small helpers shared by the tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"  # real diffs, vulnerable programs, webhook payloads
DATA = ROOT / "bot" / "cli" / "datasets"  # the bundled evaluation datasets (package data)
IN_CI = os.environ.get("CI") == "true"


def require(condition: object, reason: str) -> None:
    """Skip with a reason outside CI; fail in CI, where everything must be present."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)
