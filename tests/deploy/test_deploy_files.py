"""The deployment files say only what rtcbot understands: deploy/compose.yml parses and builds
the repository's Dockerfile, its rtcbot services run commands that exist with options they
take and set only settings rtcbot reads; the systemd units parse, run an existing rtcbot command
from the env file, and keep the sandbox (bubblewrap) possible; every code block of
docs/deploy.md is checked the same way (units, env lines, command lines)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from pydantic import AliasChoices
from pydantic_settings import BaseSettings

from bot.app.settings import ServiceSettings
from bot.core.settings import OTHER_VARIABLES, LLMEnvSettings, known_variables
from bot.core.settings_env import env_name
from bot.entry import main
from tests.deploy.stack import DEPLOY, ENV_FILE, UNITS, exec_args, parse_env, parse_unit, read_env_file, read_unit
from tests.support import ROOT

COMPOSE = DEPLOY / "compose.yml"
DOC = ROOT / "docs" / "deploy.md"
RTCBOT_SERVICES = ("serve", "worker")
# read outside the settings models: prometheus_client's folder (bot/app/commands/serve.py)
READ_ELSEWHERE = {"PROMETHEUS_MULTIPROC_DIR"}


def _names(model: type[BaseSettings]) -> set[str]:
    out: set[str] = set()
    for field, info in model.model_fields.items():
        alias = info.validation_alias
        out.update([str(c) for c in alias.choices] if isinstance(alias, AliasChoices) else [env_name(model, field)])
    return out


def setting_names() -> set[str]:
    """Every variable an operator may give rtcbot's services: the settings' names and their
    other names (DATABASE_URL, LOG_LEVEL, OPENAI_BASE_URL, …), less the names only the install
    script and the tests read."""
    internal = {n for n, why in OTHER_VARIABLES.items() if "install" in why or "test" in why}
    return (known_variables() - internal) | _names(ServiceSettings) | _names(LLMEnvSettings) | READ_ELSEWHERE


def unknown_names(names: set[str] | list[str], *, also: set[str] | frozenset[str] = frozenset()) -> list[str]:
    known = setting_names() | also
    return sorted(n for n in names if n not in known)


def command_problem(args: list[str]) -> str | None:
    """Why `rtcbot <args>` would not start as written (an unknown command, option or value), or None."""
    if not args:
        return "no command"
    ctx = click.Context(main)
    cmd = main.get_command(ctx, args[0])
    if cmd is None:
        return f"no command {args[0]!r}"
    try:
        cmd.make_context(args[0], list(args[1:]), parent=ctx)
    except click.ClickException as e:
        return f"rtcbot {shlex.join(args)}: {e.format_message()}"
    return None


# -- the files ------------------------------------------------------------------------------------
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_env_file_names_only_settings_rtcbot_reads() -> None:
    env = read_env_file(ENV_FILE)
    required = {"RTCBOT_WEBHOOK_SECRET", "RTCBOT_APP_ID", "RTCBOT_PRIVATE_KEY_PATH", "DATABASE_URL", "REDIS_URL"}
    assert required <= set(env)
    assert unknown_names(set(env)) == []


def test_compose_runs_serve_two_workers_redis_and_postgres_from_the_dockerfile() -> None:
    services = compose()["services"]
    assert set(services) == {"serve", "worker", "redis", "postgres"}
    assert services["worker"]["deploy"]["replicas"] == 2
    for name in RTCBOT_SERVICES:
        s = services[name]
        assert (COMPOSE.parent / s["build"]["context"] / s["build"]["dockerfile"]).resolve() == ROOT / "Dockerfile"
        assert command_problem(s["command"]) is None, command_problem(s["command"])
        assert s["command"][0] == name
        assert unknown_names(set(s["environment"])) == []
        assert (COMPOSE.parent / s["env_file"]).with_suffix(".env.example") == ENV_FILE
        assert set(s["depends_on"]) == {"postgres", "redis"}
        assert all(c["condition"] == "service_healthy" for c in s["depends_on"].values())
        assert s["environment"]["DATABASE_URL"].split("@")[1].startswith("postgres:5432/")
        assert s["environment"]["REDIS_URL"].startswith("redis://redis:6379/")
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["rtcbot"]' in dockerfile  # a service's command is rtcbot's arguments
    port = services["serve"]["command"][services["serve"]["command"].index("--port") + 1]
    assert f"EXPOSE {port}" in dockerfile and services["serve"]["ports"] == [f"127.0.0.1:{port}:{port}"]


def test_compose_has_healthchecks_volumes_and_the_secret_it_names() -> None:
    data = compose()
    services = data["services"]
    for name in ("serve", "redis", "postgres"):
        assert services[name]["healthcheck"]["test"][0] == "CMD", name
    assert "/livez" in " ".join(services["serve"]["healthcheck"]["test"])  # serve answers (docs/deploy.md, "Health")
    named = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert named == set(data["volumes"]) == {"postgres-data", "redis-data"}
    assert services["serve"]["secrets"] == ["rtcbot_private_key"] and set(data["secrets"]) == {"rtcbot_private_key"}
    assert services["serve"]["environment"]["RTCBOT_PRIVATE_KEY_PATH"] == "/run/secrets/rtcbot_private_key"
    assert services["worker"]["stop_signal"] == "SIGINT"  # finish running jobs (docs/deploy.md)


@pytest.mark.parametrize("name", sorted(UNITS))
def test_each_unit_runs_an_rtcbot_command_as_its_own_user_from_the_env_file(name: str) -> None:
    service = read_unit(UNITS[name])["Service"]
    args = exec_args(UNITS[name])
    assert args[0] == name and command_problem(args) is None, command_problem(args)
    assert service["ExecStart"].startswith("/opt/rtcbot/bin/rtcbot ")  # where the Dockerfile installs it
    assert service["User"] == "rtcbot" and service["EnvironmentFile"] == "/etc/rtcbot/rtcbot.env"
    assert service["Restart"] == "always" and service["NoNewPrivileges"] == "yes"
    # exit 2: a setting to fix, not restarted in a loop; the stop signal to rtcbot alone (its
    # children, PMD's JVM and the model server, are stopped by it), all SIGKILLed at the end
    # 126 and 127: a program that cannot run ("bad interpreter" from an interpreter the service's
    # user cannot read, or not found), which a restart every few seconds would only repeat
    assert service["RestartPreventExitStatus"].split() == ["2", "126", "127"] and service["KillMode"] == "mixed"
    assert unknown_names(environment_names(service.get("Environment", ""))) == []


def environment_names(value: str) -> list[str]:
    """The names an Environment= line sets."""
    return [word.split("=", 1)[0] for word in shlex.split(value)]


LONGEST_JOB_S = 245  # an analysis on the embedded model, measured (#48: 229-245 s)


def test_a_stopping_worker_has_time_to_finish_the_longest_job() -> None:
    """SIGINT lets a worker finish its jobs; systemd and compose wait for it long enough."""
    service = read_unit(UNITS["worker"])["Service"]
    assert service["KillSignal"] == "SIGINT" and int(service["TimeoutStopSec"]) >= 2 * LONGEST_JOB_S
    grace = compose()["services"]["worker"]["stop_grace_period"]
    assert grace.endswith("m") and int(grace[:-1]) * 60 == int(service["TimeoutStopSec"])


def test_the_worker_unit_leaves_bubblewrap_and_the_jvm_what_they_need() -> None:
    """bwrap unshares user, mount, PID, network, IPC and UTS namespaces and brings up the
    loopback over netlink; PMD's JVM writes and runs its compiled code."""
    service = read_unit(UNITS["worker"])["Service"]
    assert "RestrictNamespaces" not in service and "MemoryDenyWriteExecute" not in service
    assert "SystemCallFilter" not in service  # @system-service lacks mount(2), which bwrap calls
    assert "AF_NETLINK" in service["RestrictAddressFamilies"].split()
    assert service["KillSignal"] == "SIGINT"


