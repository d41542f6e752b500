"""`rtcbot doctor`: what the service would use, found as it finds it, from the same settings
(the environment: run it with the service's env file and user, docs/deploy.md): the LLM (an
endpoint, or the embedded model and whether it is installed), the embedding model, Semgrep, the
smell tools (PMD on Java, JSHint on Node, Python's in process), the sandbox for untrusted code.
One line each; exit 0 when everything the configured analyzers use is there, else 1 (each
missing piece says what to install). Settings that do not validate: their lines, exit 2."""

from __future__ import annotations

import sys

import click

from analyzers import registry
from analyzers.tools.needs import CHECKS as CHECKS
from analyzers.tools.needs import Check
from analyzers.urls import redact_url
from bot.app.settings import ServiceSettings, load_settings
from bot.core.settings import SettingsError

Finding = Check


def llm(settings: ServiceSettings) -> Finding:
    if settings.llm_base_url:
        return Finding("LLM", f"the endpoint {redact_url(settings.llm_base_url)} "
                              f"(model {settings.llm_model or 'its default'})")
    from analyzers.llm.local import gguf_path, unavailable_reason

    why = unavailable_reason(settings.embedded_gguf)
    if why:
        return Finding("LLM", f"no RTCBOT_LLM_BASE_URL, and the embedded model cannot start: {why}", ok=False)
    return Finding("LLM", f"the embedded model {gguf_path(settings.embedded_gguf)} (no RTCBOT_LLM_BASE_URL)")


def sandbox(settings: ServiceSettings) -> Finding:
    from analyzers.sandbox.box import Sandbox, SandboxUnavailable

    try:
        box = Sandbox(slots=1, mode=settings.sandbox, reuse=False)
    except SandboxUnavailable as e:
        return Finding("sandbox", str(e), ok=False)
    box.close()
    return Finding("sandbox", f"{box.mode} (RTCBOT_SANDBOX={settings.sandbox})")


def findings(settings: ServiceSettings) -> list[Finding]:
    """The LLM, the tools the configured analyzers need (each declares its own) and the sandbox."""
    out = [Finding("analyzers", ", ".join(settings.analyzers) or "none"), llm(settings)]
    needed = registry.needs([*settings.analyzers, *settings.comment_analyzers])
    for tool, check in CHECKS.items():
        if tool in needed:
            out += check(settings.tools())
    return [*out, sandbox(settings)]


@click.command("doctor")
def command() -> None:
    """Say which LLM, embedding model, Semgrep, smell tools and sandbox the service would use
    with these settings (the environment), and what is missing (exit 1)."""
    try:
        settings = load_settings()
    except SettingsError as e:
        from bot.shell.exits import settings_exit

        settings_exit(e)
    found = findings(settings)
    for f in found:
        click.echo(f.line())
    missing = [f.what for f in found if not f.ok]
    if missing:
        click.echo(f"{len(missing)} missing: {', '.join(missing)}; the analyses that need them are skipped "
                   "and say so on their check runs", err=True)
        sys.exit(1)
