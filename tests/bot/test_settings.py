"""The service settings: every bad value one line naming its environment variable, the private
key parsed at start, `rtcbot serve` and `rtcbot worker` refusing to start (exit 2) on bad
settings, and every setting documented in docs/github-app.md."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bot.app.service_checks import (
    check_service,
    database_problems,
    private_key_problem,
    service_settings,
    start_problem,
)
from bot.app.settings import ServiceSettings, load_settings
from bot.core.settings import SettingsError, known_variables, unknown_variables
from bot.core.settings_env import env_name
from tests.fakes.github_server import app_key
from tests.support import ROOT

RTCBOT = [sys.executable, "-m", "bot"]


def rsa_pem() -> str:
    return app_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()).decode()


def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for k in list(os.environ):
        if k.startswith("RTCBOT_") or k in ("DATABASE_URL", "REDIS_URL", "LOG_LEVEL"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("RTCBOT_DATA_DIR", str(tmp_path / "data"))


def test_every_bad_value_is_one_line_naming_its_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env(monkeypatch, tmp_path)
    for k, v in {"RTCBOT_APP_ID": "abc", "RTCBOT_WORKERS": "two", "RTCBOT_PROCESS_DRAFTS": "maybe",
                 "RTCBOT_LLM_MAX_REQUESTS": "0", "RTCBOT_HTTP_RETRIES": "99", "RTCBOT_SANDBOX": "docker",
                 "RTCBOT_HEARTBEAT_S": "soon", "RTCBOT_ANALYZERS": "[oops"}.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SettingsError) as e:
        load_settings()
    assert sorted(e.value.lines) == sorted([
        "RTCBOT_APP_ID: must be an integer",
        "RTCBOT_WORKERS: must be an integer",
        "RTCBOT_PROCESS_DRAFTS: must be true or false",
        "RTCBOT_LLM_MAX_REQUESTS: must be at least 1",
        "RTCBOT_HTTP_RETRIES: must be at most 10",
        "RTCBOT_SANDBOX: must be 'auto', 'bwrap', 'userns' or 'none'",
        "RTCBOT_HEARTBEAT_S: must be a number",
        "RTCBOT_ANALYZERS: must be a JSON list or comma-separated names",
    ])
    assert "app_id" not in str(e.value) and "pydantic" not in str(e.value)


def test_a_setting_with_two_names_is_named_as_it_was_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv("RTCBOT_LOG_LEVEL", "loud")
    with pytest.raises(SettingsError, match="^RTCBOT_LOG_LEVEL: must be one of debug, info"):
        load_settings()
    monkeypatch.delenv("RTCBOT_LOG_LEVEL")
    monkeypatch.setenv("LOG_LEVEL", "WARN")
    assert load_settings().log_level == "warning"


def test_the_private_key_must_be_a_pem_rsa_key(tmp_path: Path) -> None:
    assert private_key_problem(rsa_pem()) is None
    assert "not a PEM RSA private key" in (private_key_problem("garbage") or "")
    ec_pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    assert "not RSA" in (private_key_problem(ec_pem) or "")
    locked = app_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.BestAvailableEncryption(b"pw")).decode()
    assert "encrypted" in (private_key_problem(locked) or "")
    junk = tmp_path / "key.pem"
    junk.write_text("garbage\n")
    s = ServiceSettings(app_id=1, private_key_path=junk, data_dir=tmp_path)
    assert check_service(s, app=True) == [
        "RTCBOT_PRIVATE_KEY_PATH: not a PEM RSA private key (expected the .pem file GitHub gave you)"]
    s = ServiceSettings(app_id=1, private_key_path=tmp_path / "missing.pem", data_dir=tmp_path)
    [line] = check_service(s, app=True)
    assert line.startswith("RTCBOT_PRIVATE_KEY_PATH: ") and "No such file" in line
    assert check_service(ServiceSettings(app_id=1, private_key=rsa_pem(), data_dir=tmp_path), app=True) == []
    assert check_service(ServiceSettings(data_dir=tmp_path), app=True) == [
        "RTCBOT_APP_ID: not set (the GitHub App's id)",
        "RTCBOT_PRIVATE_KEY: not set (the App's private key; or RTCBOT_PRIVATE_KEY_PATH, its file)"]
    assert check_service(ServiceSettings(data_dir=tmp_path), webhooks=True)[0].startswith("RTCBOT_WEBHOOK_SECRET: ")


def run_cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL", "LOG_LEVEL")}
    base.update({"RTCBOT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}, **env)
    return subprocess.run([*RTCBOT, *args], env=base, cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_worker_with_a_garbage_key_file_does_not_start(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_text("this is not a key\n")
    p = run_cli(tmp_path, "worker", RTCBOT_APP_ID="12", RTCBOT_PRIVATE_KEY_PATH=str(key))
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [
        "Error: RTCBOT_PRIVATE_KEY_PATH: not a PEM RSA private key (expected the .pem file GitHub gave you)"]
    assert not (tmp_path / "data").exists()  # refused before touching the database or queue


@pytest.mark.slow
def test_serve_and_worker_name_the_variable_not_the_field(tmp_path: Path) -> None:
    p = run_cli(tmp_path, "worker", RTCBOT_APP_ID="abc", RTCBOT_PRIVATE_KEY=rsa_pem())
    assert p.returncode == 2 and p.stderr.splitlines() == ["Error: RTCBOT_APP_ID: must be an integer"]
    p = run_cli(tmp_path, "serve", "--port", "1", RTCBOT_WEBHOOK_SECRET="s", RTCBOT_MAX_BODY_BYTES="big",
                RTCBOT_SANDBOX="nope")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.splitlines() == ["Error: RTCBOT_SANDBOX: must be 'auto', 'bwrap', 'userns' or 'none'",
                                     "Error: RTCBOT_MAX_BODY_BYTES: must be an integer"]
    p = run_cli(tmp_path, "serve", "--port", "1")
    assert p.returncode == 2 and p.stderr.startswith("Error: RTCBOT_WEBHOOK_SECRET: not set")


# -- every setting documented ----------------------------------------------------------------

DOC = ROOT / "docs" / "github-app.md"


def settings_table() -> list[str]:
    """The rows of the settings table (section "## 2. Settings" of docs/github-app.md)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## 2. Settings", 1)[1].split("\n## ", 1)[0]
    return [ln for ln in section.splitlines() if ln.startswith("| `")]


