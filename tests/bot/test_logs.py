"""Logging (bot/core/logs.py): ISO times with the zone, the job's context (and the webhook
delivery's) on every line a job logs, JSON on request, httpx's request lines (one per LLM call)
only at debug, and `rtcbot worker` logging at info with timestamps."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from analyzers.llm.client import LLMClient, LLMSettings
from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.core.logs import configure, delivery_context, job_context
from bot.core.settings import LogSettings
from bot.store.versions import SCHEMA_VERSION
from tests.bot.app_support import deliver, drain, make_settings, serve
from tests.fakes.github_server import FakeGitHub, app_key
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import ROOT

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d"  # ISO 8601 with the zone


@pytest.fixture
def captured() -> Iterator[Callable[[str], io.StringIO]]:
    """configure() onto a buffer; the root logger restored afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    def make(fmt: str = "text", verbose: int = 0) -> io.StringIO:
        buf = io.StringIO()
        configure(LogSettings(log_format=fmt), verbose=verbose, default=logging.INFO,  # type: ignore[arg-type]
                  stream=buf)
        return buf

    yield make
    root.handlers[:] = handlers
    root.setLevel(level)


def test_text_lines_have_a_timestamp_and_the_jobs_context(captured: Callable[[str], io.StringIO]) -> None:
    buf = captured("text")
    log = logging.getLogger("rtcbot.test")
    log.info("outside")
    with job_context(7, repo="octo/hello", pr=12, head="a" * 40, analyzer="crscore", delivery="d-1"):
        log.warning("inside %s", "a job")
    with delivery_context("d-2"):
        log.info("a webhook")
    first, second, third = buf.getvalue().splitlines()
    assert re.fullmatch(rf"{STAMP} INFO rtcbot.test: outside", first), first
    assert re.fullmatch(rf"{STAMP} WARNING rtcbot.test: inside a job "
                        rf"\[octo/hello#12 head={'a' * 12} analyzer=crscore job=7 delivery=d-1 t=\d+\.\d\ds\]",
                        second), second
    assert re.fullmatch(rf"{STAMP} INFO rtcbot.test: a webhook \[delivery=d-2 t=\d+\.\d\ds\]", third), third


