"""`rtcbot review --help` from the registries, and an error said once."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from analyzers import registry
from bot.cli.patch_input import MAX_PATCH_BYTES, MAX_PATCH_FILES, MAX_PATCH_HUNKS
from bot.entry import main
from reporters import printable


def help_text() -> str:
    r = CliRunner().invoke(main, ["review", "--help"], terminal_width=400)
    assert r.exit_code == 0, r.output
    return " ".join(r.output.split())


def test_help_lists_every_analyzer_and_format_from_the_registries() -> None:
    text = help_text()
    analyzers = text.split("--analyzers LIST", 1)[1].split("--format", 1)[0]
    assert "Comma-separated, or all: " + ", ".join(n.replace("_", "-") for n in registry.ANALYZERS) in analyzers
    assert "review" in analyzers  # it was left out of a hand-written list
    assert "One of: " + ", ".join(printable()) + "." in text


def test_help_says_why_the_defaults_are_not_the_actions() -> None:
    analyzers = help_text().split("--analyzers LIST", 1)[1].split("--format", 1)[0]
    assert "Default: editing-rtc, and crscore" in analyzers
    assert "The Action's default is editing-rtc, crscore, autofix" in analyzers
    assert "autofix only when named here: it needs semgrep and the files at the head" in analyzers


def test_help_states_the_limits_and_exit_2() -> None:
    text = help_text()
    assert (f"read up to {MAX_PATCH_BYTES // 2**20} MiB, {MAX_PATCH_FILES:,} files and {MAX_PATCH_HUNKS:,} hunks"
            in text)
    assert "2 bad input" in text


@pytest.mark.slow  # the client's retries back off for ~10 s
def test_an_unreachable_endpoints_error_is_said_once() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    r = CliRunner().invoke(main, ["review", "samples/demo.diff", "--llm-base-url", url, "--model", "m", "-q"])
    assert r.exit_code == 1
    said = "cannot reach the LLM endpoint"  # named, never shown (its URL: tests/security/test_endpoint_private.py)
    assert r.output.count(said) == 1 and url not in r.output and r.stdout == "", r.output  # said once
    assert r.stderr.startswith("Error: cannot reach the LLM endpoint")