def test_every_service_setting_is_in_the_settings_table() -> None:
    rows = settings_table()
    assert all(ln.count(" | ") >= 2 for ln in rows), "each row: variable | meaning | default"
    documented = {name for ln in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", ln.split(" | ")[0])}
    fields = {env_name(ServiceSettings, f) for f in ServiceSettings.model_fields}
    missing = sorted(fields - documented)
    assert not missing, f"settings not documented in {DOC.name}'s settings table: {missing}"
    assert "RTCBOT_APP_ID" in fields and "DATABASE_URL" in fields and "LOG_LEVEL" in fields


def test_dashboard_settings_are_all_or_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Some of the dashboard's settings set is a mistake said at start, never a dashboard silently off."""
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv("RTCBOT_WEBHOOK_SECRET", "s" * 20)
    monkeypatch.setenv("RTCBOT_OAUTH_CLIENT_ID", "Iv1.abc")
    monkeypatch.setenv("RTCBOT_PUBLIC_URL", "javascript:alert(1)")
    with pytest.raises(SettingsError) as e:
        service_settings(webhooks=True)
    lines = e.value.lines
    assert any(x.startswith("RTCBOT_OAUTH_CLIENT_SECRET: not set, while RTCBOT_OAUTH_CLIENT_ID is") for x in lines)
    assert any(x.startswith("RTCBOT_SESSION_SECRET: not set") for x in lines)
    assert any(x.startswith("RTCBOT_PUBLIC_URL: must be an http(s) address") for x in lines)
    assert not any(x.startswith("RTCBOT_OAUTH_CLIENT_ID") for x in lines)
    monkeypatch.setenv("RTCBOT_OAUTH_CLIENT_SECRET", "secret")
    monkeypatch.setenv("RTCBOT_SESSION_SECRET", "x" * 32)
    monkeypatch.setenv("RTCBOT_PUBLIC_URL", "https://rtcbot.example.com")
    assert service_settings(webhooks=True).oauth_client_id == "Iv1.abc"
    for k in ("RTCBOT_OAUTH_CLIENT_ID", "RTCBOT_OAUTH_CLIENT_SECRET", "RTCBOT_SESSION_SECRET"):
        monkeypatch.delenv(k)
    assert service_settings(webhooks=True).oauth_client_id is None  # none set: the dashboard is off


# -- every setting typed and bounded, every problem at once ------------------------------------

@pytest.mark.parametrize(("variable", "value", "problem"), [
    ("RTCBOT_WORKERS", "0", "must be at least 1"),
    ("RTCBOT_WORKERS", "65", "must be at most 64"),
    ("RTCBOT_HEARTBEAT_S", "0", "must be more than 0"),
    ("RTCBOT_STALE_AFTER_S", "-1", "must be more than 0"),
    ("RTCBOT_REQUEUE_AFTER_S", "0", "must be more than 0"),
    ("RTCBOT_SWEEP_INTERVAL_S", "-5", "must be more than 0"),
    ("RTCBOT_MAX_ATTEMPTS", "0", "must be at least 1"),
    ("RTCBOT_LLM_CONCURRENCY", "0", "must be at least 1"),
    ("RTCBOT_MAX_BODY_BYTES", "0", "must be at least 1"),
    ("RTCBOT_APP_ID", "0", "must be at least 1"),
    ("RTCBOT_ANALYZERS", "editing_rtc,foo", "unknown analyzer 'foo' (known: editing_rtc, crscore, autofix, "
                                            "synthesis_rtc, review)"),
    ("RTCBOT_COMMENT_ANALYZERS", "crscore,nope,zip", "unknown analyzers 'nope', 'zip' (known: editing_rtc, "
                                                     "crscore, autofix, synthesis_rtc, review)"),
])
def test_each_setting_is_bounded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str, value: str,
                                 problem: str) -> None:
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as e:
        load_settings()
    assert e.value.lines == [f"{variable}: {problem}"]


