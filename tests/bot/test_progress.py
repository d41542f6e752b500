"""Progress on long work: live on a terminal (a real pseudo-terminal here), silent in a pipe."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from analyzers.llm.client import Usage
from bot.cli.progress import shown, usage_line
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


@pytest.mark.slow
def test_no_progress_in_a_pipe_or_with_quiet(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(varied)
    piped = subprocess.run(review_argv(srv), cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert piped.returncode == 0, piped.stderr[-2000:]
    assert "LLM requests" not in piped.stderr and piped.stdout.lstrip().startswith("{")
    code, out = under_a_terminal(review_argv(srv, "--quiet"))
    assert code == 0 and "LLM requests" not in out


def test_the_usage_line_reads_as_words() -> None:
    assert usage_line(None) == "no LLM requests yet"
    assert usage_line(Usage(requests=1234, prompt_tokens=1000, completion_tokens=500, cache_hits=3)) == \
        "1,234 LLM requests, 1,500 tokens, 3 from the cache"
    assert shown(open(os.devnull, "w")) is False  # noqa: SIM115
