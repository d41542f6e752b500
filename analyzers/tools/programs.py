"""Starting the programs rtcbot uses: the model server, Semgrep, pylint, PMD, JSHint, git.

Every one of them sees data from strangers (a diff, a checkout, a model's answer), so none of
them gets anything of ours it does not need:

- a clean environment (`tool_env`): a fixed PATH, a locale, a private HOME and TMPDIR, and
  only the variables the caller names; never a token, a key or a secret of the service;
- a private working directory (`workdir`, mode 0700, removed afterwards), never the
  checkout's root or the service's folder, so a relative path or a planted module there is
  never picked up;
- Python tools run isolated (`python_argv`: `python -I`, which ignores the working
  directory, the script's folder, PYTHON* variables and the user's site-packages);
- long-lived helpers die with us (`popen_bound`): they hold the read end of a pipe whose
  write end only this process holds, so when this process ends for any reason — SIGKILL
  included, and whichever thread started them — the helper sees end-of-file and exits.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from analyzers import spans

SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
# Variables a tool may need that carry no secret; each is passed only when the caller asks.
PASSABLE = frozenset({"JAVA_HOME", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR", "OMP_NUM_THREADS"})


def tool_path() -> str:
    """Our interpreter's bin folder (the virtualenv's tools) and the system's, nothing else."""
    dirs = [str(Path(sys.executable).parent), *SYSTEM_PATH]
    return os.pathsep.join(dict.fromkeys(dirs))


def tool_env(home: Path | None = None, extra: Mapping[str, str] | None = None,
             pass_through: Sequence[str] = ()) -> dict[str, str]:
    """A clean environment: PATH, locale, HOME/TMPDIR (when given), `pass_through` names
    from PASSABLE that are set here, and `extra` (the caller's own fixed values)."""
    env = {"PATH": tool_path(), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONNOUSERSITE": "1"}
    if home is not None:
        env.update(HOME=str(home), TMPDIR=str(home), XDG_CACHE_HOME=str(home / ".cache"),
                   XDG_CONFIG_HOME=str(home / ".config"))
    for name in pass_through:
        if name not in PASSABLE:
            raise ValueError(f"{name} is not a variable a tool may be given")
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra or {})
    return env


@contextmanager
def workdir(prefix: str = "rtcbot-tool-") -> Iterator[Path]:
    """A private folder (0700) that is removed with everything in it afterwards."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def python_argv(*args: str) -> list[str]:
    """Our interpreter, isolated: `python -I ARGS`."""
    return [sys.executable, "-I", *args]


def run(argv: Sequence[str], *, timeout: float, cwd: Path | None = None,
        extra_env: Mapping[str, str] | None = None, pass_through: Sequence[str] = (),
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a tool to completion with a clean environment and a private HOME; its working
    directory is `cwd` (a folder of ours) or that private HOME. Output is captured as text.
    Raises subprocess.TimeoutExpired (the tool's whole session is killed) and OSError.
    The run is a span named after the tool (`tool_name`) where one is being recorded."""
    with spans.span(tool_name(argv)), workdir() as home:
        with subprocess.Popen(list(argv), cwd=cwd or home, env=tool_env(home, extra_env, pass_through),
                              stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True, close_fds=True) as proc:
            try:
                out, err = proc.communicate(input, timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_session(proc)
                proc.communicate()
                raise
            except BaseException:
                _kill_session(proc)
                raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def tool_name(argv: Sequence[str]) -> str:
    """What a command runs, in a word: the module of `python -m MODULE`, the script node
    runs, else the program's name."""
    args = list(argv)
    if "-m" in args[:-1]:
        return args[args.index("-m") + 1].split(".")[0]
    name = Path(args[0]).name if args else "?"
    return Path(args[1]).name if name == "node" and len(args) > 1 else name


def _kill_session(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass


# The launcher (analyzers/tools/lifeline.py) runs in the child: it watches the lifeline and ends
# the tool when the pipe closes.


class BoundProcess(subprocess.Popen[bytes]):
    """A Popen whose process ends when ours does (see `popen_bound`)."""

    lifeline: int | None = None

    def release(self) -> None:
        """Close our end of the lifeline: the tool exits at once."""
        fd, self.lifeline = self.lifeline, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def stop(self, timeout: float = 10.0) -> None:
        """Release the lifeline and wait for the tool to end (killed if it will not)."""
        self.release()
        try:
            self.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.wait(timeout=timeout)


def popen_bound(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                **kwargs: Any) -> BoundProcess:
    """Start a long-lived tool that cannot outlive this process. `argv` is either
    ["-m", "module", args…] (a Python module run isolated) or a command. Other keyword
    arguments go to Popen (stdout, stderr, stdin); the tool gets its own session."""
    r, w = os.pipe()
    try:
        proc = BoundProcess(python_argv("-m", "analyzers.tools.lifeline", str(r), *argv), cwd=cwd, env=dict(env),
                            pass_fds=(r,), start_new_session=True, close_fds=True, **kwargs)
    except BaseException:
        os.close(w)
        raise
    finally:
        os.close(r)
    proc.lifeline = w
    return proc
