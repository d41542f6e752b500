"""An LLM endpoint's credentials never shown: one function (analyzers/urls.py) redacts every URL
rtcbot shows or logs, tried on each surface with an endpoint that fails.

Attack covered: a pull request's author reading the operator's secrets. The endpoint is
`http://user:PASSWORD@host/v1?api-key=SECRET` (userinfo and a key in the query, as gateways
take them); when it fails, the error named its whole URL, and on b3e8eed the password and the
key appeared in the check runs, the CLI's JSON, Markdown and SARIF, the Action's step summary,
outputs and stderr, and the App's log lines. Now each shows `http://***@host/v1?api-key=***`
where it shows the endpoint at all: only the operator's log and terminal do
(tests/security/test_endpoint_private.py)."""

from __future__ import annotations

import io
import json
import logging
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from analyzers.llm.client import LLMError
from analyzers.urls import UNREADABLE, redact_data, redact_url, redact_urls
from bot.app.service_checks import dashboard_problems
from bot.app.settings import ServiceSettings
from bot.core import logs
from bot.core.settings import LogSettings
from bot.entry import main
from bot.store.db import safe_url
from tests.bot.app_support import App
from tests.bot.test_action import pr_github, run_action  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import ROOT

SECRETS = ("PASSWORD", "SECRET", "user:")
EDITING = "rtcbot / EditingRTC"


def secret_url(base_url: str) -> str:
    """`base_url` (http://host:port/v1) with userinfo and a key in the query."""
    return base_url.replace("http://", "http://user:PASSWORD@", 1) + "?api-key=SECRET"


def shown(base_url: str) -> str:
    """How that URL is shown."""
    return base_url.replace("http://", "http://***@", 1) + "?api-key=***"


def assert_clean(text: str, where: str) -> None:
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, f"{where} shows {leaked}: …{text[max(0, text.find(leaked[0]) - 300):][:600]}"


# -- the one function -------------------------------------------------------------------------
@pytest.mark.parametrize(("url", "expected"), [
    ("http://user:PASSWORD@host/v1?api-key=SECRET", "http://***@host/v1?api-key=***"),
    ("https://sk-abc123@api.example.com:8443/v1", "https://***@api.example.com:8443/v1"),
    ("postgresql+psycopg://rtcbot:hunter2@db/rtcbot?sslpassword=x&sslmode=", "postgresql+psycopg://***@db/rtcbot"
                                                                             "?sslpassword=***&sslmode="),
    ("redis://:pa%40ss@127.0.0.1:6379/0", "redis://***@127.0.0.1:6379/0"),
    ("unix:///run/redis.sock?db=0&password=s3", "unix:///run/redis.sock?db=***&password=***"),
    ("http://u:p@[::1]:8080/v1?k=v#model", "http://***@[::1]:8080/v1?k=***#model"),
    ("http://a:b@c@host/v1", "http://***@host/v1"),  # an unescaped @ in the password
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),  # nothing to hide: as written
    ("http://[::1/v1", UNREADABLE),
])
def test_one_function_redacts_userinfo_and_query_values(url: str, expected: str) -> None:
    assert redact_url(url) == expected
    assert redact_urls(f"cannot reach {url} (model 'm')") == f"cannot reach {expected} (model 'm')"


def test_every_error_and_place_goes_through_it() -> None:
    url = "http://user:PASSWORD@h:1/v1?api-key=SECRET"
    assert str(LLMError(f"the LLM endpoint {url} (model 'm') timed out")) == \
        "the LLM endpoint http://***@h:1/v1?api-key=*** (model 'm') timed out"
    assert redact_data({"reasons": [f"queue at {url}"], "n": 1}) == {"reasons": ["queue at " + redact_url(url)],
                                                                      "n": 1}
    assert safe_url("postgresql+psycopg://rtcbot:hunter2@db/rtcbot") == "postgresql+psycopg://***@db/rtcbot"
    [problem] = dashboard_problems(ServiceSettings(public_url="ftp://user:PASSWORD@h/x?k=SECRET"))
    assert problem == "RTCBOT_PUBLIC_URL: must be an http(s) address such as https://github.com, not 'ftp://***@h/x?k=***'"


