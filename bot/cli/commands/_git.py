"""git for the commands that read a checkout (`review --git`, `qualify`): never a shell, a
clean environment and a private HOME, and nothing the checkout's own config could turn into a
program (no external diff, no textconv filter, no fsmonitor hook, no pager; no user or system
config)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

import click

from analyzers.tools.programs import tool_env, workdir

GIT_SAFE = ["--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
            "-c", "diff.external=", "-c", "core.pager=cat"]
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0"}
GIT_TIMEOUT_S = 300
T = TypeVar("T")


class GitFailed(click.ClickException):
    """git refused what it was asked (a range or a checkout that is not one): bad input, exit 2."""

    exit_code = 2


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """git `args` in `cwd`, as it ended (OSError / TimeoutExpired raise)."""
    with workdir("rtcbot-git-") as home:
        return subprocess.run([shutil.which("git") or "git", *GIT_SAFE, *args], cwd=cwd,
                              env=tool_env(home, GIT_ENV), capture_output=True, check=False,
                              stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT_S)


def git(args: list[str], cwd: Path) -> bytes:
    """git's output, or one clear ClickException (not installed, too slow, or its last line)."""
    try:
        out = run(args, cwd)
    except FileNotFoundError:
        raise click.ClickException("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise click.ClickException(f"git {args[0]} took longer than {GIT_TIMEOUT_S} s") from None
    if out.returncode != 0:
        msg = out.stderr.decode(errors="replace").strip().splitlines()
        raise click.ClickException(f"git {args[0]} failed in {cwd}: {msg[-1] if msg else out.returncode}")
    return out.stdout


def git_stream(args: list[str], cwd: Path, read: Callable[[IO[bytes]], T]) -> T:
    """What `read` makes of git's output as it comes (it may stop early by raising: git is then
    stopped, and what it raised goes on), or one clear ClickException as `git` gives."""
    with workdir("rtcbot-git-") as home, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen([shutil.which("git") or "git", *GIT_SAFE, *args], cwd=cwd,
                                    env=tool_env(home, GIT_ENV), stdout=subprocess.PIPE, stderr=err,
                                    stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise click.ClickException("git is not installed") from None
        with proc:
            assert proc.stdout is not None
            try:
                out = read(proc.stdout)
            except BaseException:
                proc.kill()
                raise
            try:
                code = proc.wait(timeout=GIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise click.ClickException(f"git {args[0]} took longer than {GIT_TIMEOUT_S} s") from None
        if code != 0:
            err.seek(0)
            msg = err.read(65536).decode(errors="replace").strip().splitlines()
            raise GitFailed(f"git {args[0]} failed in {cwd}: {msg[-1] if msg else code}")
    return out
