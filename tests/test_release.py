"""The release: a version tag publishes the image that action.yml runs.

Checked statically (no Docker engine or GitHub here): the workflow runs on version tags only,
with no permission by default and only `contents: read` + `packages: write` for its job,
every action pinned to a commit SHA, the image tested before it is pushed; action.yml runs
the image of the package's own version; actionlint and zizmor (offline) pass on every
workflow, and would catch an unpinned action or a script injection.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import ROOT, require

RELEASE = ROOT / ".github" / "workflows" / "release.yml"
WORKFLOWS = [RELEASE, *sorted((ROOT / "docs" / "workflows").glob("*.yml"))]
ZIZMOR_CONFIG = ROOT / ".github" / "zizmor.yml"


def load(path: Path) -> dict[Any, Any]:
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")))


def tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])


def test_action_runs_the_published_image_of_its_own_version() -> None:
    owner = json.loads((ROOT / "bot" / "app" / "manifest.json").read_text(encoding="utf-8"))["url"].split("/")[-2]
    runs = load(ROOT / "action.yml")["runs"]
    assert runs["using"] == "docker"
    assert runs["image"] == f"docker://ghcr.io/{owner.lower()}/rtcbot:v{version()}"


def test_release_runs_on_version_tags_with_least_privilege() -> None:
    wf = load(RELEASE)
    triggers = wf[True] if True in wf else wf["on"]  # YAML 1.1 reads `on` as true
    assert list(triggers) == ["push"] and list(triggers["push"]) == ["tags"]
    assert wf["permissions"] == {}
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read", "packages": "write"}
    steps = job["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


def test_every_action_is_pinned_to_a_commit() -> None:
    for path in WORKFLOWS:
        for job in load(path)["jobs"].values():
            for step in job["steps"]:
                uses = step.get("uses")
                if uses and not uses.startswith("YOUR-ORG/"):  # the template's placeholder
                    assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), f"{path.name}: {uses}"


def test_the_image_is_tested_before_it_is_pushed() -> None:
    steps = [s.get("run", "") for s in next(iter(load(RELEASE)["jobs"].values()))["steps"]]
    text = "\n".join(steps)
    agree = text.index('grep -qF "image: docker://$image" action.yml')
    build, push = text.index("docker build"), text.index("docker push")
    version_check, review = text.index('"$IMAGE" --version'), text.index("review /samples/demo.diff")
    assert agree < build < version_check < push and build < review < push
    assert (ROOT / "samples" / "demo.diff").is_file()


def test_actionlint_passes_on_every_workflow() -> None:
    exe = tool("actionlint")
    require(exe, "actionlint is not installed (the dev extras install it)")
    assert exe is not None
    p = subprocess.run([exe, *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def zizmor(*paths: Path) -> subprocess.CompletedProcess[str]:
    exe = tool("zizmor")
    require(exe, "zizmor is not installed (the dev extras install it)")
    assert exe is not None
    return subprocess.run([exe, "--offline", "--no-progress", "--config", str(ZIZMOR_CONFIG), *map(str, paths)],
                          capture_output=True, text=True, timeout=300, check=False)


def test_zizmor_passes_on_every_workflow_and_the_action() -> None:
    p = zizmor(*WORKFLOWS, ROOT / "action.yml")
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize(("change", "audit"), [
    (("actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2", "actions/checkout@v4"),
     "unpinned-uses"),
    (('grep -qF "${TAG#v}" version.txt', 'grep -qF "${{ github.event.head_commit.message }}" version.txt'),
     "template-injection"),
])
def test_zizmor_would_catch_a_bad_line(tmp_path: Path, change: tuple[str, str], audit: str) -> None:
    """Guards the guard: the same call fails on the release workflow with one bad line."""
    old, new = change
    text = RELEASE.read_text(encoding="utf-8")
    assert old in text
    bad = tmp_path / "release.yml"
    bad.write_text(text.replace(old, new), encoding="utf-8")
    p = zizmor(bad)
    assert p.returncode != 0 and audit in p.stdout + p.stderr


def test_the_commands_workflow_runs_nothing_from_the_pull_request_with_least_privilege() -> None:
    """docs/workflows/rtcbot-commands.yml: `issue_comment` runs the default branch's file with a
    write token and secrets for any pull request, so it checks nothing out, grants only what a
    reply, a reaction and a re-run need, skips bots' comments, and passes no test command."""
    wf = load(ROOT / "docs" / "workflows" / "rtcbot-commands.yml")
    triggers = wf[True] if True in wf else wf["on"]
    assert list(triggers) == ["issue_comment"] and triggers["issue_comment"]["types"] == ["created"]
    assert wf["permissions"] == {}
    (job,) = wf["jobs"].values()
    # issues: write for the reactions (GitHub's reactions on a conversation comment need it)
    assert job["permissions"] == {"contents": "read", "pull-requests": "write", "issues": "write",
                                  "checks": "write"}
    assert "github.event.issue.pull_request" in job["if"] and "user.type != 'Bot'" in job["if"]
    (step,) = job["steps"]
    assert step["uses"].startswith("YOUR-ORG/rtcbot@") and "test-command" not in step["with"]
    assert not any("checkout" in s.get("uses", "") for s in job["steps"])
