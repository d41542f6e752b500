"""A job's LLM client and what it may spend: the store as its cache, in the installation's
namespace (no tenant is served another's answers); its budget the job's own
(RTCBOT_LLM_MAX_REQUESTS / _TOKENS) capped by what is left of its installation's UTC day
(RTCBOT_LLM_DAILY_REQUESTS / _TOKENS); afterwards its use charged to that day, and work a
budget cut off listed as skipped.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from analyzers.context import AnalysisContext
from analyzers.llm import LLMClient, LLMSettings
from bot.core.llm import llm_factory as make_factory
from bot.core.settings import ServiceSettings
from bot.store.cache import StoreCache
from bot.store.store import Store

log = logging.getLogger(__name__)


def daily_budget(settings: ServiceSettings, store: Store, llm: LLMSettings, installation_id: int) -> LLMSettings:
    """`llm` with the job's budget, capped by what is left of the installation's day."""
    s = settings
    used_requests, used_tokens = store.usage.today(installation_id)
    left_requests = max(0, s.llm_daily_requests - used_requests)
    left_tokens = max(0, s.llm_daily_tokens - used_tokens)
    if left_requests < s.llm_max_requests or left_tokens < s.llm_max_tokens:
        # no figures: a check run may be public, the installation's usage is not
        note = "what is left today of this installation's daily LLM budget; it renews at 00:00 UTC"
    else:
        note = "the LLM budget of one analysis"
    return dataclasses.replace(llm, max_requests=min(s.llm_max_requests, left_requests),
                               max_tokens_total=min(s.llm_max_tokens, left_tokens), budget_note=note)


def llm_factory(settings: ServiceSettings, store: Store, model: str | None,
                installation_id: int | None = None) -> Callable[[], LLMClient]:
    """A job's LLM client (the one factory, bot/core/llm.py): the store as its cache in the
    installation's namespace, its budget read when it is made (see the module's docstring)."""
    limit = None if installation_id is None else (lambda llm: daily_budget(settings, store, llm, installation_id))
    return make_factory(settings.llm_settings(model), limit=limit,
                        cache=StoreCache(store.cache, "-" if installation_id is None else installation_id))


def charge(store: Store, installation_id: int | None, ctx: AnalysisContext) -> None:
    """Charge the job's LLM use to its installation's day (a failure is logged: it is a count,
    never a reason to fail the analysis)."""
    if not ctx.has_llm or not installation_id:
        return
    usage = ctx.llm.usage
    try:
        store.usage.add(installation_id, usage.requests, usage.tokens, usage.cache_hits)
    except Exception:
        log.warning("could not count the LLM usage of installation %s", installation_id, exc_info=True)
