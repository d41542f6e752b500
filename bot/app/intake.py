"""Deliveries in, jobs out: a verified webhook delivery routed (bot/app/events.py, pure) and
recorded with its jobs in one transaction, then the job ids sent to the queue. Forced work (a
re-run request, an edited review comment) is debounced: a burst makes one analysis per head
and analysis per RTCBOT_FORCE_DEBOUNCE_S (bot/store/jobs.py `insert_job`). A queue that
refuses a message loses nothing: the job stays queued in the store (bot/app/sweep.py). A comment
that may be a command (bot/app/command_events.py) is routed with the App's name (`GET /app`,
asked once per process): when GitHub cannot say it, the delivery is recorded unrouted and the
sweep routes it later."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.app import command_events, events, feedback
from bot.app.settings import ServiceSettings
from bot.app.sweep import why
from bot.core.logs import shown
from bot.github import app_identity
from bot.store.store import Store
from reporters.check_run import check_titles

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Accepted:
    """What a new delivery made: the ids of the jobs sent for it (its new jobs, and any same
    work still waiting for a message the queue refused), and why nothing was made, if so."""

    jobs: list[int]
    note: str = ""
    asked: int = 0  # jobs the delivery asked for (some may have joined the same work queued)
    routed: bool = True  # False: routing failed; the sweep routes the recorded delivery later

    @property
    def nothing_to_do(self) -> bool:
        """Routed, and asked for no work (an event or action not handled, no installation)."""
        return self.routed and self.asked == 0


class Intake:
    """Routes, records and sends the deliveries of one webhook service (or the sweep's)."""

    def __init__(self, settings: ServiceSettings, store: Store, send: Callable[[Sequence[int]], bool],
                 owns: Callable[[Mapping[str, Any]], bool]) -> None:
        self.settings = settings
        self.store = store
        self.send = send
        self.owns = owns
        self._titles: dict[str, str] | None = None

    def route(self, event: str, payload: dict[str, Any]) -> events.Routed:
        return events.route(event, payload, comment_analyzers=self.settings.comment_analyzers,
                            titles=self.titles() if event == "check_run" else None,
                            slug=self.slug() if command_events.may_address(event, payload) else None)

    def slug(self) -> str:
        """The App's name, which commands address (`@<slug> help`): its bot's login less `[bot]`."""
        return app_identity(self.settings).bot_login.removesuffix("[bot]")

    def accept(self, delivery_id: str, event: str, payload: dict[str, Any], body: bytes | str) -> Accepted | None:
        """A verified delivery: route it (pure), then record it with its jobs in one transaction
        and enqueue them; what it made, or None for a redelivery (nothing done). A routing
        failure still records the delivery, unrouted, for the sweep to route later. Work that
        is already queued is not made again, but when its message never went out (the queue
        refused it) this delivery sends it."""
        try:
            routed: events.Routed | None = self.route(event, payload)
        except Exception:
            log.exception("routing delivery %s failed; the sweep will retry", shown(delivery_id))
            routed = None
        action = payload.get("action")
        ids = self.store.deliveries.accept(delivery_id, event, action if isinstance(action, str) else None, body,
                                           None if routed is None else [events.to_spec(j) for j in routed.jobs],
                                           (routed.note or None) if routed is not None else None,
                                           force_window_s=self.settings.force_debounce_s)
        if ids is None:
            return None
        if event == "pull_request_review_thread":
            try:
                self.thread(payload)
            except Exception:  # a record only: the delivery is kept either way
                log.warning("could not record review thread of delivery %s", shown(delivery_id), exc_info=True)
        if routed is None:
            return Accepted([], "routing failed; it is retried", routed=False)
        if ids:
            self.send(ids)
        if len(ids) < len(routed.jobs):  # some merged into work already there
            ids = ids + self._resend_like([events.to_spec(j) for j in routed.jobs], skip=ids)
        note = routed.note or ("the same work is already queued or running, or was re-run within "
                               "RTCBOT_FORCE_DEBOUNCE_S" if routed.jobs and not ids else "")
        return Accepted(ids, note, asked=len(routed.jobs))

    def _resend_like(self, specs: list[dict[str, Any]], skip: Sequence[int] = ()) -> list[int]:
        """Send again the queued jobs (but `skip`) doing the work of `specs` whose message never
        went out; their ids."""
        try:
            unsent = [i for i in self.store.job_queries.unsent_like(specs) if i not in skip]
        except Exception as e:
            log.warning("could not look for unsent jobs (%s)", why(e))
            return []
        if unsent and self.send(unsent):
            try:
                self.store.jobs.mark_sent(unsent)
            except Exception as e:  # the sweep sends them once more: harmless
                log.warning("could not mark job(s) %s as sent (%s)", unsent, why(e))
        return unsent

    def route_delivery(self, delivery_id: str, event: str, payload: dict[str, Any]) -> list[int]:
        """Route a delivery that was recorded but not routed (the sweep); [] when another
        process routed it meanwhile."""
        routed = self.route(event, payload)
        ids = self.store.deliveries.route(delivery_id, [events.to_spec(j) for j in routed.jobs], routed.note or None,
                                          force_window_s=self.settings.force_debounce_s)
        if ids:
            self.send(ids)
        return ids or []

    def titles(self) -> dict[str, str]:
        if self._titles is None:
            self._titles = check_titles()
        return self._titles

    def thread(self, payload: dict[str, Any]) -> int:
        """A review thread resolved or unresolved: the suggestions in it follow (no GitHub call)."""
        thread = payload.get("thread") or {}
        keys = feedback.keys_in(c.get("body") for c in thread.get("comments") or []
                                if isinstance(c, dict) and self.owns(c))
        pr = payload.get("pull_request") or {}
        repo = (payload.get("repository") or {}).get("full_name")
        if not keys or not isinstance(pr.get("number"), int) or not isinstance(repo, str):
            return 0
        return self.store.published.mark_resolved(repo, pr["number"], keys, payload.get("action") == "resolved")
