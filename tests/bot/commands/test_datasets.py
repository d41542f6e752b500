"""The bundled evaluation datasets: `rtcbot eval --list`, names in place of paths, the wheel.

Every command runs as a real `rtcbot` process started outside the checkout, so nothing is
found through the working directory; the wheel test builds rtcbot from a copy of its sources
and loads the datasets from the installed copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.cli.datasets import BUNDLED
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import DATA, ROOT

pytestmark = pytest.mark.slow  # every command is a new `rtcbot` process (seconds each on 2 cores)


def rtcbot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=cwd, capture_output=True,
                          text=True, env=dict(os.environ), timeout=300, check=False)


def one_clear_error(p: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("Error")]
    assert len(errors) == 1 and fragment in errors[0], p.stderr


def rows_of(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def test_list_names_every_dataset_with_its_size_licence_and_purpose(tmp_path: Path) -> None:
    p = rtcbot("eval", "--list", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    expected = {"crscore-dev": ("eval crscore", "1,750"), "codereviewer-validation": ("eval editing-rtc", "500"),
                "quixbugs-dev": ("eval repair", "19")}
    assert set(BUNDLED) == set(expected)
    for name, (command, rows) in expected.items():
        line = next(ln for ln in p.stdout.splitlines() if f" {name} " in ln)
        assert command in line and f" {rows} " in line and "MIT" in line, line
        assert rows_of(DATA / BUNDLED[name].resource) == int(rows.replace(",", ""))
    assert "pass@k" in p.stdout and "Spearman" in p.stdout  # what they measure


def test_repair_by_name_runs_the_bundled_tasks(tmp_path: Path) -> None:
    p = rtcbot("eval", "repair", "quixbugs-dev", "--use-reference", "--json", "--k", "1", "--limit", "4",
               cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    fig = json.loads(p.stdout)
    assert fig["n_tasks"] == 4 and fig["pass@1"] == 1.0


def test_a_bundled_name_wins_over_a_file_of_that_name_and_a_path_still_works(tmp_path: Path) -> None:
    first = (DATA / BUNDLED["quixbugs-dev"].resource).read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "quixbugs-dev").write_text(first + "\n", encoding="utf-8")
    args = ("--use-reference", "--json", "--k", "1", "--timeout", "5")
    bundled = rtcbot("eval", "repair", "quixbugs-dev", *args, "--limit", "2", cwd=tmp_path)
    local = rtcbot("eval", "repair", "./quixbugs-dev", *args, cwd=tmp_path)
    assert bundled.returncode == 0 and local.returncode == 0, bundled.stderr + local.stderr
    assert json.loads(bundled.stdout)["n_tasks"] == 2
    assert json.loads(local.stdout)["n_tasks"] == 1


@pytest.mark.model
def test_crscore_by_name_scores_the_human_ratings(tmp_path: Path) -> None:
    p = rtcbot("eval", "crscore", "crscore-dev", "--json", "--limit", "40", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["n"] == 36 and -1 <= out["spearman"] <= 1  # 4 diffs × 9 generated reviews


def test_editing_rtc_by_name_runs_the_codereviewer_hunks(scripted_llm: Callable[..., ScriptedLLM],
                                                         tmp_path: Path) -> None:
    srv = scripted_llm(varied, honour_n=False)
    out = tmp_path / "res.jsonl"
    p = rtcbot("eval", "editing-rtc", "codereviewer-validation", "--limit", "3", "--out", str(out),
               "--llm-base-url", srv.base_url, "--model", srv.model, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
    assert srv.request_count == 3 * 7  # the full round trip for each of the 3 hunks
    assert "validation-500-gpt4-claims" in p.stdout


def test_a_bad_dataset_is_one_clear_error(tmp_path: Path) -> None:
    one_clear_error(rtcbot("eval", "repair", "quixbugs", cwd=tmp_path), "neither a file nor a bundled dataset")
    one_clear_error(rtcbot("eval", "repair", "crscore-dev", cwd=tmp_path),
                    "'crscore-dev' is a dataset for `rtcbot eval crscore`")
    one_clear_error(rtcbot("eval", "crscore", str(tmp_path), cwd=tmp_path), "is a directory")


def test_the_wheel_ships_the_datasets_and_loads_them_from_where_it_is_installed(tmp_path: Path) -> None:
    """Package data, read through importlib.resources: a wheel built from a copy of the sources,
    unpacked in a folder of its own, lists and reads every dataset from that folder."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for pkg in ("analyzers", "reporters", "bot"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--no-index", "--quiet", "-w", str(tmp_path / "dist"), str(src)],
                           capture_output=True, text=True, timeout=300, check=False)
    assert build.returncode == 0, build.stdout + build.stderr
    wheel = next((tmp_path / "dist").glob("rtcbot-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for ds in BUNDLED.values():
        folder = ds.resource.rsplit("/", 1)[0]
        assert f"bot/cli/datasets/{ds.resource}" in names and f"bot/cli/datasets/{folder}/SOURCES.md" in names

    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)  # what pip install does with the files of a pure-Python wheel
    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bot.cli.datasets as d; "
             "print(json.dumps({'module': d.__file__, "
             "'files': {n: str(x.file()) for n, x in d.BUNDLED.items()}, "
             "'rows': {n: x.rows() for n, x in d.BUNDLED.items()}}))")
    p = subprocess.run([sys.executable, "-I", "-c", probe, str(site)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert Path(got["module"]).is_relative_to(site)
    for name, ds in BUNDLED.items():
        assert Path(got["files"][name]).is_relative_to(site)
        assert got["rows"][name] == rows_of(DATA / ds.resource)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_each_bundled_dataset_is_read_from_the_package(name: str) -> None:
    ds = BUNDLED[name]
    path = Path(str(ds.file()))
    assert path == DATA / ds.resource and ds.rows() == rows_of(path) > 0
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    needed = {"crscore": {"diff", "review", "system", "human", "pseudo_refs"},
              "editing-rtc": {"code_change"}, "repair": {"buggy", "reference", "entry_point", "tests"}}
    assert needed[ds.command] <= set(first)
