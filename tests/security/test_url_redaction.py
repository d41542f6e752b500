"""An LLM endpoint's credentials never shown: one function (analyzers/urls.py) redacts every URL
rtcbot shows or logs, tried on each surface with an endpoint that fails.

Attack covered: a pull request's author reading the operator's secrets. The endpoint is
`http://user:PASSWORD@host/v1?api-key=SECRET` (userinfo and a key in the query, as gateways
take them); when it fails, the error named its whole URL, and on b3e8eed the password and the
key appeared in the check runs, the CLI's JSON, Markdown and SARIF, the Action's step summary,
outputs and stderr, and the App's log lines. Now each shows `http://***@host/v1?api-key=***`
where it shows the endpoint at all: only the operator's log and terminal do
(tests/security/test_endpoint_private.py).

Issue #51, item 6: on f32233f a password with an apostrophe (`http://user:s3cr'etPW@host/v1?
api-key=K3Y`) was published whole on all of those and on the App's public check run, because the
URL pattern stopped at `'` (and at `"`, `<`, `>`, a backtick and a space). Now the userinfo runs
to the authority's last `@` whatever it holds, and urllib's parser reads the rest
(analyzers/urls.py); every surface is tried with such a URL (`QUOTED`), and property tests
(hypothesis) generate credentials from every printable character, for the one function and for
the CLI's and the App's surfaces."""

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
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from analyzers.llm.client import LLMError
from analyzers.urls import UNREADABLE, redact_data, redact_url, redact_urls
from bot.app.commands.doctor import llm as doctor_llm
from bot.app.service_checks import dashboard_problems
from bot.app.settings import ServiceSettings
from bot.core import logs
from bot.core.settings import LogSettings
from bot.entry import main
from bot.store.db import safe_url
from tests import hypothesis_profiles
from tests.bot.app_support import App
from tests.bot.test_action import pr_github, run_action  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import ROOT

SECRETS = ("PASSWORD", "SECRET", "user:", "s3cr", "etPW", "K3Y")
EDITING = "rtcbot / EditingRTC"
QUOTED_USERINFO = "user:s3cr'et\"P W<a>`etPW"  # the characters that ended the old pattern
QUOTED_KEY = "K3Y'\"<x>`SECRET"


def secret_url(base_url: str) -> str:
    """`base_url` (http://host:port/v1) with userinfo and a key in the query."""
    return base_url.replace("http://", "http://user:PASSWORD@", 1) + "?api-key=SECRET"


def quoted_url(base_url: str) -> str:
    """... with quotes, angle brackets, a backtick and a space in them (issue #51, item 6)."""
    return base_url.replace("http://", f"http://{QUOTED_USERINFO}@", 1) + f"?api-key={QUOTED_KEY}"


URLS = {"plain": secret_url, "quoted": quoted_url}


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
    ("http://user:s3cr'etPW@host/v1?api-key=KEY", "http://***@host/v1?api-key=***"),  # issue #51
    ("http://u:a\"b<c>d`e f@host:1/v1?k=a'b\"c<d>`e", "http://***@host:1/v1?k=***"),
    ("http://host/v1?sk-abc123&verbose", "http://host/v1?***&verbose"),  # a bare key, a flag
    ("http://host/v1#token=abc", "http://host/v1#token=***"),
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


def _credential(alphabet: st.SearchStrategy[str], start: str, end: str) -> st.SearchStrategy[str]:
    """A credential from `alphabet` between two markers: a credential shown whole shows `start`,
    one cut short anywhere shows `end`."""
    return st.text(alphabet, max_size=24).map(lambda s: f"{start}{s}{end}")


# every printable character: in the userinfo, all but the three that end an authority for every
# parser (written percent-encoded, as a client needs them); in a query value, all but space,
# `&` and `#` (which end a value: a client sends them encoded)
PRINTABLE = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
USERINFO = _credential(PRINTABLE, "Pq1", "Zx3").map(
    lambda s: s.replace("%", "%25").replace("/", "%2F").replace("?", "%3F").replace("#", "%23"))
KEY = _credential(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs"), blacklist_characters="&#"),
                  "Kk7", "Yy9")
MARKERS = ("Pq1", "Zx3", "Kk7", "Yy9")


def marked_url(base_url: str, userinfo: str, key: str) -> str:
    return base_url.replace("http://", f"http://{userinfo}@", 1) + f"?api-key={key}"


def assert_unmarked(text: str, where: str) -> None:
    marks = [m for m in MARKERS if m in text]
    assert not marks, f"{where} shows {marks}: …{text[max(0, text.find(marks[0]) - 300):][:600]}"


@given(userinfo=USERINFO, key=KEY)
@example(userinfo="Pq1user:s3cr'etPWZx3", key="Kk7KEYYy9")  # the issue's
@settings(max_examples=hypothesis_profiles.examples(200))
def test_any_credential_is_hidden_wherever_the_url_stands(userinfo: str, key: str) -> None:
    url = marked_url("http://127.0.0.1:9/v1", userinfo, key)
    for text in (url, f"the LLM endpoint {url} (model 'm') timed out", f"not {url!r}", f"<{url}>",
                 f"a log line: POST {url}/chat/completions \"HTTP/1.1 404\"", f"({url}).\nnext line"):
        red = redact_urls(text)
        assert_unmarked(red, repr(red))
        assert "http://***@127.0.0.1:9/v1?api-key=***" in red, red
    assert redact_url(url) == "http://***@127.0.0.1:9/v1?api-key=***"
    assert_unmarked(json.dumps(redact_data({"reasons": [url]})), "redact_data")


