"""The project's own CI (.github/workflows/ci.yml) runs what `.ci/run` runs, with the services
the suite needs, pinned actions and least permissions; `make lint` runs actionlint and zizmor
over it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / ".github" / "workflows" / "ci.yml"


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(CI.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _runs(job: dict[str, Any]) -> list[str]:
    return [str(s["run"]).strip() for s in job["steps"] if "run" in s]


def test_ci_runs_on_pull_requests_and_pushes_to_main() -> None:
    on = _workflow()[True]  # YAML 1.1 reads the key `on` as a boolean
    assert "pull_request" in on
    assert on["push"]["branches"] == ["main"]


def test_the_test_job_runs_the_same_command_as_ci_run() -> None:
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = [line for line in ci_run.splitlines() if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert command == ["make test"]
    job = _workflow()["jobs"]["test"]
    assert "make test" in _runs(job)
    assert set(job["services"]) == {"postgres", "redis"}
    assert job["env"]["CI"] == "true"
    installs = " ".join(_runs(job))
    assert "chromium" in installs and "bubblewrap" in installs
    assert "prometheus" in installs  # promtool, for the alert rules (tests/deploy/test_alerts.py)


def test_rtcbot_reviews_its_own_pull_requests_without_failing_on_scores() -> None:
    job = _workflow()["jobs"]["review"]
    assert "pull_request" in job["if"]
    action = [r for r in _runs(job) if "rtcbot action" in r]
    assert len(action) == 1 and '--fail-on ""' in action[0]
    assert job["permissions"]["checks"] == "write"


def test_actions_are_pinned_by_commit_and_permissions_are_least() -> None:
    wf = _workflow()
    assert wf["permissions"] == {}
    for name, job in wf["jobs"].items():
        assert "write" not in {v for k, v in job["permissions"].items() if k != "checks"}, name
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
