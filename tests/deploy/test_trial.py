"""`make trial` (scripts/trial.py), as an operator runs it: the App against the local fake
GitHub, a sample pull request delivered, the dashboard's address and the check runs' titles
printed once they complete; Ctrl-C stops everything (serve's port answers no more). The LLM is
a scripted endpoint (RTCBOT_LLM_BASE_URL) so that it takes seconds, not the embedded model's minutes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import httpx
import pytest

from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import ROOT

pytestmark = pytest.mark.slow


def test_the_trial_shows_the_whole_loop_and_stops_on_ctrl_c(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    llm = scripted_llm(varied)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RTCBOT_") or k == "RTCBOT_CACHE_DIR"}
    env.update(RTCBOT_LLM_BASE_URL=llm.base_url, RTCBOT_LLM_MODEL=llm.model)
    proc = subprocess.Popen([sys.executable, "scripts/trial.py"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 400
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("done:") or time.monotonic() > deadline:
                break
        out = "".join(lines)
        assert "done: the dashboard stays up until Ctrl-C" in out, out
        serve = re.search(r"rtcbot serve at (http://127\.0\.0\.1:\d+)", out)
        dashboard = re.search(r"dashboard: (http://\S+/dashboard/octo-org/widgets)", out)
        assert serve and dashboard, out
        assert "the App answered 202" in out
        assert re.search(r"check run 'rtcbot / EditingRTC': \w+ — \S", out), out
        with httpx.Client(follow_redirects=True, timeout=30) as browser:  # signed in by the fake GitHub
            page = browser.get(dashboard.group(1))
        assert page.status_code == 200 and "/oauth/callback" in str(page.history[-1].url), page.text[:500]
        assert "EditingRTC" in page.text
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, rest
    assert "stopping" in rest
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{serve.group(1)}/livez", timeout=5)