# -- logs -------------------------------------------------------------------------------------
@pytest.fixture
def log_lines() -> Iterator[Callable[[str], io.StringIO]]:
    """`log_lines(format)`: the root logger configured as every command configures it (debug),
    writing to the returned buffer; the test's handler removed afterwards."""
    def make(fmt: str) -> io.StringIO:
        buf = io.StringIO()
        logs.configure(LogSettings(log_format=fmt), verbose=2, stream=buf)  # type: ignore[arg-type]
        return buf

    root = logging.getLogger()
    level = root.level
    try:
        yield make
    finally:
        for h in [h for h in root.handlers if h.get_name() == "rtcbot"]:
            root.removeHandler(h)
        root.setLevel(level)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_log_lines_show_no_credentials(log_lines: Callable[[str], io.StringIO], fmt: str) -> None:
    """A message, its arguments, a traceback and a library's line (httpx names each request's
    URL at debug) all pass the formatter."""
    buf = log_lines(fmt)
    url = "http://user:PASSWORD@127.0.0.1:9/v1?api-key=SECRET"
    logging.getLogger("rtcbot.test").warning("the LLM endpoint did not answer (%s)", url)
    try:
        httpx.get(url + "&x=1", timeout=2, trust_env=False)
    except httpx.HTTPError:
        logging.getLogger("rtcbot.test").exception("request to %s failed", url)
    text = buf.getvalue()
    assert_clean(text, f"the {fmt} log")
    assert "http://***@127.0.0.1:9/v1?api-key=***" in text
    assert "HTTP Request" not in text or "&x=***" in text  # httpx's line, where it wrote one
    if fmt == "json":
        records = [json.loads(line) for line in text.splitlines()]
        assert any("Traceback" in r.get("exception", "") for r in records)
    else:
        assert "Traceback" in text


# -- the command line: JSON, Markdown, SARIF, text and stderr ---------------------------------
def test_the_clis_outputs_show_no_credentials(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """The endpoint fails (its path with the query in it is not found): each format says so,
    naming the endpoint without its credentials."""
    llm = scripted_llm(varied)
    for fmt in ("json", "markdown", "sarif", "text"):
        r = CliRunner().invoke(main, ["review", "samples/demo.diff", "--format", fmt,
                                      "--llm-base-url", secret_url(llm.base_url), "--model", llm.model])
        assert r.exit_code == 1, r.output[-2000:]
        assert "the LLM endpoint" in r.output  # named, never shown (tests/security/test_endpoint_private.py)
        assert_clean(r.output, f"--format {fmt}")


@pytest.mark.slow
def test_the_clis_one_line_error_shows_no_credentials() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    p = subprocess.run([sys.executable, "-m", "bot", "-vv", "review", "samples/demo.diff", "--llm-base-url",
                        secret_url(url), "--model", "m"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert shown(url) in p.stderr, p.stderr[-2000:]
    assert_clean(p.stdout + p.stderr, "stderr")


# -- the Action: check runs, step summary, outputs, SARIF, stdout and stderr --------------------
@pytest.mark.slow
def test_the_actions_publications_show_no_credentials(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    gh, llm = pr_github(), scripted_llm(varied)
    proc = run_action(gh, llm, tmp_path, llm_base_url=secret_url(llm.base_url), analyzers="editing-rtc",
                      sarif_file="out/rtcbot.sarif")
    [run] = gh.check_runs.values()
    assert run["status"] == "completed" and "the LLM endpoint" in json.dumps(run["output"]), proc.stderr[-2000:]
    assert_clean(json.dumps(run["output"]) + json.dumps(run["updates"]), "the check run")
    for name in ("summary.md", "output.txt", "workspace/out/rtcbot.sarif"):
        assert_clean((tmp_path / name).read_text(encoding="utf-8"), name)
    assert_clean(proc.stdout + proc.stderr, "the Action's log")


# -- the App: check runs, the job's record, log lines, /healthz ------------------------------
def test_the_apps_check_runs_logs_and_health_show_no_credentials(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM], log_lines: Callable[[str], io.StringIO]) -> None:
    buf = log_lines("text")
    gh = fake_github()
    gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=2))
    llm = scripted_llm(varied)
    a = apps(gh, llm_base_url=secret_url(llm.base_url), llm_model=llm.model)
    a.deliver("pull_request", gh.pr_event("opened", 1))
    a.run()
    [run] = gh.runs(EDITING)
    assert run["status"] == "completed" and "the LLM endpoint" in run["output"]["summary"]  # named, never shown
    assert_clean(json.dumps(run), "the check run")
    assert_clean(json.dumps([r.result for r in a.rt.store.jobs.where(repo=gh.repo)]), "the jobs' records")
    health = httpx.get(f"{a.url}/healthz", timeout=10)
    assert health.status_code in (200, 503) and "database" in health.json()
    assert_clean(health.text, "/healthz")
    text = buf.getvalue()
    assert "HTTP Request: POST http://***@127.0.0.1" in text  # the job's requests, logged at debug
    assert_clean(text, "the App's log")
