"""One run per check run (#48 item 4, bot/app/one_run.py): a `synchronize`, an `@rtcbot rerun`
of the same head and a takeover after a SIGKILLed worker, all at once, on real `rtcbot worker`
processes and the fake GitHub: the check run is completed once, its annotations never doubled.

Before the lease, the pushed head's analysis and the re-run's ran side by side in the first
worker, and again side by side after the takeover: the check run was completed twice, with
each annotation sent twice."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.app_support import deliver, make_settings, serve
from tests.bot.conftest import Backend
from tests.bot.test_worker import held_llm, start_worker, worker_env  # noqa: F401  (start_worker: a fixture)
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import ScriptedLLM

CHECK = "rtcbot / EditingRTC"
OVER = ("done", "skipped", "cancelled", "failed")


@pytest.mark.slow
def test_synchronize_rerun_and_takeover_complete_the_check_run_once(
        tmp_path: Path, backend: Backend, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM],
        start_worker: Callable[[dict[str, str]], subprocess.Popen[bytes]]) -> None:  # noqa: F811
    gh = fake_github()
    kill_landed = threading.Event()
    llm = held_llm(scripted_llm, kill_landed, delay_s=0.2)  # the first worker's analyses never finish
    settings = make_settings(tmp_path, gh, llm, database_url=backend.database_url, redis_url=backend.redis_url)
    rt = Runtime(settings)
    pr = gh.add_pr(1, diff_text=many_hunks_diff("src/a.py", hunks=6))
    env = {**worker_env(settings), "RTCBOT_WORKERS": "4"}  # room for both analyses at once
    with serve(create_app(settings, runtime=rt)) as url:
        assert deliver(url, "pull_request", gh.pr_event("synchronize", 1), delivery="push").status_code == 202
        w1 = start_worker(env)
        gh.wait_for(lambda: any(r["status"] == "in_progress" for r in gh.runs(CHECK, pr.head_sha))
                    and llm.request_count >= 3, timeout=90)
        c = gh.add_issue_comment(1, "@rtcbot rerun", user=pr.author)
        assert deliver(url, "issue_comment", gh.issue_comment_event(1, c), delivery="rerun").status_code == 202

        def analyses() -> list[Any]:
            return [j for j in rt.store.jobs.where(kind="analyze") if j.head_sha == pr.head_sha]

        gh.wait_for(lambda: len(analyses()) == 2 and all(j.status == "running" for j in analyses()), timeout=60)
        time.sleep(1.0)  # the re-run is under way (or waiting) in the first worker too
        w1.kill()
        w1.wait(10)
        kill_landed.set()
        start_worker(env)  # the takeover: the sweep requeues both, this worker runs them at once
        gh.wait_for(lambda: all(j.status in OVER for j in rt.store.jobs.where()), timeout=180, interval=0.25)
    runs = gh.runs(CHECK, pr.head_sha)
    assert len(runs) == 1
    completions = [u for u in runs[0]["updates"] if u.get("conclusion")]
    assert len(completions) == 1, [u.get("conclusion") for u in completions]
    lines = [(a["path"], a["start_line"]) for a in runs[0]["annotations"]]
    assert len(lines) == 6 and len(set(lines)) == 6, lines
    ends = sorted((j.attempts, j.status, j.result or "") for j in analyses())
    assert [e[1] for e in ends].count("done") == 1, ends
    rt.store.close()
