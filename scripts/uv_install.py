"""`pip install` done by uv (PyPI's `uv`, an installer several times faster than pip), with pip's
own configuration: uv reads neither pip's files nor its PIP_* variables, so the indexes, links,
constraints and certificate that `pip config list` shows are passed to uv here. Used by
scripts/install.sh, which installs with pip instead when this exits 3.

    python scripts/uv_install.py PYTHON ARG...            install ARGs into PYTHON's environment
    python scripts/uv_install.py --dry-run PYTHON ARG...  print the uv command and its variables

ARGs are what both installers take: requirements, -e, --no-deps, --find-links DIR. Run it with the
interpreter beside which uv is installed (and whose pip reads the configuration). Exit status:
uv's; 3, with one line on stderr, when uv cannot do it as pip would (uv is not installed, pip's
configuration cannot be read, or it holds a setting uv has no equivalent for).
"""

from __future__ import annotations

import ast
import os
import shlex
import subprocess
import sys

FALLBACK = 3

# pip's settings (as `pip config list` names them) that take several values, and uv's option for each
REPEATED = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
    "trusted-host": "--allow-insecure-host",
    "only-binary": "--only-binary",
    "no-binary": "--no-binary",
}
# yes/no settings and uv's options when yes
SWITCHES = {"no-index": ["--no-index"], "pre": ["--prerelease", "allow"], "no-cache-dir": ["--no-cache"]}
# settings uv takes from its environment
VARIABLES = {"cert": ("SSL_CERT_FILE",), "timeout": ("UV_HTTP_TIMEOUT",), "default-timeout": ("UV_HTTP_TIMEOUT",),
             "proxy": ("HTTPS_PROXY", "HTTP_PROXY")}
# pip's own output, prompts and cache, which do not change what is installed
PIP_ONLY = {"disable-pip-version-check", "no-input", "quiet", "verbose", "progress-bar", "no-color", "cache-dir",
            "root-user-action", "retries", "require-virtualenv", "no-python-version-warning", "log",
            "exists-action", "config-file"}  # config-file: where pip read these, done
# the sections that apply to `pip install`, lowest priority first (pip's own order)
SECTIONS = ("global", "install", ":env:")
TRUE = {"1", "yes", "true", "on"}


class Unsupported(Exception):
    """pip's configuration cannot be handed to uv as it is."""


def pip_settings(python: str) -> dict[str, str]:
    """pip's settings for `install`, as `pip config list` shows them, the highest-priority value of each."""
    try:
        done = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True,
                              timeout=120, check=False)
    except OSError as e:
        raise Unsupported(f"cannot run pip to read its configuration: {e}") from None
    if done.returncode != 0:
        raise Unsupported("pip's configuration could not be read (pip config list failed)")
    by_section: dict[str, dict[str, str]] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        section, dot, name = key.rpartition(".")
        if not sep or not dot:
            continue
        try:
            text = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise Unsupported(f"pip config list printed a line it cannot read: {line[:80]!r}") from None
        by_section.setdefault(section, {})[name] = str(text)
    settings: dict[str, str] = {}
    for section in SECTIONS:
        settings.update(by_section.get(section, {}))
    return settings


def uv_options(settings: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """uv's options and variables that do what pip's settings do; Unsupported names one it cannot."""
    args = ["--index-strategy", "unsafe-best-match"]  # as pip: the best version across every index
    env: dict[str, str] = {}
    for name, value in sorted(settings.items()):
        if name in REPEATED:
            for item in value.replace(",", " ").split() if name.endswith("binary") else value.split():
                args += [REPEATED[name], item]
        elif name in SWITCHES:
            if value.strip().lower() in TRUE:
                args += SWITCHES[name]
        elif name in VARIABLES:
            for variable in VARIABLES[name]:
                env[variable] = value.strip()
        elif name not in PIP_ONLY:
            raise Unsupported(f"pip's setting {name!r} has no uv equivalent here")
    return args, env


def uv_binary() -> str:
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise Unsupported(f"uv is not installed beside {sys.executable}") from None
    return str(find_uv_bin())


def main(argv: list[str]) -> int:
    dry_run = bool(argv) and argv[0] == "--dry-run"
    if dry_run:
        argv = argv[1:]
    if len(argv) < 2:
        print("usage: uv_install.py [--dry-run] PYTHON ARG...", file=sys.stderr)
        return 2
    target, packages = argv[0], argv[1:]
    try:
        args, env = uv_options(pip_settings(sys.executable))
        uv = "uv" if dry_run else uv_binary()
    except Unsupported as e:
        print(f"uv_install.py: {e}: installing with pip", file=sys.stderr)
        return FALLBACK
    command = [uv, "pip", "install", "--quiet", "--python", target, *args, *packages]
    if dry_run:
        print(shlex.join(command))
        for variable, value in sorted(env.items()):
            print(f"{variable}={value}")
        return 0
    return subprocess.run(command, env={**os.environ, **env}, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
