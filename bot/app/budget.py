"""A job's LLM client and what it may spend: the store as its cache, in the installation's
namespace (no tenant is served another's answers); its budget the job's own
(RTCBOT_LLM_MAX_REQUESTS / _TOKENS) capped by what is left today (UTC) of each daily budget it
spends (`Payer`): its installation's (RTCBOT_LLM_DAILY_REQUESTS / _TOKENS), its pull request's
(RTCBOT_LLM_PR_DAILY_…) and its author's in that installation (RTCBOT_LLM_AUTHOR_DAILY_…), so
that one pull request's pushes, a fork's among them, or one author's pull requests cannot spend
the day of the installation's others; afterwards its use charged to each, and work a budget cut
off listed as skipped, naming the budget.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from analyzers.context import AnalysisContext
from analyzers.llm.client import LLMClient, LLMSettings
from bot.app.settings import ServiceSettings
from bot.core.llm import llm_factory as make_factory
from bot.store.cache import StoreCache
from bot.store.store import Store

log = logging.getLogger(__name__)

# which budget a cut-off names (no figures: a check run may be public, a tenant's usage is not)
RENEWS = "it renews at 00:00 UTC"
NOTES = {  # the daily ones narrowest first
    "pr": f"what is left today of this pull request's daily LLM budget; {RENEWS}",
    "author": f"what is left today of the daily LLM budget of this pull request's author; {RENEWS}",
    "installation": f"what is left today of this installation's daily LLM budget; {RENEWS}",
    "job": "the LLM budget of one analysis",
}


@dataclass(frozen=True)
class Payer:
    """Whose daily LLM budgets a job spends: its installation's and, within it, its pull
    request's and its author's (a push's: the pull request's author; a re-run's: whoever asked
    for it; None only for a job stored before jobs said)."""

    installation_id: int
    pr: str | None = None  # "pr:<repository id>#<number>" (the name where the id is unknown)
    author: str | None = None  # "author:<GitHub user id>"

    @classmethod
    def of(cls, installation_id: int, repository: int | str | None, pr_number: int | None,
           author_id: int | None) -> Payer:
        return cls(installation_id, pr=f"pr:{repository}#{pr_number}" if repository and pr_number else None,
                   author=f"author:{author_id}" if author_id else None)

    def spenders(self) -> dict[str, str]:
        """Budget ("pr", "author") → the spender the store counts it under."""
        return {scope: who for scope, who in (("pr", self.pr), ("author", self.author)) if who}


def daily_budget(settings: ServiceSettings, store: Store, llm: LLMSettings, payer: Payer) -> LLMSettings:
    """`llm` with the job's budget, capped by what is left of each day it spends, its note
    naming the budget that caps it most (where two leave the same, the narrowest day)."""
    limits = settings.daily_budgets()
    spenders = payer.spenders()
    spent = store.usage.spent_today(payer.installation_id, list(spenders.values()))
    used = {scope: spent[who] for scope, who in spenders.items()}
    used["installation"] = store.usage.today(payer.installation_id)
    caps = [(scope, max(0, limits[scope][0] - r), max(0, limits[scope][1] - t))
            for scope, (r, t) in sorted(used.items(), key=lambda kv: list(NOTES).index(kv[0]))]
    caps.append(("job", settings.llm_max_requests, settings.llm_max_tokens))  # last: a tie names the day
    requests = min(caps, key=lambda c: c[1])
    tokens = min(caps, key=lambda c: c[2])
    note = NOTES[requests[0] if requests[0] != "job" else tokens[0]]
    return dataclasses.replace(llm, max_requests=requests[1], max_tokens_total=tokens[2], budget_note=note)


def llm_factory(settings: ServiceSettings, store: Store, model: str | None,
                payer: Payer | None = None) -> Callable[[], LLMClient]:
    """A job's LLM client (the one factory, bot/core/llm.py): the store as its cache in the
    installation's namespace, its budget read when it is made (see the module's docstring)."""
    limit = None if payer is None else (lambda llm: daily_budget(settings, store, llm, payer))
    return make_factory(settings.llm_settings(model), limit=limit,
                        cache=StoreCache(store.cache, "-" if payer is None else payer.installation_id))


def charge(store: Store, payer: Payer | None, ctx: AnalysisContext) -> None:
    """Charge the job's LLM use to its installation's day and its pull request's and author's
    (a failure is logged: it is a count, never a reason to fail the analysis)."""
    if not ctx.has_llm or payer is None:
        return
    usage = ctx.llm.usage
    try:
        store.usage.add(payer.installation_id, usage.requests, usage.tokens, usage.cache_hits,
                        spenders=list(payer.spenders().values()))
    except Exception:
        log.warning("could not count the LLM usage of installation %s", payer.installation_id, exc_info=True)
