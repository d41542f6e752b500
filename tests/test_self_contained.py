"""The repository stands alone: nothing in it reads a path outside it.

A clone must run its tests, benchmarks and evaluations with nothing beside it. These tests
fail when code, tests, benchmarks, the README, docs, workflows or build files name the team's
reference shelf (the `shared` folder beside the checkout, by a relative path or a path built
to it) or an absolute path of this machine (the workplace root, the checkout's own location,
the home folder), when a link points out of the repository, or when a folder of copied data
lacks its SOURCES.md (origin, commit, licence).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.datasets import BUNDLED
from tests.support import DATA, FIXTURES, ROOT

# Folders that are not the project's own text: local state, caches, installed tools.
SKIP_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
                       ".ruff_cache", ".pytest_cache", ".hypothesis", ".rtcbot", "build", "dist"})
SKIP_SUFFIXES = (".pyc", ".sqlite3", ".db", ".whl", ".gz", ".zip", ".png", ".jpg", ".gguf")
# Copied third-party data (checked for links and SOURCES.md, not for its text).
DATA_DIRS = (FIXTURES, DATA)

# An absolute path starts a word: at the start of a line or after a space, a quote, `=`, `(`,
# `:`, `,` or `[`; so a process's `root` link under /proc is not the home folder named root.
START = r"(?<![^\s\"'`=(:,\[])"
OUTSIDE = [
    re.compile(r"\.\.[/\\]+shared\b"),  # up one folder, then the shelf
    re.compile(r"""(?:/|joinpath\(|join\([^)]*,)\s*["']shared["']"""),  # a path built to it
    re.compile(START + r"/work(?=/)"),  # this workplace's root
]


def machine_paths(root: Path) -> list[str]:
    """Absolute paths of this machine that must not be written down: where the checkout lies
    and the home folder (each with a trailing slash, so `/work` in `-w /work` is fine)."""
    paths = {str(root) + os.sep, str(root.parent) + os.sep, str(Path.home()) + os.sep}
    shared = {tempfile.gettempdir() + os.sep, "/tmp/", "/var/tmp/"}  # a clone may lie there; /tmp is no secret
    return sorted(p for p in paths if len(Path(p).parts) > 1 and p not in shared)  # never "/" alone


def project_files(root: Path) -> Iterator[Path]:
    """Every file of the project's own text under `root` (local state and caches left out)."""
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        here = Path(folder)
        for name in sorted(names):
            path = here / name
            # a worktree's .git is a file naming the main checkout's git folder: git's, not ours
            if name == ".git" or path.suffix in SKIP_SUFFIXES or path.is_symlink():
                continue
            if any(path.is_relative_to(d) for d in DATA_DIRS) and name != "SOURCES.md":
                continue
            yield path


def offences(root: Path) -> list[str]:
    """"path:line: text" for each line that names a place outside the repository."""
    patterns = [*OUTSIDE, *(re.compile(START + re.escape(p)) for p in machine_paths(root))]
    found = []
    for path in project_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary: no paths written in it by hand
        for no, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in patterns):
                found.append(f"{path.relative_to(root)}:{no}: {line.strip()[:160]}")
    return found


def test_nothing_names_a_path_outside_the_repository() -> None:
    found = offences(ROOT)
    assert not found, "paths outside the repository:\n" + "\n".join(found)


UP, SHELF = "..", "shared"  # kept apart, so that this file does not name the shelf itself


@pytest.mark.parametrize("line", [
    f'DATA = ROOT.parent / "{SHELF}" / "data"',
    f"QUIX = Path('{UP}/{SHELF}/data/repair/quixbugs-python-dev.jsonl')",
    f"rtcbot eval crscore {UP}/{SHELF}/data/crscore-human/dev.jsonl",
    f'SHARED = os.path.join(ROOT, "..", "{SHELF}")',
    f"DEV = Path('/{'work'}/{SHELF}/data/crscore-human/dev.jsonl')",
])
def test_the_guard_catches_each_way_of_naming_the_shelf(tmp_path: Path, line: str) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(f"{line}\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("rtcbot eval crscore crscore-dev\n", encoding="utf-8")
    assert offences(tmp_path) == [f"tests/test_x.py:1: {line}"]


def test_the_guard_catches_this_machines_absolute_paths(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(f"see {tmp_path}/docs/b.md\n", encoding="utf-8")
    assert [o.split(":")[0] for o in offences(tmp_path)] == [str(Path("docs") / "a.md")]


def test_the_guard_leaves_paths_inside_a_container_or_proc_alone(tmp_path: Path) -> None:
    lines = ['docker run -v "$PWD:/work" -w /work rtcbot review change.diff',
             'path = f"/proc/{pid}/root/proc"', "WORKDIR /home/rtcbot", "see https://example.org/work/x"]
    (tmp_path / "Dockerfile").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert offences(tmp_path) == []


def test_no_link_points_out_of_the_repository() -> None:
    outside = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in [*dirs, *names]:
            path = Path(folder) / name
            if path.is_symlink() and not path.resolve().is_relative_to(ROOT):
                outside.append(f"{path.relative_to(ROOT)} -> {os.readlink(path)}")
    assert not outside


def test_every_folder_of_copied_data_has_its_sources() -> None:
    folders = {p.parent for d in DATA_DIRS for p in d.rglob("*")
               if p.is_file() and p.suffix in (".json", ".jsonl", ".diff", ".py") and p.name != "__init__.py"}
    assert folders
    for folder in sorted(folders):
        # SOURCES.md sits in the folder or in one of its parents inside the data folder
        owner = next((f for f in (folder, *folder.parents) if (f / "SOURCES.md").is_file()), None)
        assert owner is not None and any(owner.is_relative_to(d) for d in DATA_DIRS), folder
        sources = (owner / "SOURCES.md").read_text(encoding="utf-8")
        assert re.search(r"\b[0-9a-f]{40}\b", sources), f"{owner}/SOURCES.md names no commit"
        assert re.search(r"\b(MIT|Apache License 2\.0)\b", sources), f"{owner}/SOURCES.md names no licence"


def test_the_tests_and_the_bundled_datasets_live_in_the_repository() -> None:
    assert FIXTURES.is_relative_to(ROOT) and DATA.is_relative_to(ROOT)
    for ds in BUNDLED.values():  # the tests read the same files the package ships
        assert Path(str(ds.file())) == DATA / ds.resource, ds.name
