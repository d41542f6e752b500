"""Progress on long work: live on a terminal (a real pseudo-terminal here), a line at a time in
a pipe or a CI log, nothing with --quiet."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from analyzers.llm.client import Usage
from bot.cli.progress import elapsed, live, shown, usage_line
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import ROOT


def review_argv(srv: ScriptedLLM, *extra: str) -> list[str]:
    return [sys.executable, "-m", "bot", "review", "samples/demo.diff", "--format", "json",
            "--llm-base-url", srv.base_url, "--model", srv.model, "--no-cache", *extra]


def under_a_terminal(argv: list[str], timeout: float = 120.0) -> tuple[int, str]:
    """Run `argv` with stdin, stdout and stderr on a pseudo-terminal; (exit code, all it wrote)."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm"}
    proc = subprocess.Popen(argv, cwd=ROOT, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=10), out.decode("utf-8", "replace")


@pytest.mark.slow
def test_progress_shows_on_a_terminal_with_llm_usage(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(varied, delay_s=0.2)  # slow enough for a few refreshes
    code, out = under_a_terminal(review_argv(srv))
    assert code == 0, out[-2000:]
    assert "1 analysis of 2 hunks" in out
    assert "LLM requests" in out and "tokens" in out
    assert f"{srv.request_count} LLM requests" in out  # the last refresh shows the whole run's


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "not seen in time"
        time.sleep(0.01)


def test_a_pipe_gets_a_progress_line_every_interval_and_the_total_at_the_end() -> None:
    out = io.StringIO()  # no terminal
    usage = Usage(requests=3, prompt_tokens=100, completion_tokens=20)
    with live(lambda: usage, stream=out, every=0.01) as display:
        done = display.step("1 analysis of 2 hunks", total=1)
        wait_for(lambda: "rtcbot: progress: 1 analysis of 2 hunks: 0 of 1 done" in out.getvalue())
        done(1)
        usage.requests = 7
        wait_for(lambda: "1 of 1 done" in out.getvalue())
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(ln.startswith("rtcbot: progress: ") for ln in lines)
    assert lines[-1].startswith("rtcbot: progress: 1 analysis of 2 hunks: 1 of 1 done · 7 LLM requests, 120 tokens · ")
    assert lines[-1].endswith(" elapsed")


def test_quiet_writes_nothing_and_starts_no_thread() -> None:
    out = io.StringIO()
    with live(lambda: Usage(requests=1), stream=out, every=0.01, quiet=True) as display:
        display.step("work", total=2)(1)
        assert not any(t.name == "progress" for t in threading.enumerate())
    assert out.getvalue() == ""


def test_elapsed_reads_as_a_clock() -> None:
    assert (elapsed(7.9), elapsed(62), elapsed(3723)) == ("0:00:07", "0:01:02", "1:02:03")


@pytest.mark.slow
def test_a_ci_run_prints_progress_lines_and_quiet_none(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """In a pipe (a CI log) with RTCBOT_PROGRESS_S=0.2: the model holds its first answer until a
    progress line is out (no race with a loaded machine), stdout stays the JSON alone."""
    seen = threading.Event()

    def held(req: dict[str, Any]) -> list[str]:
        seen.wait(120)
        return varied(req)

    srv = scripted_llm(held)
    env = {**os.environ, "RTCBOT_PROGRESS_S": "0.2"}
    proc = subprocess.Popen(review_argv(srv), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    lines: list[str] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("rtcbot: progress: "):
                seen.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert proc.stdout is not None
    stdout = proc.stdout.read()  # not communicate(): it would read stderr too, taking lines from the reader
    proc.wait(180)
    reader.join(30)
    assert proc.returncode == 0, "".join(lines)[-2000:]
    progress = [ln for ln in lines if ln.startswith("rtcbot: progress: ")]
    assert progress[0].startswith("rtcbot: progress: 1 analysis of 2 hunks: 0 of 1 done · ")
    assert progress[-1].startswith(f"rtcbot: progress: 1 analysis of 2 hunks: 1 of 1 done · {srv.request_count} LLM")
    assert stdout.lstrip().startswith("{") and "rtcbot: progress" not in stdout
    srv.responder = varied
    quiet = subprocess.run(review_argv(srv, "--quiet"), cwd=ROOT, capture_output=True, text=True, env=env,
                           timeout=180, check=False)
    assert quiet.returncode == 0 and "progress" not in quiet.stderr
    code, out = under_a_terminal(review_argv(srv, "--quiet"))
    assert code == 0 and "LLM requests" not in out


def test_the_usage_line_reads_as_words() -> None:
    assert usage_line(None) == "no LLM requests yet"
    assert usage_line(Usage(requests=1234, prompt_tokens=1000, completion_tokens=500, cache_hits=3)) == \
        "1,234 LLM requests, 1,500 tokens, 3 from the cache"
    assert shown(open(os.devnull, "w")) is False  # noqa: SIM115
