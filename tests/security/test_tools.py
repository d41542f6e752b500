"""Secrets out of reach of every tool rtcbot starts (issue #21).

Attacks covered, each with real processes:
- a checkout (the working directory rtcbot runs in) plants `llama_cpp/__init__.py` and
  `pylint/__init__.py`: `python -m llama_cpp.server` / `python -m pylint` would import them
  and run them with GITHUB_TOKEN and the LLM key in reach; the markers they would write must
  not appear (the tools run `python -I` in a private folder);
- a tool reads its environment: the model server's /proc/<pid>/environ and PMD's (a stand-in
  `java` that records what it gets) hold none of the planted secrets, and their working
  directory is private, not the checkout;
- the model server / the PMD server JVM outliving rtcbot when it is stopped by SIGTERM
  (CI cancel, `timeout`), SIGINT or SIGKILL: no server process remains;
- a checkout whose .git/config and .gitattributes name programs (external diff, textconv
  filter, fsmonitor hook): `rtcbot review --git` runs none of them;
- a same-user process reading the worker's /proc/<pid>/environ (its secrets): the worker
  marks itself non-dumpable, so it cannot, while it can read an ordinary process's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import ROOT, require

SECRETS = {
    "GITHUB_TOKEN": "ghs_planted_github_token",
    "RTCBOT_LLM_API_KEY": "sk-planted-llm-key",
    "OPENAI_API_KEY": "sk-planted-openai-key",
    "RTCBOT_WEBHOOK_SECRET": "planted-webhook-secret",
}


def secret_env(**extra: str) -> dict[str, str]:
    """Our environment (PATH, the virtualenv) plus the planted secrets, rtcbot importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RTCBOT_", "INPUT_"))}
    env.update(SECRETS, PYTHONPATH=str(ROOT), RTCBOT_CACHE_DIR=os.environ.get("RTCBOT_CACHE_DIR", ""))
    env.update(extra)
    return env


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A hostile checkout: modules named like the tools, each leaving a marker when imported."""
    root = tmp_path / "checkout"
    for module in ("llama_cpp", "pylint"):
        pkg = root / module
        pkg.mkdir(parents=True)
        code = (f"import os, pathlib\npathlib.Path({str(tmp_path / ('MARKER-' + module))!r})"
                ".write_text(repr(dict(os.environ)))\n")
        (pkg / "__init__.py").write_text(code)
        (pkg / "__main__.py").write_text(code)
        (pkg / "server").mkdir()
        (pkg / "server" / "__init__.py").write_text(code)
        (pkg / "server" / "__main__.py").write_text(code)
    return root


def markers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.glob("MARKER-*"))


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting for its reaper counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status and "\nState:\tX" not in status


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def driver(tmp_path: Path, code: str) -> Path:
    """A Python script outside the checkout (like the `rtcbot` console script)."""
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(code))
    return script


class Driver(subprocess.Popen[str]):
    """A started process whose output lines are read by a thread (no pipe ever fills)."""

    def start_reading(self) -> Driver:
        import queue
        import threading

        self.lines: queue.Queue[str | None] = queue.Queue()
        self.err: list[str] = []

        def pump(stream: IO[str], out: Callable[[str], None], end: Callable[[], None]) -> None:
            for line in stream:
                out(line)
            end()

        assert self.stdout is not None and self.stderr is not None
        threading.Thread(target=pump, args=(self.stdout, self.lines.put, lambda: self.lines.put(None)),
                         daemon=True).start()
        threading.Thread(target=pump, args=(self.stderr, self.err.append, lambda: None), daemon=True).start()
        return self

    def line(self, timeout: float) -> str:
        """The next line of output (fails with its stderr when it ends or stays silent)."""
        import queue

        try:
            got = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no answer within {timeout} s: {''.join(self.err)[-2000:]}")
        if got is None:
            time.sleep(0.2)
            pytest.fail(f"the process ended: {''.join(self.err)[-2000:]}")
        return got.strip()

    def wait_for_err(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in e for e in self.err):
                return
            if self.poll() is not None:
                time.sleep(0.2)
                pytest.fail(f"the process ended: {''.join(self.err)[-2000:]}")
            time.sleep(0.1)
        pytest.fail(f"{text!r} not seen within {timeout} s: {''.join(self.err)[-2000:]}")


@pytest.fixture
def started() -> Iterator[Callable[..., Driver]]:
    """Start processes; every one still running is killed after the test."""
    procs: list[Driver] = []

    def start(argv: list[str], cwd: Path, env: dict[str, str]) -> Driver:
        p = Driver(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   text=True, start_new_session=True).start_reading()
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(10)


# ============================================================================ pylint
def test_a_planted_pylint_in_the_checkout_never_runs(tmp_path: Path, checkout: Path) -> None:
    script = driver(tmp_path, """
        import json
        from analyzers.crscore.smells.python import detect_python
        code = "def f(a, b, c, d, e, g, h):\\n    return a\\n"
        rep = detect_python({"a.py": code})["a.py"]
        print(json.dumps({"rules": [s.rule for s in rep.smells], "skipped": rep.skipped}))
    """)
    proc = subprocess.run([sys.executable, str(script)], cwd=checkout, env=secret_env(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert markers(tmp_path) == []  # the checkout's pylint/ was not imported
    assert result == {"rules": ["too-many-arguments"], "skipped": None}  # counted in process: no pylint runs


# ============================================================================ PMD (CLI and server JVM)
def fake_java(tmp_path: Path) -> Path:
    """A stand-in `java` that records its environment and working directory, answers the CLI
    with an empty PMD report and, as the server, says `ready` and waits on its input."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    record = tmp_path / "java-runs"
    record.mkdir()
    java = bin_dir / "java"
    java.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        env > {record}/env.$$
        pwd > {record}/cwd.$$
        case " $* " in
          *" check "*) echo '{{"files": [], "processingErrors": [], "configurationErrors": []}}'; exit 0;;
        esac
        echo ready
        while read -r line; do echo ok; done
        """))
    java.chmod(0o755)
    return record


def test_pmd_gets_a_clean_environment_a_private_folder_and_dies_with_us(
        tmp_path: Path, checkout: Path, started: Callable[..., Driver]) -> None:
    record = fake_java(tmp_path)
    script = driver(tmp_path, """
        import json, time
        from pathlib import Path
        from analyzers.crscore.smells import pmd
        src = Path("src")
        src.mkdir()
        print(json.dumps(pmd.run_pmd_cli(src.resolve())), flush=True)
        pmd._server.start()
        print("server started", flush=True)
        time.sleep(600)
    """)
    env = secret_env(PATH=f"{tmp_path / 'fakebin'}{os.pathsep}{os.environ['PATH']}",
                     JAVA_HOME="/opt/planted-jdk")
    proc = started([sys.executable, str(script)], checkout, env)
    assert json.loads(proc.line(120))["files"] == []
    assert proc.line(120) == "server started"
    runs = sorted(record.glob("env.*"))
    assert len(runs) == 2  # the CLI, then the server JVM
    cwds: dict[int, str] = {}
    for run in runs:
        env_seen = dict(line.split("=", 1) for line in run.read_text().splitlines() if "=" in line)
        leaked = sorted(k for k in env_seen if k in SECRETS or SECRETS.get(k, "\0") in env_seen.values())
        assert leaked == [] and not set(SECRETS.values()) & set(env_seen.values())
        assert "PYTHONPATH" not in env_seen and env_seen.get("JAVA_HOME") == "/opt/planted-jdk"
        cwd = Path((record / run.name.replace("env.", "cwd.")).read_text().strip())
        assert cwd != checkout and not cwd.is_relative_to(checkout) and cwd.name.startswith("rtcbot-")
        cwds[int(run.name.split(".")[1])] = cwd.name
    (server_pid,) = [pid for pid, name in cwds.items() if name.startswith("rtcbot-pmd-server-")]
    assert alive(server_pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert wait_gone(server_pid), "the PMD server outlived rtcbot (SIGKILL)"


@pytest.mark.slow
def test_a_compiled_pmd_server_runs_only_from_a_folder_no_other_user_could_write(shared_dir: Path) -> None:
    """PMD's compiled server (analyzers/crscore/smells/pmd_class.py) runs as our code. As an
    unprivileged user rtcbot runs a class that root built (an image's install) or that it built
    itself, and refuses one in a folder another user owns (it could have put any class there)."""
    from analyzers.crscore.smells import pmd
    from analyzers.crscore.smells.pmd_class import compiled

    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    require(Path(pmd.java()).resolve().with_name("javac").is_file(), "javac (a JDK) builds the server")
    as_user, python = other_user_python()
    import sysconfig

    paths = sysconfig.get_paths()
    env = {"PATH": os.environ["PATH"], "HOME": str(shared_dir),
           "PYTHONPATH": os.pathsep.join([str(ROOT), paths["purelib"], paths["platlib"]])}
    code = ("import sys; from pathlib import Path; from analyzers.crscore.smells import pmd; "
            "from analyzers.crscore.smells.pmd_class import compiled; "
            "print(compiled(pmd.SERVER_SOURCE, pmd.java(), pmd.PMD_LIB, root=Path(sys.argv[1])))")

    def as_them(root: Path) -> str:
        p = subprocess.run([*as_user, python, "-c", code, str(root)], cwd=shared_dir, env=env,
                           capture_output=True, text=True, timeout=120, check=False)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip()

    own = as_them(shared_dir / "own")  # built by that user, in a folder of its own
    assert own != "None" and Path(own, "PmdServer.class").is_file()
    assert as_them(shared_dir / "own") == own
    if not as_user:
        return  # not root: no other user's folder to make
    by_root = compiled(pmd.SERVER_SOURCE, pmd.java(), pmd.PMD_LIB, root=shared_dir / "root")
    assert by_root is not None
    assert as_them(by_root.parent) == str(by_root)  # an image's install: root built it, they run it
    planted = shared_dir / "planted"
    shutil.copytree(by_root.parent, planted)
    for path in (planted, *planted.rglob("*")):
        os.chown(path, 1234, 1234)  # another user's folder, holding what looks like our class
    assert as_them(planted) == "None"


# ============================================================================ the model server
@pytest.mark.model
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name)
def test_the_model_server_is_isolated_and_dies_with_rtcbot(
        sig: signal.Signals, tmp_path: Path, checkout: Path,
        started: Callable[..., Driver]) -> None:
    from analyzers.llm import local as local_llm

    require(local_llm.available(), local_llm.unavailable_reason())
    script = driver(tmp_path, """
        import time
        from analyzers.llm.local import EmbeddedServer
        server = EmbeddedServer(threads=1)
        url = server.start()
        assert server.proc is not None and server.log_path is not None
        print(server.proc.pid, url, server.log_path, flush=True)
        time.sleep(600)
    """)
    proc = started([sys.executable, str(script)], checkout, secret_env())
    pid_text, url, log_path = proc.line(180).split()
    pid = int(pid_text)
    import httpx

    assert httpx.get(f"{url}/models", timeout=10, trust_env=False).status_code == 200
    assert markers(tmp_path) == []  # the checkout's llama_cpp/ was not imported
    env = environ_of(pid)
    assert not set(SECRETS) & set(env) and not set(SECRETS.values()) & set(env.values())
    assert "PYTHONPATH" not in env
    cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    assert cwd != checkout and (cwd.stat().st_mode & 0o077) == 0  # private
    assert (Path(log_path).stat().st_mode & 0o777) == 0o600
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    assert "-I" in argv
    # one thread, the prompt's included, and one that sleeps soon when it waits
    assert argv[argv.index("--n_threads_batch") + 1] == "1" and env["GOMP_SPINCOUNT"] == local_llm.SPIN_TURNS

    proc.send_signal(sig)
    proc.wait(30)
    assert wait_gone(pid), f"the model server outlived rtcbot ({sig.name})"
    if sig == signal.SIGINT:  # a clean exit also removes the server's folder
        assert not cwd.exists()


# ============================================================================ git
def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=a@b.c", "-c", "user.name=a", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.mark.slow
def test_git_in_a_hostile_checkout_runs_no_program(
        tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    require(shutil.which("git"), "git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "app.py").write_text("def f(x):\n    return x + 1\n")
    (repo / ".gitattributes").write_text("* diff=evil\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    (repo / "app.py").write_text("def f(x):\n    return x + 2\n")
    git(repo, "commit", "-qam", "two")
    touch = f"touch {tmp_path}/MARKER-"
    for key, value in [("diff.evil.textconv", f"sh -c '{touch}textconv; cat \"$0\"'"),
                       ("diff.evil.command", f"{touch}diffcommand"), ("diff.external", f"{touch}external"),
                       ("core.fsmonitor", f"{touch}fsmonitor"), ("core.pager", f"{touch}pager")]:
        git(repo, "config", key, value)
    llm = scripted_llm(varied)
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "review", "--git", "HEAD~1..HEAD", "--format", "json",
         "--llm-base-url", llm.base_url, "--model", llm.model],
        cwd=repo, env=secret_env(), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert markers(tmp_path) == []
    assert "app.py" in proc.stdout


# ============================================================================ non-dumpable worker
NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def other_user_python() -> tuple[list[str], str]:
    """(a prefix that runs a command as one unprivileged user, a Python that user can run with
    our packages). As root: uid 65534 via setpriv, and an interpreter of our version outside
    /root; otherwise ourselves."""
    if os.geteuid() != 0:
        return [], sys.executable
    require(shutil.which("setpriv"), "setpriv (util-linux) is needed to act as another user")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, getattr(sys, "_base_executable", sys.executable), f"/usr/bin/python{version}",
                      "/usr/bin/python3"):
        probe = subprocess.run([*NOBODY, candidate, "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, text=True, timeout=60, check=False)
        if probe.returncode == 0 and probe.stdout.strip() == str(sys.version_info[:2]):
            return NOBODY, candidate
    require(False, f"no Python {version} that uid 65534 may run")
    raise AssertionError  # unreachable


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder the unprivileged user may write (tmp_path is root's own)."""
    import sysconfig
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="rtcbot-nobody-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)
    assert sysconfig  # keeps the import local


@pytest.mark.slow
def test_the_worker_hides_its_secrets_from_its_own_user(
        shared_dir: Path, started: Callable[..., Driver]) -> None:
    """`rtcbot worker` and an ordinary process run as one user; that user reads the ordinary
    process's /proc/<pid>/environ, and is refused the worker's."""
    import sysconfig

    require(sys.platform.startswith("linux"), "non-dumpable processes are a Linux feature")
    as_user, python = other_user_python()
    with FakeGitHub() as gh:
        env = {"PATH": os.environ["PATH"], "HOME": str(shared_dir), **SECRETS,
               "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"],
                                              sysconfig.get_paths()["platlib"]]),
               "RTCBOT_APP_ID": str(gh.app_id), "RTCBOT_PRIVATE_KEY": gh.private_key_pem,
               "RTCBOT_GITHUB_API_URL": gh.base_url, "RTCBOT_DATA_DIR": str(shared_dir / "data"),
               "RTCBOT_CACHE_DIR": str(shared_dir / "cache"), "RTCBOT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
               "RTCBOT_LLM_MODEL": "m", "RTCBOT_ANALYZERS": "editing_rtc", "RTCBOT_PMD_SERVER": "off"}
        worker = started([*as_user, python, "-m", "bot", "worker", "--workers", "1"], shared_dir, env)
        worker.wait_for_err("worker on the", 120)
        plain = started([*as_user, python, "-c", "import time; print('up', flush=True); time.sleep(600)"],
                        shared_dir, env)
        assert plain.line(60) == "up"

        def read_environ(pid: int) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run([*as_user, "cat", f"/proc/{pid}/environ"], capture_output=True,
                                  timeout=30, check=False)

        control = read_environ(plain.pid)  # an ordinary process of that user: readable
        assert control.returncode == 0 and SECRETS["GITHUB_TOKEN"].encode() in control.stdout
        hidden = read_environ(worker.pid)
        assert worker.poll() is None
        assert hidden.returncode != 0 and SECRETS["GITHUB_TOKEN"].encode() not in hidden.stdout
        assert b"Permission denied" in hidden.stderr
