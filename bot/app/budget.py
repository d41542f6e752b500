"""A job's LLM client and what it may spend: the store as its cache, in the installation's
namespace (no tenant is served another's answers); its budget the job's own
(RTCBOT_LLM_MAX_REQUESTS / _TOKENS) capped by what is left today (UTC) of each daily budget it
spends (`Payer`): its installation's (RTCBOT_LLM_DAILY_REQUESTS / _TOKENS), its pull request's
(RTCBOT_LLM_PR_DAILY_…) and its author's in that installation (RTCBOT_LLM_AUTHOR_DAILY_…), so
that one pull request's pushes, a fork's among them, or one author's pull requests cannot spend
the day of the installation's others; afterwards its use charged to each, and work a budget cut
off listed as skipped, naming the budget. Whoever asks, pays: an analysis a review or a review
comment asked for spends its commenter's day (the same RTCBOT_LLM_AUTHOR_DAILY_… budget) and the
installation's, never the pull request's author's or the pull request's; with nothing left of
either it is not run at all (`unpaid`: the job's note says so, the check run is left as it was).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from analyzers.context import AnalysisContext
from analyzers.llm.client import LLMClient, LLMSettings
from bot.app.job_kinds import AnalyzeJob
from bot.app.one_run import COMMENTED
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
# an analysis a review or a review comment asked for is the commenter's to pay (`Payer.asked`)
ASKED = f"what is left today of the daily LLM budget of the person whose review comment asked for it; {RENEWS}"


@dataclass(frozen=True)
class Payer:
    """Whose daily LLM budgets a job spends: its installation's and, within it, its pull
    request's and its author's (a push's: the pull request's author; a re-run's: whoever asked
    for it; None only for a job stored before jobs said)."""

    installation_id: int
    pr: str | None = None  # "pr:<repository id>#<number>" (the name where the id is unknown)
    author: str | None = None  # "author:<GitHub user id>"
    asked: bool = False  # `author` is a commenter who asked for the work, not the pull request's author

    @classmethod
    def of(cls, installation_id: int, repository: int | str | None, pr_number: int | None,
           author_id: int | None) -> Payer:
        return cls(installation_id, pr=f"pr:{repository}#{pr_number}" if repository and pr_number else None,
                   author=f"author:{author_id}" if author_id else None)

    @classmethod
    def commenter(cls, installation_id: int, commenter_id: int | None) -> Payer:
        """A review comment's re-run: its commenter's day and the installation's, never the pull
        request's (a stranger's comments do not spend the day of the author's pushes)."""
        return cls(installation_id, author=f"author:{commenter_id}" if commenter_id else None, asked=True)

    def spenders(self) -> dict[str, str]:
        """Budget ("pr", "author") → the spender the store counts it under."""
        return {scope: who for scope, who in (("pr", self.pr), ("author", self.author)) if who}


def _caps(settings: ServiceSettings, store: Store, payer: Payer) -> list[tuple[str, int, int]]:
    """(budget, requests, tokens) left of each day the payer spends, narrowest first, then the job's."""
    limits = settings.daily_budgets()
    spenders = payer.spenders()
    spent = store.usage.spent_today(payer.installation_id, list(spenders.values()))
    used = {scope: spent[who] for scope, who in spenders.items()}
    used["installation"] = store.usage.today(payer.installation_id)
    caps = [(scope, max(0, limits[scope][0] - r), max(0, limits[scope][1] - t))
            for scope, (r, t) in sorted(used.items(), key=lambda kv: list(NOTES).index(kv[0]))]
    caps.append(("job", settings.llm_max_requests, settings.llm_max_tokens))  # last: a tie names the day
    return caps


def _note(payer: Payer, scope: str) -> str:
    return ASKED if scope == "author" and payer.asked else NOTES[scope]


def daily_budget(settings: ServiceSettings, store: Store, llm: LLMSettings, payer: Payer) -> LLMSettings:
    """`llm` with the job's budget, capped by what is left of each day it spends, its note
    naming the budget that caps it most (where two leave the same, the narrowest day)."""
    caps = _caps(settings, store, payer)
    requests = min(caps, key=lambda c: c[1])
    tokens = min(caps, key=lambda c: c[2])
    note = _note(payer, requests[0] if requests[0] != "job" else tokens[0])
    return dataclasses.replace(llm, max_requests=requests[1], max_tokens_total=tokens[2], budget_note=note)


def unpaid(settings: ServiceSettings, store: Store, payer: Payer | None) -> str | None:
    """Why an analysis a commenter asked for is not run: nothing is left today of a day it
    spends (the commenter's or the installation's); None when something is, or when no
    commenter asked (a push's analysis runs and lists what its budget cut off)."""
    if payer is None or not payer.asked:
        return None
    spent = next((scope for scope, r, t in _caps(settings, store, payer) if scope != "job" and not (r and t)), None)
    return None if spent is None else f"not run: nothing is left of {_note(payer, spent)}"


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


def payer_of(job: AnalyzeJob) -> Payer | None:
    """Whose daily LLM budgets an analysis spends: its installation's, its pull request's (by
    the repository's id) and its author's (a fork's pushes are its author's); one a review or a
    review comment asked for, its commenter's and the installation's (whoever asks, pays)."""
    if not job.installation_id:
        return None
    if job.reason in COMMENTED:
        return Payer.commenter(job.installation_id, job.author_id)
    return Payer.of(job.installation_id, job.repository_id or job.repo, job.pr_number, job.author_id)


def count_failures(store: Store, ctx: AnalysisContext) -> None:
    """Add the analysis's failed LLM requests, by reason, to the store's counter, which /metrics
    reads (a failure is logged: it is a count, never a reason to fail the analysis)."""
    if not ctx.has_llm:
        return
    try:
        store.llm_failures.add(ctx.llm.usage.failures())
    except Exception:
        log.warning("could not count the failed LLM requests", exc_info=True)


def settle(store: Store, job: AnalyzeJob, ctx: AnalysisContext, job_id: int) -> None:
    """The analysis's usage counted against its daily budgets and its failed LLM requests
    counted, and its LLM answers written to the cache, before its job (`job_id`) ends."""
    charge(store, payer_of(job), ctx)
    count_failures(store, ctx)
    try:
        store.cache.flush()
    except Exception:
        log.warning("could not write the LLM answers of job %s to the cache", job_id, exc_info=True)
