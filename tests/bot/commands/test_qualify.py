"""`rtcbot qualify` on a real git repository built here, against two scripted endpoints: one
that re-creates each edit from its own description, one that answers "Edit."-like noise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.entry import main
from tests.fakes.llm_server import ScriptedLLM, last_user_text
from tests.support import require

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """20 commits: small edits to a Python and a JavaScript file, and one to a README (not code)."""
    require(shutil.which("git"), "git is not installed")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    py = [f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(8)]
    js = [f"function g{i}(a) {{\n  return a * {i};\n}}\n\n" for i in range(8)]
    for n in range(20):
        if n == 0:
            (root / "m.py").write_text("".join(py))
            (root / "w.js").write_text("".join(js))
        elif n == 10:
            (root / "README.md").write_text("# demo\n")
        elif n % 2:
            i = n % 8
            py[i] = f"def f{i}(x):\n    return x - {n}  # v{n}\n\n\n"
            (root / "m.py").write_text("".join(py))
        else:
            i = n % 8
            js[i] = f"function g{i}(a) {{\n  return a + {n}; // v{n}\n}}\n\n"
            (root / "w.js").write_text("".join(js))
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"change {n}")
    return root


def _new_code(text: str) -> str:
    body = text.split("[new]\n", 1)[1].split("\n", 1)[1]
    return body[: body.rfind("\n```")]


def recreator() -> Callable[[dict[str, Any]], str | list[str]]:
    """Describes each edit as a numbered instruction and re-creates it from that number."""
    edits: list[str] = []

    def answer(req: dict[str, Any]) -> str | list[str]:
        text = last_user_text(req)
        if "[edit description]" not in text:
            edits.append(_new_code(text))
            k = len(edits) - 1
            return [f"Apply change number {k}." for _ in range(int(req.get("n") or 1))]
        desc = text.rsplit("[edit description]", 1)[1]
        if "change number" not in desc:
            return "```\nunknown\n```\n[end]"
        k = int(desc.split("change number", 1)[1].strip().rstrip("."))
        return f"```\n{edits[k]}\n```\n[end]"

    return answer


def qualify(*args: str) -> Any:
    return CliRunner().invoke(main, ["qualify", *args])


@pytest.mark.slow
def test_qualifies_the_model_that_recreates_edits(scripted_llm: Callable[..., ScriptedLLM], repo: Path,
                                                  tmp_path: Path) -> None:
    good = scripted_llm(recreator(), model="A")
    noise = scripted_llm("Edit.", model="B")
    out = tmp_path / "q.json"
    args = ["--repo", str(repo), "--last", "20", "--model", f"{good.base_url}#A", "--model", f"{noise.base_url}#B",
            "--output", str(out), "--json", "--price-per-1k", "0.5"]
    r = qualify(*args)
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec == json.loads(out.read_text())
    assert rec["cheapest_qualified"] == "A"
    a, b = rec["models"]
    assert (a["model"], a["qualified"], b["model"], b["qualified"]) == ("A", True, "B", False)
    # 20 code hunks: the root commit's two files and 18 edits; the README commit is not code
    assert rec["hunks_available"] == 20 and a["hunks"] == b["hunks"] == 20
    assert a["rtc"] == a["rtc_at_3"] == 1.0 and a["baseline"] == 0.0 and a["lift_low"] == 1.0
    assert b["rtc"] == b["lift"] == b["lift_high"] == 0.0
    assert "lower bound +0.000 is not above +0.000" in b["reasons"][0]
    assert a["requests"] == good.request_count > 0 and a["tokens"] > 0
    assert a["cost"] == pytest.approx(a["tokens"] / 1000 * 0.5)
    # A describes without code and answers code in a fence; B's "Edit." is a description but no code
    assert a["format_share"] == 1.0 and 0.0 < b["format_share"] < 1.0
    assert rec["revisions"].startswith("last 20 first-parent commits of ")
    assert rec["repository"] == "repo" and rec["date"]
    # a re-run draws the same hunks and sends nothing: all from the LLM cache
    sent = good.request_count + noise.request_count
    svg = tmp_path / "plots" / "lift.svg"
    r = qualify(*args, "--plot", str(svg))
    assert r.exit_code == 0, r.output
    again = json.loads(r.stdout)
    text = svg.read_text(encoding="utf-8")
    assert ET.fromstring(text).tag.endswith("svg")
    assert "qualified: A: lift per model on repo (20 hunks)" in text  # the title, and the accessible name
    assert good.request_count + noise.request_count == sent
    assert again["models"][0]["requests"] == 0 and again["models"][0]["cache_hits"] > 0
    assert again["models"][0]["rtc"] == 1.0


def test_table_markdown_and_bound(scripted_llm: Callable[..., ScriptedLLM], repo: Path, tmp_path: Path) -> None:
    noise = scripted_llm("Edit.", model="B")
    base = ["--repo", str(repo), "--llm-base-url", noise.base_url, "--model", "B", "--max-hunks", "5",
            "--output", str(tmp_path / "q.json")]
    r = qualify(*base)
    assert r.exit_code == 1  # no model qualified
    assert "no model qualified" in r.stdout and "not qualified" in r.stdout
    assert json.loads((tmp_path / "q.json").read_text())["models"][0]["hunks"] == 5
    r = qualify(*base, "--format", "markdown")
    assert r.stdout.startswith("### rtcbot qualify: repo") and "| B | 5 |" in r.stdout
    assert "**no model qualified**" in r.stdout


def test_git_range_and_bad_input(scripted_llm: Callable[..., ScriptedLLM], repo: Path, tmp_path: Path) -> None:
    good = scripted_llm(recreator(), model="A")
    r = qualify("--repo", str(repo), "--git", "HEAD~4..HEAD", "--llm-base-url", good.base_url, "--model", "A",
                "--json", "--output", str(tmp_path / "q.json"))
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["revisions"] == "HEAD~4..HEAD" and rec["models"][0]["hunks"] == 4
    for args, words in [
        (["--git", "HEAD"], "expected BASE..HEAD"),
        (["--git", "--output=x..y"], "expected BASE..HEAD"),
        (["--git", "nope..HEAD"], "git rev-list failed"),
        (["--git", "HEAD~1..HEAD", "--last", "3"], "either --git"),
        (["--model", "http://x#"], "no model name"),
        (["--price-per-1k", "cheap"], "expected PRICE or MODEL=PRICE"),
    ]:
        r = qualify("--repo", str(repo), *args)
        assert r.exit_code != 0 and words in r.output, (args, r.output)
        assert "Traceback" not in r.output
    r = qualify("--repo", str(tmp_path / "missing"))
    assert r.exit_code == 1 and "no such directory" in r.output
    empty = tmp_path / "empty"
    empty.mkdir()
    r = qualify("--repo", str(empty))
    assert r.exit_code == 1 and "git rev-list failed" in r.output


def test_review_refuses_an_unqualified_model(scripted_llm: Callable[..., ScriptedLLM], repo: Path,
                                             tmp_path: Path) -> None:
    good = scripted_llm(recreator(), model="A")
    noise = scripted_llm("Edit.", model="B")
    r = qualify("--repo", str(repo), "--last", "20", "--model", f"{good.base_url}#A",
                "--model", f"{noise.base_url}#B", "--max-hunks", "4")
    assert r.exit_code == 0, r.output
    assert (repo / ".rtcbot" / "qualification.json").is_file()  # the default record
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text("require_qualified: true\n")
    noise.reset()
    review = ["review", "--git", "HEAD~1..HEAD", "--repo", str(repo), "--config", str(cfg), "--format", "json",
              "--no-cache"]
    r = CliRunner().invoke(main, [*review, "--llm-base-url", noise.base_url, "--model", "B"])
    assert r.exit_code == 1
    assert "this run's model 'B' is not qualified for this repository" in r.stderr
    assert noise.request_count == 0  # the unqualified model was never asked
    good.reset()
    r = CliRunner().invoke(main, [*review, "--llm-base-url", good.base_url, "--model", "A"])
    assert r.exit_code == 0, r.output
    assert good.request_count > 0 and "not qualified" not in r.stderr
    # without the setting, the record does not matter
    cfg.write_text("require_qualified: false\n")
    r = CliRunner().invoke(main, [*review, "--llm-base-url", noise.base_url, "--model", "B"])
    assert r.exit_code == 0 and noise.request_count > 0
