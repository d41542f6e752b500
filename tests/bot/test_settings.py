"""The service settings: every bad value one line naming its environment variable, the private
key parsed at start, `rtcbot serve` and `rtcbot worker` refusing to start (exit 2) on bad
settings, and every setting documented in docs/github-app.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bot.settings import (
    ServiceSettings,
    SettingsError,
    check_service,
    env_name,
    load_settings,
    private_key_problem,
    service_settings,
)
from tests.fakes.github_server import app_key
from tests.support import ROOT

RTCBOT = [sys.executable, "-m", "bot.cli"]


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