def test_the_embedded_models_notice_is_a_log_line(captured: Callable[[str], io.StringIO],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from analyzers.llm import local

    monkeypatch.setattr(local, "_notice_shown", False)
    buf = captured("text")
    local.show_notice_once()
    local.show_notice_once()
    [line] = buf.getvalue().splitlines()  # once, with its time and level, not a bare print
    assert re.fullmatch(rf"{STAMP} WARNING analyzers.llm.local: using the embedded SmolLM2-135M model .*", line), line
    assert capsys.readouterr().err == ""


def test_json_lines_carry_the_same_fields(captured: Callable[[str], io.StringIO]) -> None:
    buf = captured("json")
    with job_context(3, repo="octo/hello", pr=1, head="b" * 40, analyzer="editing_rtc", delivery="d-3"):
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("rtcbot.test").exception("failed")
    rec = json.loads(buf.getvalue())
    assert rec["level"] == "error" and rec["logger"] == "rtcbot.test" and rec["message"] == "failed"
    assert (rec["repo"], rec["pr"], rec["head"], rec["analyzer"], rec["job"], rec["delivery"]) == (
        "octo/hello", 1, "b" * 12, "editing_rtc", 3, "d-3")
    assert rec["elapsed_s"] >= 0 and "ValueError: boom" in rec["exception"]
    assert re.fullmatch(STAMP, rec["time"])


def test_every_line_a_job_logs_names_it(captured: Callable[..., io.StringIO], tmp_path: Path,
                                        fake_github: Callable[..., FakeGitHub],
                                        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    gh, llm = fake_github(), scripted_llm(varied)
    settings = make_settings(tmp_path, gh, llm)
    rt = Runtime(settings)
    try:
        pr = gh.add_pr(5, fixture="more-itertools-d992be0de9.diff")
        buf = captured("json")
        with serve(create_app(settings, runtime=rt)) as url:
            assert deliver(url, "pull_request", gh.pr_event("opened", 5), delivery="gh-guid-5").status_code == 202
        drain(rt)
    finally:
        rt.store.close()
    records = [json.loads(ln) for ln in buf.getvalue().splitlines()]
    [hook] = [r for r in records if r["logger"] == "bot.app.web"]
    assert hook["delivery"] == "gh-guid-5", hook
    assert re.fullmatch(r"pull_request delivery answered 202: accepted \(jobs \d+\)", hook["message"]), hook
    jobs = [r for r in records if r["logger"] == "bot.app.worker"]
    assert {r["message"] for r in jobs} >= {"pr job started (attempt 1)", "analyze job started (attempt 1)",
                                           "pr job ended: done", "analyze job ended: done"}
    for r in jobs:
        assert (r["repo"], r["pr"], r["head"], r["delivery"]) == (gh.repo, 5, pr.head_sha[:12], "gh-guid-5"), r
        assert isinstance(r["job"], int) and r["elapsed_s"] >= 0
    assert {r.get("analyzer") for r in jobs if r["message"].startswith("analyze")} == {"editing_rtc"}
    assert llm.request_count > 0 and not [r for r in records if r["logger"].startswith("httpx")]  # at info: none


def test_llm_requests_are_debug_lines(captured: Callable[..., io.StringIO],
                                      scripted_llm: Callable[..., ScriptedLLM]) -> None:
    llm = scripted_llm("hello")
    client = LLMClient(LLMSettings(base_url=llm.base_url, model=llm.model, cache_path=None))
    buf = captured("json", verbose=2)  # -vv
    assert client.sample([{"role": "user", "content": "hi"}]) == ["hello"]
    [request] = [r for r in map(json.loads, buf.getvalue().splitlines()) if r["logger"].startswith("httpx")]
    assert request["level"] == "debug" and request["message"].startswith("HTTP Request: POST")
    quiet = captured("json", verbose=1)  # -v: info
    assert client.sample([{"role": "user", "content": "again"}]) == ["hello"]
    logging.getLogger("httpx").warning("a warning stays")
    assert [json.loads(ln)["message"] for ln in quiet.getvalue().splitlines()] == ["a warning stays"]


@pytest.mark.slow
def test_the_worker_logs_at_info_with_timestamps(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization

    pem = app_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()).decode()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL", "LOG_LEVEL")}
    env.update({"RTCBOT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT), "RTCBOT_APP_ID": "1",
                "RTCBOT_PRIVATE_KEY": pem, "RTCBOT_WORKERS": "1", "RTCBOT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
                "RTCBOT_ANALYZERS": "editing_rtc"})
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        p = subprocess.Popen([sys.executable, "-m", "bot", "worker"], cwd=ROOT, env=env, stdout=out,
                             stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while not re.search(rf"^{STAMP} INFO rtcbot.worker: rtcbot: worker on the sqlite queue", log.read_text(), re.M):
            assert p.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
    finally:
        p.terminate()
        p.wait(30)
    # its start line says the database's schema version (bot/store/versions.py); a new one is made at it
    text = log.read_text()
    assert "bot.store.versions" not in text, text
    assert re.search(rf"^{STAMP} INFO rtcbot.worker: rtcbot: worker on the sqlite queue, 1 at a time, "
                     rf"database schema {SCHEMA_VERSION}: starting", text, re.M), text


@pytest.mark.slow
@pytest.mark.services  # it is handed a DATABASE_URL (one that nothing answers)
def test_under_json_logs_a_start_that_fails_is_json_lines_too(tmp_path: Path) -> None:
    """Settings to fix (exit 2) and a database that does not answer (exit 1): the last words of
    `rtcbot worker` under RTCBOT_LOG_FORMAT=json are JSON objects like its other lines, not
    plain `Error:` text among them."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL", "LOG_LEVEL")}
    env.update({"RTCBOT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT), "RTCBOT_LOG_FORMAT": "json"})
    bad = subprocess.run([sys.executable, "-m", "bot", "worker"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={**env, "RTCBOT_WORKERS": "0", "RTCBOT_SANDBOX": "sometimes"})
    assert bad.returncode == 2, bad.stderr
    lines = [json.loads(ln) for ln in bad.stderr.splitlines() if ln.strip()]
    assert lines and all(ln["level"] == "error" for ln in lines), bad.stderr
    said = " ".join(ln["message"] for ln in lines)
    assert "RTCBOT_WORKERS" in said and "RTCBOT_SANDBOX" in said
    from cryptography.hazmat.primitives import serialization

    pem = app_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()).decode()
    away = subprocess.run([sys.executable, "-m", "bot", "worker"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**env, "RTCBOT_APP_ID": "1", "RTCBOT_PRIVATE_KEY": pem,
                                            "DATABASE_URL": "postgresql+psycopg://rtcbot@127.0.0.1:1/none"})
    assert away.returncode == 1, away.stderr
    last = json.loads(away.stderr.strip().splitlines()[-1])
    assert last["level"] == "error" and "DATABASE_URL" in last["message"], away.stderr
