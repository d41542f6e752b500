"""A service that is away (the queue, the database), said once: one line when the first try
fails, naming what is away and why in words (no traceback), and one line when a try succeeds
again, with how long it lasted. Between tries the caller waits with backoff: 0.5 s, doubling,
at most 30 s (tenacity's exponential wait). One `Outage` is shared by every thread of a process
that talks to the service, so an outage is two lines per process, however many threads retry.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from tenacity import RetryCallState, Retrying, wait_exponential

from bot.app.sweep import why

log = logging.getLogger(__name__)

FIRST_WAIT_S = 0.5
MAX_WAIT_S = 30.0


class Outage:
    """The state of one service as this process sees it: up, or away since a moment."""

    def __init__(self, what: str, *, reason: Callable[[BaseException], str] = why,
                 first_wait_s: float = FIRST_WAIT_S, max_wait_s: float = MAX_WAIT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """`what`: the service in words, naming its setting; `reason`: an error in one line."""
        self.what = what
        self.reason = reason
        self.max_wait_s = max_wait_s
        self._wait = wait_exponential(multiplier=first_wait_s, min=first_wait_s, max=max_wait_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None
        self._tries = 0

    @property
    def away(self) -> bool:
        return self._since is not None

    def failed(self, e: BaseException) -> float:
        """A try failed with `e`: the seconds to wait before the next. The first failure of an
        outage logs its one line."""
        with self._lock:
            if self._since is None:
                self._since, self._tries = self._clock(), 0
                log.warning("%s is away (%s); trying again with backoff up to %g s, quietly until it is back",
                            self.what, self.reason(e), self.max_wait_s)
            self._tries += 1
            state = RetryCallState(Retrying(), None, (), {})
            state.attempt_number = self._tries
            return float(self._wait(state))

    def ok(self) -> None:
        """A try succeeded: the end of an outage logs its one line."""
        if self._since is None:  # the usual case, without the lock
            return
        with self._lock:
            if self._since is None:
                return
            lasted, self._since = self._clock() - self._since, None
            log.warning("%s is back after %.1f s (%s failed tries)", self.what, lasted, self._tries)
