"""The wide benchmark set: real commits named in bench/data/prs/SOURCES.md, built from clones.

The set is kept in the repository beside its list (SOURCES.md, with each repository's
licence in `licences/`): each commit's diff and the changed files at that commit (what the
analyzers read at the head of the change: Semgrep scans and smell detectors look at whole
files, EditingRTC names hunks by their definitions), so the benchmark needs no build step.
This module is how they were made, and how to make them again from local clones:

    python -m bench.wide_set --git-dir pallets/click=PATH [--git-dir OWNER/NAME=PATH …]

writes `<name>.diff` and `<name>.head.json` (path → text at the commit, for every file the
commit adds or modifies) for each listed commit of those repositories.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import ROOT

WIDE = ROOT / "bench" / "data" / "prs"
_ROW = re.compile(r"^\|\s*([\w.-]+)\s*\|\s*([\w.-]+/[\w.-]+)\s*\|\s*([0-9a-f]{40})\s*\|\s*([\w.-]+)\s*\|\s*(\w+)\s*\|")


@dataclass(frozen=True)
class Source:
    name: str
    repo: str
    commit: str
    licence: str
    language: str


@dataclass(frozen=True)
class WidePR:
    source: Source
    diff: str
    head: dict[str, str]  # path → text at the commit


def manifest(folder: Path = WIDE) -> list[Source]:
    """The commits listed in the folder's SOURCES.md, in order."""
    text = (folder / "SOURCES.md").read_text(encoding="utf-8")
    return [Source(*m.groups()) for line in text.splitlines() if (m := _ROW.match(line))]


def load(folder: Path = WIDE) -> tuple[list[WidePR], list[str]]:
    """The built PRs, and the names of the listed ones not built yet."""
    built, missing = [], []
    for src in manifest(folder):
        diff, head = folder / f"{src.name}.diff", folder / f"{src.name}.head.json"
        if not (diff.is_file() and head.is_file()):
            missing.append(src.name)
            continue
        built.append(WidePR(src, diff.read_text(encoding="utf-8", errors="replace"),
                            json.loads(head.read_text(encoding="utf-8"))))
    return built, missing


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                          text=True, encoding="utf-8", errors="replace").stdout


def build_one(src: Source, git_dir: Path, out: Path) -> None:
    diff = git(git_dir, "show", "--format=", "--no-color", "--no-ext-diff", "--no-renames", src.commit)
    status = git(git_dir, "show", "--format=", "--name-status", "--no-renames", src.commit)
    paths = [line.split("\t", 1)[1] for line in status.splitlines() if line[:1] in ("A", "M")]
    head = {p: git(git_dir, "show", f"{src.commit}:{p}") for p in paths}
    (out / f"{src.name}.diff").write_text(diff, encoding="utf-8")
    (out / f"{src.name}.head.json").write_text(json.dumps(head, indent=1, sort_keys=True), encoding="utf-8")


def build(git_dirs: Mapping[str, Path], folder: Path = WIDE) -> list[str]:
    """Build every listed commit of the repositories in `git_dirs`; the names built."""
    done = []
    for src in manifest(folder):
        if src.repo in git_dirs:
            build_one(src, git_dirs[src.repo], folder)
            done.append(src.name)
    return done


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.wide_set", description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", action="append", default=[], metavar="OWNER/NAME=PATH",
                    help="a clone of a listed repository (its .git folder or a bare clone)")
    args = ap.parse_args(argv)
    listed = {s.repo for s in manifest()}
    dirs: dict[str, Path] = {}
    for item in args.git_dir:
        repo, sep, path = item.partition("=")
        if not sep or repo not in listed:
            ap.error(f"--git-dir {item!r}: give OWNER/NAME=PATH for one of {', '.join(sorted(listed))}")
        dirs[repo] = Path(path)
    try:
        done = build(dirs)
    except subprocess.CalledProcessError as e:
        print(f"git failed: {' '.join(e.cmd[1:])}: {(e.stderr or '').strip()[:300]}", file=sys.stderr)
        return 1
    _, missing = load()
    print(f"built {len(done)} PRs in {WIDE}; {len(missing)} listed PRs not built yet", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
