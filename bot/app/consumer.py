"""`rtcbot worker`'s consumer: `workers` threads, each claiming its next job from the store
(bot/store/claims.py: fair across installations) and running it; with nothing to claim, a thread
waits for the queue's wake-up (bot/app/queue.py) at most CLAIM_EVERY_S, then claims again (a
wake-up claims at once; a stop is seen within WAIT_S).

A queue that does not answer is an `Outage` (one line when it goes, one when it is back, backoff
between tries), and so is a database that does not answer a claim: jobs go on being claimed from
the store meanwhile, as the queue only wakes workers. Signals: SIGINT stops claiming and waits
for the running jobs to end (a worker's graceful stop); SIGTERM stops at once, its running jobs
left to the sweep (RTCBOT_STALE_AFTER_S).
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

from bot.app.outage import Outage
from bot.app.queue import CLAIM_EVERY_S, WAIT_S, Queue
from bot.app.worker import database_failed

log = logging.getLogger("bot.app.queue")


class Consumer:
    """Runs jobs from the store in `workers` threads. `run_next`: claim and run the next job
    (None when none may run now); `database`: the outage its claims report to."""

    def __init__(self, queue: Queue, run_next: Callable[[], str | None], outage: Outage, database: Outage,
                 workers: int) -> None:
        self.queue = queue
        self.run_next = run_next
        self.outage = outage
        self.database = database
        self.workers = workers
        self.stopping = threading.Event()  # no new claims
        self.stopped = threading.Event()  # SIGTERM: leave now
        self.threads: list[threading.Thread] = []

    def loop(self) -> None:
        """One thread's life: claim and run, or wait for a wake-up, until stopping."""
        while not self.stopping.is_set():
            try:
                ran = self.run_next()
            except Exception as e:
                self.stopping.wait(database_failed(self.database, e, "claiming the next job"))
                continue
            self.database.ok()
            if ran is not None:
                continue
            try:
                self.idle()
            except Exception as e:
                self.stopping.wait(self.outage.failed(e))  # a stop ends the wait
            else:
                self.outage.ok()

    def idle(self) -> None:
        """Wait for the queue's wake-up, CLAIM_EVERY_S at most, in waits of WAIT_S, until
        stopping. Raises when the queue does not answer."""
        deadline = time.monotonic() + CLAIM_EVERY_S
        while not self.stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0 or self.queue.wait(min(WAIT_S, left)):
                return

    def _signal(self, signum: int, frame: FrameType | None) -> None:
        self.stopping.set()
        if signum == signal.SIGTERM:
            self.stopped.set()
        log.info("rtcbot: worker stopping (%s)%s", signal.Signals(signum).name,
                 "" if signum == signal.SIGTERM else ": finishing the running jobs")

    def start(self) -> None:
        """Start the threads (no signal handlers: `run` installs them)."""
        self.threads = [threading.Thread(target=self.loop, name=f"worker-{n + 1}", daemon=True)
                        for n in range(self.workers)]
        for t in self.threads:
            t.start()

    def stop(self, timeout_s: float = 60.0) -> None:
        """No new claims; wait up to `timeout_s` for the running jobs to end."""
        self.stopping.set()
        for t in self.threads:
            t.join(timeout_s)

    def run(self) -> None:
        """Start the threads and wait for them (the caller's thread handles the signals)."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._signal)
            signal.signal(signal.SIGTERM, self._signal)
        self.start()
        while any(t.is_alive() for t in self.threads) and not self.stopped.wait(0.5):
            pass
