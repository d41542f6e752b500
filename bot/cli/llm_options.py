"""The command line's options that choose the LLM (`rtcbot review`, `eval …`): --llm-base-url,
--model, --api-key (also from the environment), budget and cache flags, and the LLMSettings they
make (the factory is the core's, bot/core/llm.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from analyzers.llm.client import LLMSettings
from bot.core.settings import llm_settings

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
                     help="Concurrent LLM requests (the embedded model takes one at a time)."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the LLM cache."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


LLM_KEYS = ("llm_base_url", "model", "api_key", "max_requests", "max_tokens_total", "concurrency", "no_cache")


def pop_llm_settings(kwargs: dict[str, Any]) -> LLMSettings:
    """Take the llm_options values out of a command's kwargs and build LLMSettings."""
    v = {k: kwargs.pop(k, None) for k in LLM_KEYS}
    settings = llm_settings(
        base_url=v["llm_base_url"], model=v["model"], api_key=v["api_key"],
        max_requests=v["max_requests"], max_tokens_total=v["max_tokens_total"],
        max_concurrency=v["concurrency"] or 4,
    )
    if v["no_cache"]:
        settings.cache_path = None
    return settings