def test_the_metric_files_live_off_the_data_disk_in_every_install() -> None:
    """serve's memory-mapped metric files (bot/app/commands/serve.py `metrics_dir`): systemd
    gives it /run/rtcbot (RUNTIME_DIRECTORY), a container has /dev/shm; no install names a
    PROMETHEUS_MULTIPROC_DIR, which would win over both."""
    service = read_unit(UNITS["serve"])["Service"]
    assert service["RuntimeDirectory"] == "rtcbot" and service["RuntimeDirectoryMode"] == "0700"
    assert "PROMETHEUS_MULTIPROC_DIR" not in compose()["x-rtcbot"]["environment"]
    for path in (*UNITS.values(), ROOT / "Dockerfile", ROOT / "deploy" / "rtcbot.env.example"):
        assert "PROMETHEUS_MULTIPROC_DIR" not in path.read_text(), path


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_reads_every_key_of_the_units(tmp_path: Path) -> None:
    """systemd-analyze verify: an unknown key or a bad value is reported; the one complaint left
    is that /opt/rtcbot/bin/rtcbot is not installed on this machine."""
    for unit in UNITS.values():
        copy = tmp_path / unit.name.replace("@.", "@1.")
        copy.write_text(unit.read_text(encoding="utf-8"), encoding="utf-8")
        r = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60)
        lines = [ln for ln in (r.stdout + r.stderr).splitlines()
                 if ln.strip() and "/opt/rtcbot/bin/rtcbot is not executable" not in ln]
        assert lines == [], lines


