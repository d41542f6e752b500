"""scripts/build_once.sh: one build of a shared cache's artefact at a time (issue 49, item 4).

The stand-in build is a shell script that counts its runs, says it started, and finishes only
when the test says so: two set-ups run side by side for certain, without sleeps. No llama.cpp
is built."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from tests.support import ROOT

BUILD_ONCE = ROOT / "scripts" / "build_once.sh"
GLOB = "fake-1.0-*.whl"
# $1 (the folder to write to) is the last argument build_once.sh adds
FAKE_BUILD = """#!/bin/sh
echo run >> "$STATE/runs"
touch "$STATE/started"
while [ ! -e "$STATE/go" ]; do sleep 0.02; done
[ -e "$STATE/fail" ] && { echo "compiler exploded"; exit 3; }
printf 'a wheel' > "$1/fake-1.0-py3-none-any.whl"
echo "built into $1"
"""


def fake_build(tmp_path: Path) -> tuple[Path, Path]:
    state = tmp_path / "state"
    state.mkdir()
    script = tmp_path / "fake_build.sh"
    script.write_text(FAKE_BUILD)
    script.chmod(0o755)
    return state, script


def start(cache: Path, state: Path, script: Path, log: Path | None = None) -> subprocess.Popen[str]:
    env = {"PATH": "/usr/bin:/bin", "STATE": str(state)} | ({"BUILD_LOG": str(log)} if log else {})
    return subprocess.Popen([str(BUILD_ONCE), str(cache), GLOB, "fake", "--", str(script)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_a_second_set_up_waits_for_the_first_and_reuses_its_artefact(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"
    state, script = fake_build(tmp_path)
    first = start(cache, state, script, log=tmp_path / "build.log")
    wait_for(state / "started")  # the first holds the lock, its build under way
    second = start(cache, state, script)
    assert second.stderr is not None
    waiting = second.stderr.readline()  # said before it blocks on the lock
    assert waiting == f"waiting for another set-up building fake (lock {cache}/.fake.lock)\n"
    (state / "go").touch()
    assert first.wait(30) == 0 and second.wait(30) == 0
    assert (state / "runs").read_text() == "run\n"  # built once
    assert second.communicate()[1] == f"reusing fake from {cache} (built by another set-up)\n"
    assert [p.name for p in cache.glob("*.whl")] == ["fake-1.0-py3-none-any.whl"]
    assert [p.name for p in cache.glob(".fake.build.*")] == []  # the build folder moved, then gone
    assert "built into" in (tmp_path / "build.log").read_text()  # the build's output went to BUILD_LOG


def test_a_present_artefact_is_not_built_again(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"
    cache.mkdir()
    (cache / "fake-1.0-py3-none-any.whl").write_text("a wheel")
    state, script = fake_build(tmp_path)
    r = start(cache, state, script)
    assert r.wait(30) == 0 and not (state / "runs").exists()


def test_a_failed_build_leaves_nothing_and_frees_the_lock(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"
    state, script = fake_build(tmp_path)
    (state / "go").touch()
    (state / "fail").touch()
    failed = start(cache, state, script)
    out, _ = failed.communicate(timeout=30)
    assert failed.returncode == 3 and "compiler exploded" in out
    assert sorted(p.name for p in cache.iterdir()) == [".fake.lock"]  # no half-built files
    (state / "fail").unlink()
    again = start(cache, state, script)  # the lock was released with the failed build
    assert again.wait(30) == 0 and (state / "runs").read_text() == "run\nrun\n"
    assert (cache / "fake-1.0-py3-none-any.whl").read_text() == "a wheel"


def test_a_wrong_call_says_how_to_call_it(tmp_path: Path) -> None:
    r = subprocess.run([str(BUILD_ONCE), str(tmp_path), GLOB, "fake", "true"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("usage: ") and r.stderr.count("\n") == 1


def test_install_sh_builds_the_llama_wheel_through_it() -> None:
    install = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    assert 'scripts/build_once.sh "$WHEELS" "$LLAMA_WHEEL" llama-cpp-python --' in install
    assert '--no-deps "llama-cpp-python==$LLAMA_VERSION" -w &' in install  # the folder comes last
