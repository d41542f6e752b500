"""docs/deploy.md's compose commands, rendered as compose renders them: the shell line that
makes deploy/.env is run as written (twice: it makes the file once), then deploy/compose.yml's
variables are filled in for each `docker compose … up` of the page (the first `up`, the scale
command), from deploy/.env and the command's own `VAR=value` words, by compose's rules
(`${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `$$`). The
password PostgreSQL is first made with must be the one serve and the workers are given on every
`up`. (docker compose itself is not installed here: `docker compose config` would do this.)"""

from __future__ import annotations

import re
import shlex
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.stack import DEPLOY, parse_env
from tests.deploy.test_deploy_files import COMPOSE, doc_blocks

_VARIABLE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_]\w*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}|\$(?P<bare>[A-Za-z_]\w*)")


class Refused(ValueError):
    """compose would stop here: a required variable is unset."""


def interpolate(text: str, env: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group() == "$$":
            return "$"
        name = m["name"] or m["bare"]
        op, arg = m["op"] or "", m["arg"] or ""
        value = env.get(name)
        missing = value is None or (op.startswith(":") and value == "")
        if op.endswith("-"):
            return arg if missing else str(value)
        if op.endswith("?"):
            if missing:
                raise Refused(f"required variable {name} is missing a value: {arg}")
            return str(value)
        return value or ""

    return _VARIABLE.sub(one, text)


def render(data: Any, env: dict[str, str]) -> Any:
    """The compose file with its variables filled in from `env`."""
    if isinstance(data, dict):
        return {k: render(v, env) for k, v in data.items()}
    if isinstance(data, list):
        return [render(v, env) for v in data]
    return interpolate(data, env) if isinstance(data, str) else data


def compose_lines() -> list[str]:
    """The lines of the page's shell blocks that run compose (the set-up's, the upgrade's)."""
    return [line for lang, body in doc_blocks() if lang == "sh" and "docker compose" in body
            for line in body.splitlines()]


def make_dotenv(tmp_path: Path) -> Path:
    """Run the page's line(s) that make deploy/.env, in a copy of the layout."""
    (tmp_path / "deploy").mkdir(exist_ok=True)
    lines = [ln for ln in compose_lines() if "deploy/.env" in ln and "docker compose" not in ln]
    assert lines, "docs/deploy.md does not make deploy/.env"
    subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(lines)], cwd=tmp_path, check=True, timeout=60)
    return tmp_path / "deploy" / ".env"


def up_commands() -> list[tuple[dict[str, str], list[str]]]:
    """Each `docker compose … up` line of the page: (its VAR=value words, its arguments)."""
    out = []
    for line in compose_lines():
        words = shlex.split(line, comments=True)
        assigned = {}
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            assigned[name] = value
        if words[:2] == ["docker", "compose"] and "up" in words:
            out.append((assigned, words))
    return out


def given(rendered: dict[str, Any]) -> dict[str, str]:
    """What one rendering gives: PostgreSQL's password, the password in serve's and the workers'
    DATABASE_URL, and the key's file."""
    services = rendered["services"]
    out = {"postgres": services["postgres"]["environment"]["POSTGRES_PASSWORD"],
           "key": rendered["secrets"]["rtcbot_private_key"]["file"]}
    for name in ("serve", "worker"):
        out[name] = urllib.parse.unquote(urllib.parse.urlsplit(services[name]["environment"]["DATABASE_URL"]).password
                                         or "")
    return out


def test_the_first_up_and_the_scale_command_give_the_same_password_and_key(tmp_path: Path) -> None:
    dotenv = make_dotenv(tmp_path)
    made = dotenv.read_text(encoding="utf-8")
    assert make_dotenv(tmp_path).read_text(encoding="utf-8") == made  # made once: a rerun keeps it
    values = parse_env(made, ".env")
    assert len(values["POSTGRES_PASSWORD"]) >= 32
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    commands = up_commands()
    assert any("--scale" in args for _, args in commands) and len(commands) >= 3, commands  # set-up, scale, upgrade
    renderings = [given(render(data, {**values, **assigned})) for assigned, args in commands]
    first = renderings[0]["postgres"]  # what the database volume keeps
    for (_, args), r in zip(commands, renderings, strict=True):
        assert r == {"postgres": first, "serve": first, "worker": first, "key": "./private-key.pem"}, shlex.join(args)
    assert (DEPLOY / values["APP_PRIVATE_KEY_FILE"]).name == "private-key.pem"


def test_without_deploy_env_compose_refuses_rather_than_fall_back_to_a_default() -> None:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    with pytest.raises(Refused, match=r"POSTGRES_PASSWORD.*deploy/\.env"):
        render(data, {})


def test_the_rtcbot_services_run_under_an_init_and_rotate_their_logs() -> None:
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    for name in ("serve", "worker"):
        assert services[name]["init"] is True, name
        assert services[name]["healthcheck" if name == "serve" else "command"]
    assert "/livez" in " ".join(services["serve"]["healthcheck"]["test"])
    for name, s in services.items():
        assert s["logging"]["driver"] == "json-file" and s["logging"]["options"]["max-file"], name


def test_the_renderer_follows_compose_rules() -> None:
    env = {"SET": "v", "EMPTY": ""}
    assert interpolate("$$x ${SET} $SET ${NONE:-d} ${EMPTY:-d} ${EMPTY-d} ${NONE-d}", env) == "$x v v d d  d"
    with pytest.raises(Refused):
        interpolate("${EMPTY:?no}", env)
    assert interpolate("${EMPTY?no}", env) == ""