# -- docs/deploy.md's code blocks -----------------------------------------------------------------
BLOCK = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```$", re.M | re.S)
CHECKED = ("ini", "sh", "env")


def doc_blocks() -> list[tuple[str, str]]:
    return [(m["lang"], m["body"]) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))]


SEPARATORS = ("&", "&&", "|", "||", ";")


def rtcbot_lines(sh: str) -> list[list[str]]:
    """The rtcbot command lines of a shell block (comments dropped), each as its arguments: a
    command whose program is `rtcbot` or `…/bin/rtcbot`, after any `VAR=value` and `sudo [-u user]`."""
    out: list[list[str]] = []
    for line in sh.splitlines():
        words = shlex.split(line, comments=True)
        commands: list[list[str]] = [[]]
        for w in words:
            commands.append([]) if w in SEPARATORS else commands[-1].append(w)
        for cmd in commands:
            while cmd and (re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", cmd[0]) or cmd[0] == "sudo"):
                cmd = cmd[3:] if cmd[0] == "sudo" and cmd[1:2] == ["-u"] else cmd[1:]
            if cmd and (cmd[0] == "rtcbot" or cmd[0].endswith("/bin/rtcbot")):
                out.append(cmd[1:])
    return out


def assigned_names(sh: str) -> list[str]:
    """The variables a shell block sets (`export X=…`, `X=… command`); compose's own
    POSTGRES_PASSWORD is the postgres image's, not rtcbot's."""
    return [m[1] for m in re.finditer(r"(?:^|\s)([A-Z][A-Z0-9_]*)=", sh) if m[1] != "POSTGRES_PASSWORD"]


@pytest.mark.parametrize("n", range(len(doc_blocks())))
def test_each_code_block_of_deploy_md_says_what_rtcbot_understands(n: int) -> None:
    lang, body = doc_blocks()[n]
    assert lang in (*CHECKED, "text", "console"), f"block {n}: ```{lang} is not a checked kind ({CHECKED})"
    if lang == "ini":
        unit = parse_unit(body)
        for section in unit.sections():
            for key, value in unit[section].items():
                if key == "ExecStart":
                    args = shlex.split(value)[1:]
                    assert command_problem(args) is None, command_problem(args)
                if key == "Environment":
                    assert unknown_names(environment_names(value)) == []
    if lang == "env":
        assert unknown_names(list(parse_env(body))) == []
    if lang == "sh":
        for args in rtcbot_lines(body):
            assert command_problem(args) is None, command_problem(args)
        install = {n for n, why in OTHER_VARIABLES.items() if "install" in why}  # scripts/install.sh's own
        assert unknown_names(assigned_names(body), also=install) == []


def test_the_doc_checks_are_not_vacuous() -> None:
    blocks = doc_blocks()
    assert {lang for lang, _ in blocks} >= {"ini", "sh"}
    started = [shlex.split(parse_unit(body)["Service"]["ExecStart"])[1] for lang, body in blocks
               if lang == "ini" and parse_unit(body)["Service"].get("ExecStart")]
    assert started == ["serve"]
    assert any("RTCBOT_WORKERS" in environment_names(parse_unit(body)["Service"].get("Environment", ""))
               for lang, body in blocks if lang == "ini")
    assert command_problem(["serve", "--no-such-option"]) and command_problem(["wrker"])
    assert unknown_names(["RTCBOT_ANALYSERS", "RTCBOT_TEST_MARKERS"]) == ["RTCBOT_ANALYSERS", "RTCBOT_TEST_MARKERS"]
    assert rtcbot_lines("sudo -u rtcbot /opt/rtcbot/bin/rtcbot worker --workers 4 &  # x\n"
                        "install -d -g rtcbot /etc/rtcbot && LOG_LEVEL=debug rtcbot serve\n") == [
        ["worker", "--workers", "4"], ["serve"]]