def test_doctor_names_the_endpoint_without_its_credentials() -> None:
    line = doctor_llm(ServiceSettings(llm_base_url=quoted_url("http://h:1/v1"), llm_model="m")).line()
    assert line == "ok      LLM: the endpoint http://***@h:1/v1?api-key=*** (model m)"


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
def _cli_outputs(llm: ScriptedLLM, url: str) -> Iterator[tuple[str, str]]:
    """(format, what `rtcbot review` wrote to stdout and stderr) for each format, on the endpoint
    `url`, which fails (its path with the query in it is not found): each format says so, naming
    the endpoint."""
    for fmt in ("json", "markdown", "sarif", "text"):
        r = CliRunner().invoke(main, ["review", "samples/demo.diff", "--format", fmt,
                                      "--llm-base-url", url, "--model", llm.model])
        assert r.exit_code == 1, r.output[-2000:]
        assert "the LLM endpoint" in r.output  # named, never shown (tests/security/test_endpoint_private.py)
        yield fmt, r.output


@pytest.mark.parametrize("style", list(URLS))
def test_the_clis_outputs_show_no_credentials(scripted_llm: Callable[..., ScriptedLLM], style: str) -> None:
    llm = scripted_llm(varied)
    for fmt, out in _cli_outputs(llm, URLS[style](llm.base_url)):
        assert_clean(out, f"--format {fmt}")


@pytest.mark.slow
@given(userinfo=USERINFO, key=KEY)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_clis_outputs_hide_any_credential(scripted_llm: Callable[..., ScriptedLLM], userinfo: str,
                                               key: str) -> None:
    llm = scripted_llm(varied)
    for fmt, out in _cli_outputs(llm, marked_url(llm.base_url, userinfo, key)):
        assert_unmarked(out, f"--format {fmt}")


@pytest.mark.slow
@pytest.mark.parametrize("style", list(URLS))
def test_the_clis_one_line_error_shows_no_credentials(style: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    p = subprocess.run([sys.executable, "-m", "bot", "-vv", "review", "samples/demo.diff", "--llm-base-url",
                        URLS[style](url), "--model", "m"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert shown(url) in p.stderr, p.stderr[-2000:]
    assert_clean(p.stdout + p.stderr, "stderr")


# -- the Action: check runs, step summary, outputs, SARIF, stdout and stderr --------------------
@pytest.mark.slow
@pytest.mark.parametrize("style", list(URLS))
def test_the_actions_publications_show_no_credentials(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path, style: str) -> None:
    gh, llm = pr_github(), scripted_llm(varied)
    proc = run_action(gh, llm, tmp_path, llm_base_url=URLS[style](llm.base_url), analyzers="editing-rtc",
                      sarif_file="out/rtcbot.sarif")
    [run] = gh.check_runs.values()
    assert run["status"] == "completed" and "the LLM endpoint" in json.dumps(run["output"]), proc.stderr[-2000:]
    assert_clean(json.dumps(run["output"]) + json.dumps(run["updates"]), "the check run")
    for name in ("summary.md", "output.txt", "workspace/out/rtcbot.sarif"):
        assert_clean((tmp_path / name).read_text(encoding="utf-8"), name)
    assert_clean(proc.stdout + proc.stderr, "the Action's log")


# -- the App: check runs, the job's record, log lines, /healthz ------------------------------
def _app_surfaces(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub], llm: ScriptedLLM,
                  log_lines: Callable[[str], io.StringIO], url: str) -> list[tuple[str, str]]:
    """(where, what it shows) for the App analysing a pull request on the endpoint `url`, which
    fails: the check run, the jobs' records, /healthz and the App's log."""
    buf = log_lines("text")
    gh = fake_github()
    gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=2))
    a = apps(gh, llm_base_url=url, llm_model=llm.model)
    a.deliver("pull_request", gh.pr_event("opened", 1))
    a.run()
    [run] = gh.runs(EDITING)
    assert run["status"] == "completed" and "the LLM endpoint" in run["output"]["summary"]  # named, never shown
    health = httpx.get(f"{a.url}/healthz", timeout=10)
    assert health.status_code in (200, 503) and "database" in health.json()
    text = buf.getvalue()
    assert "HTTP Request: POST http://***@127.0.0.1" in text  # the job's requests, logged at debug
    return [("the check run", json.dumps(run)), ("the jobs' records", json.dumps(
        [r.result for r in a.rt.store.jobs.where(repo=gh.repo)])), ("/healthz", health.text), ("the App's log", text)]


@pytest.mark.parametrize("style", list(URLS))
def test_the_apps_check_runs_logs_and_health_show_no_credentials(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM], log_lines: Callable[[str], io.StringIO], style: str) -> None:
    llm = scripted_llm(varied)
    surfaces = _app_surfaces(apps, fake_github, llm, log_lines, URLS[style](llm.base_url))
    summary = json.loads(surfaces[0][1])["output"]["summary"]
    assert "the LLM endpoint" in summary  # named, never shown
    for where, text in surfaces:
        assert_clean(text, where)


@pytest.mark.slow
@given(userinfo=USERINFO, key=KEY)
# one App per test (a second analysis of the same pull request in it is not made again): one
# credential a run, drawn afresh each time
@settings(max_examples=1, deadline=None, database=None, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_apps_surfaces_hide_any_credential(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],
        log_lines: Callable[[str], io.StringIO], userinfo: str, key: str) -> None:
    llm = scripted_llm(varied)
    for where, text in _app_surfaces(apps, fake_github, llm, log_lines, marked_url(llm.base_url, userinfo, key)):
        assert_unmarked(text, where)
