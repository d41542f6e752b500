"""Fair under a flood (bot/store/claims.py): one installation's burst never holds another's pull
request behind it, on the embedded SQLite queue and store, and on Redis and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import event, select

from bot.app.consumer import Consumer
from bot.app.outage import Outage
from bot.app.queue import CLAIM_EVERY_S, WAIT_S
from bot.app.settings import ServiceSettings, parse_weights
from bot.store.claims import Claims, Fairness, Turn, pick, turns
from bot.store.schema import JobRow, TurnRow
from bot.store.store import Store
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

EDITING = "rtcbot / EditingRTC"
A, B = 77, 88  # the two installations


def test_a_free_slot_goes_to_the_installation_holding_the_fewest() -> None:
    turns = [Turn(A, 4, 10), Turn(B, 0, 70)]
    assert pick(turns, Fairness()) == 70  # B's one job, though A's is older
    assert pick([Turn(A, 1, 10), Turn(B, 1, 70)], Fairness()) == 10  # as many: the oldest job
    assert pick([Turn(A, 0, 10), Turn(None, 0, 5), Turn(B, 0, 70)], Fairness()) == 5  # no installation: a group
    assert pick([Turn(A, 3, None)], Fairness()) is None  # nothing queued


def test_turns_rotate_and_weights_and_caps_apply() -> None:
    # as many slots held: the installation served longest ago first (never: first of all)
    assert pick([Turn(A, 0, 10, served_at=5.0), Turn(B, 0, 70, served_at=2.0)], Fairness()) == 70
    assert pick([Turn(A, 0, 10, served_at=5.0), Turn(B, 0, 70)], Fairness()) == 70
    # A weighs 2: it holds 3 of its 2 shares (1.5) against B's 2 (2.0)
    assert pick([Turn(A, 3, 10), Turn(B, 2, 70)], Fairness(weights={A: 2.0})) == 10
    assert pick([Turn(A, 3, 10), Turn(B, 2, 70)], Fairness()) == 70
    # a cap defers A's jobs (never drops them) while it holds that many
    assert pick([Turn(A, 2, 10)], Fairness(cap=2)) is None
    assert pick([Turn(A, 1, 10)], Fairness(cap=2)) == 10


def test_weights_are_read_and_a_wrong_one_is_an_error(tmp_path: object) -> None:
    assert parse_weights("77=2, 88=0.5") == {77: 2.0, 88: 0.5}
    for wrong in ("77", "x=2", "77=0", "-1=2", "77=1000"):
        with pytest.raises(ValueError, match="is not <installation id>=<weight>"):
            parse_weights(wrong)
    assert ServiceSettings(installation_weights="77=3").installation_weights == {77: 3.0}  # type: ignore[arg-type]


def _burst(a: App, gh_b: FakeGitHub, prs: int) -> None:
    """A opens `prs` pull requests, then B opens one."""
    for n in range(1, prs + 1):
        a.gh.add_pr(n, diff_text=many_hunks_diff(f"src/a{n}.py", hunks=1))
        a.deliver("pull_request", a.gh.pr_event("opened", n))
    gh_b.add_pr(1, diff_text=many_hunks_diff("src/b.py", hunks=1))
    a.deliver("pull_request", gh_b.pr_event("opened", 1))


def _created(gh: FakeGitHub) -> list[float]:
    return sorted(r.at for r in gh.requests if r.method == "POST" and r.path.endswith("/check-runs"))


def _completed(gh: FakeGitHub) -> list[float]:
    return sorted(r.at for r in gh.requests if r.method == "PATCH" and "/check-runs/" in r.path
                  and (r.body or {}).get("status") == "completed")


@pytest.mark.slow
def test_a_burst_does_not_hold_another_installations_pull_request_behind_it(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """A's 10 pull requests, then B's one, on one worker slot: B's job is the second claimed
    (A's first, then B's, as B has never been served), so B's check run is created before all
    but one of A's is complete."""
    gh_a, gh_b = fake_github(installation_id=A), fake_github(installation_id=B, repo="other-org/tools")
    a = apps(gh_a, gh_b)
    _burst(a, gh_b, 10)
    a.run()
    assert len(_completed(gh_a)) == 10 and len(_completed(gh_b)) == 1
    b_created = _created(gh_b)[0]
    assert sum(1 for t in _completed(gh_a) if t < b_created) <= 1


ANSWER_S = 0.25  # each scripted answer's delay in the newcomer's test