def test_analyzer_names_are_read_as_the_registry_spells_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv("RTCBOT_ANALYZERS", "editing-rtc, crscore,editing_rtc")
    monkeypatch.setenv("RTCBOT_COMMENT_ANALYZERS", "all")
    s = load_settings()
    assert s.analyzers == ["editing_rtc", "crscore"]
    assert s.comment_analyzers == ["editing_rtc", "crscore", "autofix", "synthesis_rtc", "review"]


def test_a_job_and_a_worker_must_beat_more_often_than_they_are_taken_for_dead(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv("RTCBOT_HEARTBEAT_S", "60")
    with pytest.raises(SettingsError) as e:
        service_settings()
    assert e.value.lines == ["RTCBOT_STALE_AFTER_S: must be more than RTCBOT_HEARTBEAT_S (60): a job that marks "
                             "itself alive less often would be taken for dead",
                             "RTCBOT_WORKER_STALE_S: must be more than RTCBOT_HEARTBEAT_S (60): a worker that "
                             "beats less often would be taken for dead"]
    monkeypatch.setenv("RTCBOT_STALE_AFTER_S", "61")
    monkeypatch.setenv("RTCBOT_WORKER_STALE_S", "61")
    s = service_settings()
    assert (s.stale_after_s, s.worker_stale_s) == (61, 61)


@pytest.mark.parametrize(("name", "value"), [("RTCBOT_WORKER_STALE_S", "0"), ("RTCBOT_WORKER_STALE_S", "3601"),
                                             ("RTCBOT_HEALTH_MAX_QUEUE_AGE_S", "-1"),
                                             ("RTCBOT_HEALTH_MAX_QUEUE_AGE_S", "1e9")])
def test_health_settings_are_bounded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, value: str) -> None:
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as e:
        load_settings()
    assert len(e.value.lines) == 1 and e.value.lines[0].startswith(f"{name}: "), e.value.lines


FOUR_BAD = {"RTCBOT_WORKERS": "0", "RTCBOT_STALE_AFTER_S": "-1", "RTCBOT_ANALYZERS": "editing_rtc,foo",
            "RTCBOT_ANALYSERS": "editing_rtc"}
FOUR_LINES = [
    "RTCBOT_ANALYSERS: not a setting; did you mean RTCBOT_ANALYZERS?",
    "RTCBOT_WORKERS: must be at least 1",
    "RTCBOT_STALE_AFTER_S: must be more than 0",
    "RTCBOT_ANALYZERS: unknown analyzer 'foo' (known: editing_rtc, crscore, autofix, synthesis_rtc, review)",
]


def test_four_bad_values_are_four_problems_in_one_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env(monkeypatch, tmp_path)
    for k, v in FOUR_BAD.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SettingsError) as e:
        service_settings()
    assert sorted(e.value.lines) == sorted(FOUR_LINES)
    assert str(e.value) == "\n".join(e.value.lines)
    # and what the service checks after loading is said in the same run: a missing App id
    with pytest.raises(SettingsError) as e:
        service_settings(app=True)
    assert sorted(e.value.lines) == sorted([*FOUR_LINES, "RTCBOT_APP_ID: not set (the GitHub App's id)",
                                            "RTCBOT_PRIVATE_KEY: not set (the App's private key; or "
                                            "RTCBOT_PRIVATE_KEY_PATH, its file)"])


