"""Issue #47 item 4: a hunk's label does not depend on the input mode. The same commit reviewed
as a patch file with its checkout (`rtcbot review p.diff --repo R`) and as a git range
(`--git BASE..HEAD --repo R`) names every hunk alike; a patch file alone (no checkout to read
the head from) names a hunk outside any definition alike too (git's context line), and a hunk
in a definition by git's context line (the definition is known only from the head's file)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from bot.entry import main
from tests.bot.test_cli import llm_args
from tests.fakes.llm_server import RoundTrips, ScriptedLLM

BEFORE = ("import os\n\n\ndef f(x):\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    return x + 1\n"
          + "\n" * 3 + "X = 1\n" * 10 + "html_sidebars = {\n    'a': 1,\n}\n")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(repo), *args],
                          check=True, capture_output=True, text=True).stdout


def _titles(srv: ScriptedLLM, *args: str) -> list[str]:
    r = CliRunner().invoke(main, ["review", *args, *llm_args(srv), "--format", "json", "-q"])
    assert r.exit_code == 0, r.output
    return [f["title"] for f in json.loads(r.stdout)["reports"][0]["findings"]]


def test_a_hunks_label_is_the_same_from_a_patch_file_or_git(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "conf.py").write_text(BEFORE)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "a")
    (repo / "conf.py").write_text(BEFORE.replace("x + 1", "x + 2").replace("'a': 1", "'a': 2"))
    _git(repo, "commit", "-qam", "b")
    patch = tmp_path / "p.diff"
    patch.write_text(_git(repo, "diff", "HEAD~1", "HEAD"))
    srv = scripted_llm(RoundTrips())
    from_git = _titles(srv, "--git", "HEAD~1..HEAD", "--repo", str(repo))
    assert from_git == ["function f", "X = 1"]  # the definition; outside any, git's context line
    assert _titles(srv, str(patch), "--repo", str(repo)) == from_git
    alone = _titles(srv, str(patch))  # no head file: git's context line for both
    assert alone[1] == from_git[1] and alone[0] == "def f(x):"