@pytest.mark.slow
def test_the_consumers_threads_give_the_newcomer_a_slot_at_once(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """`rtcbot worker`'s consumer, two threads, started on A's burst of 10 and B's one: one
    thread takes A's first job, the other B's (A holds a slot, B none), so B's check run is
    created before any of A's is complete; and the consumer stops when told. Each answer takes
    ANSWER_S: with instant ones A's jobs took 20-50 ms each, and a thread that claimed B's job and
    was then kept off the cores for a tenth of a second (a loaded machine) saw three of A's
    complete before it created B's check run."""
    gh_a, gh_b = fake_github(installation_id=A), fake_github(installation_id=B, repo="other-org/tools")
    a = apps(gh_a, gh_b, llm_delay_s=ANSWER_S)
    _burst(a, gh_b, 10)
    consumer = Consumer(a.rt.queue, a.rt.run_next, Outage("the queue"), a.rt.worker.database, workers=2)
    consumer.start()
    try:
        gh_a.wait_for(lambda: len(_completed(gh_a)) == 10 and len(_completed(gh_b)) == 1, timeout=120)
    finally:
        consumer.stop()
    b_created = _created(gh_b)[0]
    assert sum(1 for t in _completed(gh_a) if t < b_created) <= 1, (b_created, _completed(gh_a))
    assert not any(t.is_alive() for t in consumer.threads)


def test_a_claim_reads_the_turns_of_installations_with_queued_jobs_and_an_idle_one_writes_nothing(
        tmp_path: Path) -> None:
    """On a SQLite store: the turns of installations with nothing queued are not read (C, served
    long ago, is given none); with nothing queued a claim is a read, no write transaction."""
    store = Store(f"sqlite:///{tmp_path}/store.db")
    C = 99
    with store.db.session() as s:
        s.add_all([TurnRow(installation_id=A, served_at=5.0), TurnRow(installation_id=B, served_at=2.0),
                   TurnRow(installation_id=C, served_at=1.0)])
        s.add_all([JobRow(kind="pr", repo="a/r", spec={}, status="queued", installation_id=A),
                   JobRow(kind="pr", repo="b/r", spec={}, status="queued", installation_id=B),
                   JobRow(kind="pr", repo="c/r", spec={}, status="running", installation_id=C),
                   JobRow(kind="pr", repo="d/r", spec={}, status="done", installation_id=A)])
        s.commit()
    with store.db.reading() as c:
        got = sorted(turns(c), key=lambda t: t.installation_id or 0)
    assert [(t.installation_id, t.holding, t.oldest_queued is not None, t.served_at) for t in got] == [
        (A, 0, True, 5.0), (B, 0, True, 2.0), (C, 1, False, 0.0)]
    begun: list[str] = []
    event.listen(store.db.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: begun.append(statement)
                 if statement.strip().upper().startswith("BEGIN IMMEDIATE") else None)
    claims = Claims(store.db)
    first, second = claims.next(), claims.next()
    assert first is not None and second is not None
    assert (first.installation_id, second.installation_id) == (B, A)  # B was served longest ago
    assert len(begun) == 2
    assert claims.next() is None  # nothing queued
    assert len(begun) == 2, begun
    with store.db.reading() as c:
        assert {int(i): at for i, at in c.execute(select(TurnRow.installation_id, TurnRow.served_at))}[C] == 1.0
    store.close()


@pytest.mark.slow
def test_an_idle_consumer_claims_every_few_seconds_a_wake_up_at_once_and_a_stop_within_a_second(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """Two idle threads claim once each, then not again for CLAIM_EVERY_S; a delivery's wake-up
    has its job claimed at once (long before the poll); a stop is seen within WAIT_S."""
    gh = fake_github(installation_id=A)
    a = apps(gh)
    claimed: list[float] = []

    def run_next() -> str | None:  # the Runtime's own, its calls timed
        claimed.append(time.monotonic())
        return a.rt.run_next()

    consumer = Consumer(a.rt.queue, run_next, Outage("the queue"), a.rt.worker.database, workers=2)
    consumer.start()
    try:
        time.sleep(CLAIM_EVERY_S / 2)
        assert len(claimed) == 2, claimed  # one each at the start, none since
        gh.add_pr(1, diff_text=many_hunks_diff("src/a.py", hunks=1))
        delivered = time.monotonic()
        a.deliver("pull_request", gh.pr_event("opened", 1))
        gh.wait_for(lambda: len(_completed(gh)) == 1, timeout=60)
        assert len(claimed) >= 3 and claimed[2] - delivered < CLAIM_EVERY_S / 2 - 0.5, \
            (delivered, claimed)  # woken: not at the poll, which was due CLAIM_EVERY_S after the first claims
    finally:
        asked = time.monotonic()
        consumer.stop()
    assert not any(t.is_alive() for t in consumer.threads)
    assert time.monotonic() - asked < WAIT_S + 2.0


@pytest.mark.slow
def test_with_a_cap_a_jobs_end_wakes_an_idle_worker(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """RTCBOT_INSTALLATION_MAX_JOBS set: a job that ends sends a wake-up, so that a job the cap
    held back (its message taken by a worker that could not claim it then) is claimed by an idle
    worker at once."""
    gh = fake_github(installation_id=A)
    a = apps(gh, installation_max_jobs=1)
    gh.add_pr(1, diff_text=many_hunks_diff("src/a.py", hunks=1))
    a.deliver("pull_request", gh.pr_event("opened", 1))
    while a.rt.queue.pending():  # the delivery's wake-up, taken
        a.rt.queue.wait(0.01)
    assert a.rt.run_next() is not None
    assert len(_completed(gh)) == 1
    assert a.rt.queue.pending() == 1
