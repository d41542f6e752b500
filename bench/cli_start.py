"""A fresh `rtcbot` process's start: `rtcbot --help`, openai imported where it is used / at start.

`openai` is imported by the LLM client where it uses it (analyzers/llm/__init__.py), so a
process that makes no request never pays for it. The peer is the same command with `openai`
imported first, as every process did before; the floor is the interpreter alone
(`python -c pass`). The three run in turn, `runs` times each (the machine's noise falls on all
alike), and each must exit 0 (the help's first word, "Usage", checked). Each runs as an
installed `rtcbot` does: Python in isolated mode (no PYTHONPATH, no user site, not this
folder), a clean environment, a private working folder. Ratio = the median wall time of
`rtcbot --help` / the peer's.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench import Row, row

TARGET = 0.85
COMMANDS: dict[str, list[str]] = {
    "help": [sys.executable, "-I", "-m", "bot", "--help"],
    # the same, with openai imported before the CLI, as at the top of the client's modules
    "eager": [sys.executable, "-I", "-c", "import openai, runpy, sys; sys.argv = ['rtcbot', '--help']; "
              "runpy.run_module('bot', run_name='__main__')"],
    "floor": [sys.executable, "-I", "-c", "pass"],
}


def once(name: str) -> float:
    """One run's wall seconds."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    with tempfile.TemporaryDirectory(prefix="rtcbot-cli-start-") as work:
        t0 = time.perf_counter()
        done = subprocess.run(COMMANDS[name], cwd=work, env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        took = time.perf_counter() - t0
    if done.returncode != 0 or (name != "floor" and not done.stdout.startswith("Usage")):
        raise RuntimeError(f"{name} exited {done.returncode}: {(done.stderr or done.stdout)[-300:]}")
    return took


def measure(runs: int) -> dict[str, float]:
    """Each command's median wall seconds over `runs` runs in turn."""
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for i in range(runs):
        for name in COMMANDS if i % 2 == 0 else reversed(COMMANDS):
            times[name].append(once(name))
    return {name: statistics.median(t) for name, t in times.items()}


def run(quick: bool = False) -> list[Row]:
    runs = 5 if quick else 15
    s = measure(runs)
    ratio = s["help"] / s["eager"]
    return [row("CLI start: `rtcbot --help`, openai imported where used / at start",
                f"{ratio:.2f}× (median {s['help'] * 1000:.0f} ms / {s['eager'] * 1000:.0f} ms; the interpreter "
                f"alone {s['floor'] * 1000:.0f} ms; {runs} runs each)", f"≤ {TARGET:g}×", ratio <= TARGET)]