@pytest.mark.slow
def test_serve_and_worker_report_every_problem_at_once(tmp_path: Path) -> None:
    for command, more in (("worker", {"RTCBOT_APP_ID": "12", "RTCBOT_PRIVATE_KEY": rsa_pem()}),
                          ("serve", {"RTCBOT_WEBHOOK_SECRET": "s" * 20})):
        p = run_cli(tmp_path, command, **FOUR_BAD, **more)
        assert p.returncode == 2, p.stderr
        assert "Traceback" not in p.stderr
        assert sorted(p.stderr.splitlines()) == sorted(f"Error: {line}" for line in FOUR_LINES)
    # the log settings, read before any command runs, are said with the rest too
    p = run_cli(tmp_path, "worker", **FOUR_BAD, RTCBOT_LOG_FORMAT="xml")
    assert p.returncode == 2 and "Error: RTCBOT_LOG_FORMAT: must be 'text' or 'json'" in p.stderr.splitlines()
    assert len(p.stderr.splitlines()) == 7  # with RTCBOT_APP_ID and RTCBOT_PRIVATE_KEY not set
    assert not (tmp_path / "data").exists()  # refused before touching the database or queue


def test_the_action_and_config_validate_say_every_problem_in_the_same_words(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bot.entry import main

    clean_env(monkeypatch, tmp_path)
    for k, v in {"RTCBOT_SANDBOX": "docker", "RTCBOT_SEMGREP_MAX_TARGET_BYTES": "0",
                 "RTCBOT_HTTP_TIMEOUT_S": "0", "RTCBOT_SANDBX": "none"}.items():
        monkeypatch.setenv(k, v)
    tools_lines = ["Error: RTCBOT_SANDBX: not a setting; did you mean RTCBOT_SANDBOX?",
                   "Error: RTCBOT_SEMGREP_MAX_TARGET_BYTES: must be more than 0",
                   "Error: RTCBOT_SANDBOX: must be 'auto', 'bwrap', 'userns' or 'none'"]
    config = tmp_path / "rtcbot.yml"
    config.write_text("drafts: on\n")
    validate = CliRunner().invoke(main, ["config", "validate", str(config)])
    assert validate.exit_code == 2 and sorted(validate.stderr.splitlines()) == sorted(tools_lines)
    action = CliRunner().invoke(main, ["action"])
    assert action.exit_code == 2, action.output
    github_line = "Error: RTCBOT_HTTP_TIMEOUT_S: must be more than 0"
    assert sorted(action.stderr.splitlines()) == sorted([*tools_lines, github_line])


# -- RTCBOT_ variables rtcbot does not read ----------------------------------------------------

def test_an_unknown_variable_is_an_error_when_it_is_a_near_miss_and_a_warning_otherwise() -> None:
    errors, warnings = unknown_variables({
        "RTCBOT_ANALYSERS": "x", "RTCBOT_WORKER": "3", "rtcbot_stale_after": "9", "RTCBOT_STALE_AFTER_S": "60",
        "RTCBOT_ANALYZERS": "crscore", "RTCBOT_TEST_REDIS_DB": "3", "RTCBOT_PMD_SERVER": "off",
        "RTCBOT_COLOUR": "blue", "RTCBOT_SEMGREP_TIMEOUT": "9", "DATABASE": "x", "REDIS": "y"})
    assert errors == ["RTCBOT_ANALYSERS: not a setting; did you mean RTCBOT_ANALYZERS?",
                      "RTCBOT_WORKER: not a setting; did you mean RTCBOT_WORKERS?",
                      "rtcbot_stale_after: not a setting; did you mean RTCBOT_STALE_AFTER_S?"]
    assert warnings == ["RTCBOT_COLOUR: not a setting rtcbot reads, ignored",
                        "RTCBOT_SEMGREP_TIMEOUT: not a setting rtcbot reads, ignored; "
                        "did you mean RTCBOT_SEMGREP_RULES?"]


def test_a_far_unknown_variable_is_logged_once_and_the_service_starts(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv("RTCBOT_COLOUR_SCHEME", "dark")
    with caplog.at_level("WARNING", logger="rtcbot.settings"):
        load_settings()
        load_settings()
    said = [r.getMessage() for r in caplog.records if r.name == "rtcbot.settings"]
    assert said == ["RTCBOT_COLOUR_SCHEME: not a setting rtcbot reads, ignored"]
    monkeypatch.setenv("RTCBOT_WEBHOOK_SECRT", "s" * 20)
    with pytest.raises(SettingsError, match="^RTCBOT_WEBHOOK_SECRT: not a setting; did you mean RTCBOT_WEBHOOK_SECRET"):
        load_settings()


def test_every_rtcbot_variable_rtcbot_reads_or_documents_is_known() -> None:
    """A name in the code, the scripts or the docs that the check did not know would be
    reported as a mistake to whoever sets it."""
    known = known_variables()
    places = [*ROOT.glob("bot/**/*.py"), *ROOT.glob("analyzers/**/*.py"), *ROOT.glob("reporters/**/*.py"),
              *ROOT.glob("scripts/*"), *ROOT.glob("docs/**/*.md"), *ROOT.glob("docs/workflows/*.yml"),
              ROOT / "README.md", ROOT / "Makefile", ROOT / "Dockerfile", ROOT / "action.yml"]
    named = {m for p in places if p.is_file() for m in re.findall(r"\bRTCBOT_[A-Z0-9_]*[A-Z0-9]\b", p.read_text())}
    assert len(named) > 40
    assert sorted(named - known - MISSPELT_ON_PURPOSE) == []


def test_the_core_knows_the_apps_variables_without_importing_the_app() -> None:
    """bot/core/settings.py's SERVICE_VARIABLES lists the App's own variables (the CLI and the
    Action check names against them too); it is exactly what ServiceSettings reads beyond the core's settings."""
    from bot.core.settings import (
        SERVICE_VARIABLES,
        CommandSettings,
        LLMEnvSettings,
        LogSettings,
        ToolSettings,
        model_variables,
    )
    from bot.github.settings import GitHubSettings

    core = model_variables(LogSettings, LLMEnvSettings, ToolSettings, GitHubSettings, CommandSettings)
    assert sorted(SERVICE_VARIABLES) == sorted(model_variables(ServiceSettings) - core)
    assert "RTCBOT_WEBHOOK_SECRET" in known_variables() and "RTCBOT_DATABASE_URL" in known_variables()


MISSPELT_ON_PURPOSE = {"RTCBOT_ANALYSERS", "RTCBOT_COLOUR"}  # the docs' examples of a near miss and of a stranger


# -- the database ------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "problem"), [
    ("notaurl", "DATABASE_URL: not a database URL (e.g. postgresql://rtcbot@db.internal/rtcbot)"),
    ("mysql://rtcbot@db/rtcbot", "DATABASE_URL: rtcbot stores its data in PostgreSQL or SQLite, not 'mysql' "
                                 "(e.g. postgresql://rtcbot@db.internal/rtcbot)"),
    ("postgresql+psycopg2://rtcbot@db/rtcbot", "DATABASE_URL: the driver of 'postgresql+psycopg2' is not "
                                               "installed (postgresql+psycopg:// comes with rtcbot)"),
])
def test_a_database_url_that_cannot_work_is_one_line_at_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                             url: str, problem: str) -> None:
    if "psycopg2" in url and importlib.util.find_spec("psycopg2") is not None:
        pytest.skip("psycopg2 is installed here")
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("RTCBOT_WORKERS", "0")
    with pytest.raises(SettingsError) as e:
        service_settings()
    assert e.value.lines == ["RTCBOT_WORKERS: must be at least 1", problem]


