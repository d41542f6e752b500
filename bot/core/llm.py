"""The LLM a review uses: the one factory that makes its client (the command line's options
that choose it are bot/cli/llm_options.py)."""

from __future__ import annotations

from collections.abc import Callable

from analyzers.llm.cache import Cache
from analyzers.llm.client import LLMClient, LLMError, LLMSettings
from analyzers.llm.http import preload


def llm_factory(settings: LLMSettings, *, cache: Cache | None = None,
                limit: Callable[[LLMSettings], LLMSettings] | None = None) -> Callable[[], LLMClient]:
    """The one LLM factory of every surface: a client for `settings` (the embedded model when
    no endpoint is set), made on first use. `limit`: the settings' budget at that moment (the
    App's daily budget, read when the analysis starts); `cache`: the client's answer cache in
    place of the file cache (the App's store, in the installation's namespace). A surface that
    makes one will ask a model: the client's library (openai) is imported now, before its review
    starts, not by its first request (analyzers/llm/__init__.py)."""
    preload()

    def make() -> LLMClient:
        from analyzers.llm.local import client_from_settings

        return client_from_settings(limit(settings) if limit is not None else settings, cache)

    return make


def refusing_factory(reason: str) -> Callable[[], LLMClient]:
    """An LLM factory that refuses: analyzers that need the model report `reason`; their
    findings without a model still publish."""

    def make() -> LLMClient:
        raise LLMError(reason)

    return make
