"""Options and helpers shared by the `rtcbot` commands."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from analyzers.llm import LLMClient, LLMSettings

F = TypeVar("F", bound=Callable[..., Any])


def llm_options(fn: F) -> F:
    """--llm-base-url, --model, --api-key (also from the environment), budget and cache flags."""
    opts = [
        click.option("--llm-base-url", envvar="RTCBOT_LLM_BASE_URL", default=None, metavar="URL",
                     help="OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp). "
                          "Default: the embedded SmolLM2-135M model."),
        click.option("--model", envvar="RTCBOT_LLM_MODEL", default=None, help="Model name at the endpoint."),
        click.option("--api-key", envvar=["RTCBOT_LLM_API_KEY", "OPENAI_API_KEY"], default=None,
                     help="API key (env RTCBOT_LLM_API_KEY or OPENAI_API_KEY).", show_envvar=False),
        click.option("--max-requests", type=click.IntRange(min=1), default=None,
                     help="Stop after this many LLM requests (retries count)."),
        click.option("--max-tokens", "max_tokens_total", type=click.IntRange(min=1), default=None,
                     help="Stop after this many LLM tokens (prompt + completion)."),
        click.option("--concurrency", type=click.IntRange(min=1, max=64), default=4, show_default=True,
                     help="Concurrent LLM requests."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the LLM cache."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _check_plot(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """The --plot path, checked before any work: a known extension and a writable folder."""
    if value is None:
        return None
    import os

    from reporters.plots import PlotError, check_path

    try:
        path = check_path(value)
    except PlotError as e:
        raise click.BadParameter(str(e)) from None
    folder = path.parent if str(path.parent) else Path(".")
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK):
        raise click.BadParameter(f"{path}: cannot write to the folder {folder}")
    return path


def plot_option(fn: F) -> F:
    """--plot FILE (.svg or .png): the evaluation's figure, checked before the run starts."""
    return click.option("--plot", "plot", default=None, metavar="FILE", callback=_check_plot,
                        help="Also write the evaluation's figure to FILE (.svg or .png).")(fn)


LLM_KEYS = ("llm_base_url", "model", "api_key", "max_requests", "max_tokens_total", "concurrency", "no_cache")


def pop_llm_settings(kwargs: dict[str, Any]) -> LLMSettings:
    """Take the llm_options values out of a command's kwargs and build LLMSettings."""
    v = {k: kwargs.pop(k, None) for k in LLM_KEYS}
    settings = LLMSettings.from_env(
        base_url=v["llm_base_url"], model=v["model"], api_key=v["api_key"],
        max_requests=v["max_requests"], max_tokens_total=v["max_tokens_total"],
        max_concurrency=v["concurrency"] or 4,
    )
    if v["no_cache"]:
        settings.cache_path = None
    return settings


def llm_factory(settings: LLMSettings) -> Callable[[], LLMClient]:
    def make() -> LLMClient:
        from analyzers.local_llm import client_from_settings

        return client_from_settings(settings)

    return make


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; a bad line is one clear error."""
    try:
        fh = path.open(encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"cannot read {path}: {e.strerror}") from None
    with fh:
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise click.ClickException(f"{path}:{no}: not JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise click.ClickException(f"{path}:{no}: expected a JSON object per line")
            yield no, obj


def parse_ks(spec: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in spec.split(",") if x.strip()})
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {spec!r}") from None
    if not ks or ks[0] < 1:
        raise click.BadParameter("k values must be positive integers")
    return ks