def test_a_redis_url_that_is_not_one_is_one_line_at_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env(monkeypatch, tmp_path)
    monkeypatch.setenv("REDIS_URL", "redis.internal:6379")
    with pytest.raises(SettingsError) as e:
        service_settings()
    assert e.value.lines == ["REDIS_URL: not a Redis URL "
                             "(e.g. redis://redis.internal:6379/0; rediss:// or unix:// too)"]
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    assert service_settings().redis_url == "redis://127.0.0.1:1/0"


def test_a_database_that_does_not_answer_is_one_line_naming_database_url(tmp_path: Path) -> None:
    from bot.store.store import Store

    s = ServiceSettings(database_url="postgresql://rtcbot:hunter2@127.0.0.1:1/rtcbot", data_dir=tmp_path)
    assert database_problems(s) == []  # a URL that reads well: only connecting tells
    with pytest.raises(Exception) as e:
        Store(s.database())
    assert start_problem(e.value, s) == ("DATABASE_URL: cannot use the database at "
                                         "postgresql+psycopg://***@127.0.0.1:1/rtcbot: Connection refused")


@pytest.mark.slow
def test_worker_with_a_database_that_does_not_answer_says_one_line(tmp_path: Path) -> None:
    p = run_cli(tmp_path, "worker", RTCBOT_APP_ID="12", RTCBOT_PRIVATE_KEY=rsa_pem(),
                DATABASE_URL="postgresql://rtcbot:hunter2@127.0.0.1:1/rtcbot")
    assert p.returncode == 1, p.stderr
    assert p.stderr.splitlines() == [
        "Error: DATABASE_URL: cannot use the database at postgresql+psycopg://***@127.0.0.1:1/rtcbot: "
        "Connection refused"]
