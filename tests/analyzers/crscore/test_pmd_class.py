"""The PMD server compiled once per PMD install (analyzers/crscore/smells/pmd_class.py): the class is
built with the JDK's javac, kept under a key of what it was built from, reused, and never
used for another source; where it cannot be built the server starts from its source."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from analyzers.crscore.smells import pmd
from analyzers.crscore.smells.pmd_class import CLASS_NAME, compiled, key
from tests.support import require

pytestmark = pytest.mark.slow


def build(root: Path, java: str, source: Path = pmd.SERVER_SOURCE) -> Path | None:
    """`source` compiled for `java` into the folder `root` (pmd_class.compiled)."""
    return compiled(source, java, pmd.PMD_LIB, root=root)


@pytest.fixture
def java() -> str:
    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    if not Path(pmd.java()).resolve().with_name("javac").is_file():
        pytest.skip("no javac beside java (a JRE): the server starts from its source")
    return pmd.java()


def test_the_server_is_compiled_once_and_then_reused(tmp_path: Path, java: str) -> None:
    root = tmp_path / "cache"
    first = build(root, java)
    assert first is not None and (first / f"{CLASS_NAME}.class").is_file()
    assert first.name == key(pmd.SERVER_SOURCE, Path(java), pmd.PMD_LIB)
    built = (first / f"{CLASS_NAME}.class").stat()
    again = build(root, java)
    assert again == first
    assert (first / f"{CLASS_NAME}.class").stat().st_mtime_ns == built.st_mtime_ns  # not built again
    assert [p.name for p in root.iterdir()] == [first.name]  # nothing left aside
    for path in (root, first, first / f"{CLASS_NAME}.class"):  # others may run it, not write it
        assert path.stat().st_mode & 0o777 in (0o755, 0o644), path


def test_another_source_gets_a_class_of_its_own(tmp_path: Path, java: str) -> None:
    changed = tmp_path / "src" / "PmdServer.java"
    changed.parent.mkdir()
    changed.write_text(pmd.SERVER_SOURCE.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    root = tmp_path / "cache"
    ours = build(root, java)
    theirs = build(root, java, changed)
    assert ours is not None and theirs is not None and ours != theirs
    assert key(changed, Path(java), pmd.PMD_LIB) != key(pmd.SERVER_SOURCE, Path(java), pmd.PMD_LIB)


def test_a_source_javac_refuses_gives_none_and_leaves_nothing(tmp_path: Path, java: str) -> None:
    broken = tmp_path / "src" / "PmdServer.java"
    broken.parent.mkdir()
    broken.write_text("public class PmdServer { int x = ; }\n", encoding="utf-8")
    root = tmp_path / "cache"
    assert build(root, java, broken) is None
    assert list(root.iterdir()) == []  # no half-built folder for a later start to trust


def test_without_javac_or_a_cache_only_we_can_write_the_server_starts_from_source(tmp_path: Path, java: str) -> None:
    lone = tmp_path / "jre" / "bin" / "java"  # a JRE's java: no javac beside it
    lone.parent.mkdir(parents=True)
    lone.write_bytes(b"")
    assert build(tmp_path / "c1", str(lone)) is None
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    assert build(blocked / "cache", java) is None
    others = tmp_path / "others"
    built = build(others, java)
    assert built is not None
    others.chmod(0o777)  # others could have put a class of theirs there: it is not run
    assert build(others, java) is None
    others.chmod(0o755)
    built.chmod(0o777)
    assert build(others, java) is None
    built.chmod(0o755)
    assert build(others, java) == built
    if os.getuid() == 0:  # as root: a folder another user (nobody) could have written
        os.chown(built, 65534, 65534)
        assert build(others, java) is None


def test_two_starts_compiling_at_once_both_get_the_class(tmp_path: Path, java: str) -> None:
    got: list[Path | None] = []
    threads = [threading.Thread(target=lambda: got.append(build(tmp_path, java))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 2 and got[0] is not None and got[0] == got[1]
    assert (got[0] / f"{CLASS_NAME}.class").is_file()
    assert [p.name for p in tmp_path.iterdir()] == [got[0].name]


def test_the_server_command_runs_the_compiled_class(java: str) -> None:
    argv = pmd.server_command()
    assert argv[-2:] == [CLASS_NAME, pmd.RULESET] and str(pmd.SERVER_SOURCE) not in argv
    server = pmd.PmdServer()
    try:
        server.start()  # it says "ready": the class runs on PMD's jars
        assert server.running
    finally:
        server.stop()
