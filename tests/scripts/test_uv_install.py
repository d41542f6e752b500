"""scripts/uv_install.py: uv installs with pip's own configuration (issue 49, item 5). uv reads
neither pip's files nor its PIP_* variables, so the indexes, links, constraints, certificate and
timeout pip would use are handed to it, the variables over the files as pip has them; a setting uv
has no equivalent for is one line and exit 3, and scripts/install.sh installs with pip instead."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

SCRIPT = ROOT / "scripts" / "uv_install.py"
pytestmark = pytest.mark.slow  # each runs pip (its configuration)


def dry_run(tmp_path: Path, conf: str, **env: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "pip.conf"
    config.write_text(conf, encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    return subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "/venv/bin/python", "-e", ".[dev]"],
                          env={**base, "PIP_CONFIG_FILE": str(config), **env},
                          capture_output=True, text=True, timeout=120, check=False)


def pairs(command: list[str], option: str) -> list[str]:
    return [command[i + 1] for i, word in enumerate(command[:-1]) if word == option]


def test_pips_files_and_variables_become_uvs_options(tmp_path: Path) -> None:
    done = dry_run(tmp_path, "[global]\n"
                             "extra-index-url = file:///srv/a/simple\n    file:///srv/b/simple\n"
                             "find-links = /srv/file-links\n"
                             "constraint = /srv/constraints.txt\n"
                             "cert = /srv/file.pem\n"
                             "[install]\n"
                             "index-url = https://mirror.invalid/simple\n"
                             "[download]\n"
                             "index-url = https://not-for-install.invalid/simple\n",
                   PIP_FIND_LINKS="/srv/wheels", PIP_CERT="/srv/env.pem", PIP_DEFAULT_TIMEOUT="99",
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
    assert done.returncode == 0, done.stderr
    first, *variables = done.stdout.splitlines()
    command = shlex.split(first)
    assert command[:6] == ["uv", "pip", "install", "--quiet", "--python", "/venv/bin/python"]
    assert command[-2:] == ["-e", ".[dev]"]
    assert pairs(command, "--extra-index-url") == ["file:///srv/a/simple", "file:///srv/b/simple"]
    assert pairs(command, "--index-url") == ["https://mirror.invalid/simple"]  # [install], not [download]
    assert pairs(command, "--find-links") == ["/srv/wheels"]  # the variable over the file
    assert pairs(command, "--constraint") == ["/srv/constraints.txt"]
    assert pairs(command, "--index-strategy") == ["unsafe-best-match"]  # as pip: the best of every index
    assert "SSL_CERT_FILE=/srv/env.pem" in variables and "UV_HTTP_TIMEOUT=99" in variables


def test_a_setting_uv_cannot_honour_is_one_line_and_exit_3(tmp_path: Path) -> None:
    done = dry_run(tmp_path, "[global]\nclient-cert = /srv/client.pem\n")
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "'client-cert'" in done.stderr and "installing with pip" in done.stderr
