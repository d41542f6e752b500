"""bot/app/results.py: a report published into its check run on the fake GitHub by the App's
outputs (the core's `execute`, as the worker runs it: tests/bot/results_support.py), then recorded.

A check run can be published into more than once: a forced re-run (the Re-run button), or the
sweep's new attempt at a job whose check run GitHub already shows completed but whose record the
store lost (PostgreSQL restarting between the two). GitHub appends the annotations of every
update, so the run must end up showing each annotation once either way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from analyzers.report import AnalyzerReport, Finding
from bot.app.events import AnalyzeJob
from bot.app.results import record
from bot.app.settings import ServiceSettings
from bot.core.checks import CheckRuns
from bot.core.config import LoadedConfig
from bot.core.context import changes_from_github
from bot.github import GitHubClient, installation_client
from bot.store.store import Store
from reporters.check_run import CheckOutput, annotation_of, check_name
from reporters.diff_filter import DiffFilter
from tests.bot.results_support import review_as_the_worker, scripted
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.reliability.services import Postgres, started

PATH = "src/calc.py"
TITLE = "EditingRTC"
CHECK = check_name(TITLE)


def finding(line: int, rtc: float) -> Finding:
    return Finding(analyzer="editing_rtc", title=f"hunk at line {line}", message=f"RTC {rtc:.2f} for this hunk",
                   path=PATH, start_line=line, end_line=line + 2, scores={"rtc": rtc}, key=f"{PATH}:{line}")


def report_of(lines: list[int]) -> AnalyzerReport:
    return AnalyzerReport(name="editing_rtc", title=TITLE, findings=[finding(n, 0.5) for n in lines],
                          scores={"rtc": 0.5})


class Setup:
    """One pull request's analysis on the fake GitHub with the App's client and a SQLite store."""

    def __init__(self, gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hunks: int = 3) -> None:
        self.gh, self.monkeypatch = gh, monkeypatch
        self.pr = gh.add_pr(5, diff_text=many_hunks_diff(PATH, hunks=hunks))
        self.client: GitHubClient = installation_client(
            ServiceSettings(app_id=gh.app_id, private_key=gh.private_key_pem, github_api_url=gh.base_url,
                            write_interval_s=0.0),
            gh.installation_id)
        self.store = Store(f"sqlite:///{tmp_path / 'rtcbot.db'}")
        self.checks = CheckRuns(self.store.checks)
        self.lines = [a for a, _ in diff_lines_of(self.client, gh)]

    def job(self, force: bool = False) -> AnalyzeJob:
        return AnalyzeJob(repo=self.gh.repo, installation_id=self.gh.installation_id, pr_number=5,
                          head_sha=self.pr.head_sha, analyzer="editing_rtc", force=force,
                          reason="check_run.rerequested" if force else "pull_request.opened")

    def attempt(self, job: AnalyzeJob, report: AnalyzerReport, *,
                recorded: bool = True) -> tuple[int, CheckOutput]:
        """What the worker's analysis does with the check run: find it, review with the App's
        outputs (start it, publish), record."""
        existing, done = self.checks.existing(self.client, job, CHECK)
        assert not done
        scripted(self.monkeypatch, report)
        _, runs = review_as_the_worker(self.client, self.checks, job, existing)
        cr_id, out = runs.runs[job.analyzer], runs.sent[job.analyzer]
        assert runs.fresh[job.analyzer] == (existing is None)
        if recorded:
            record(self.store, job, CHECK, cr_id, out, report)
        return cr_id, out

    def shown(self, cr_id: int) -> list[tuple[Any, ...]]:
        """The annotations GitHub lists for the run (GET …/check-runs/{id}/annotations)."""
        return sorted((a["path"], a["start_line"], a["end_line"], a["message"])
                      for a in self.client.check_run_annotations(self.gh.repo, cr_id))

    def close(self) -> None:
        self.client.close()
        self.store.close()


def diff_lines_of(client: GitHubClient, gh: FakeGitHub) -> list[tuple[int, int]]:
    """The RIGHT-side line ranges of the PR's hunks in PATH, as GitHub gives the files."""
    return list(DiffFilter.of(changes_from_github(client.pr_files(gh.repo, 5), LoadedConfig())).spans(PATH))


@pytest.fixture
def setup(fake_github: Callable[..., FakeGitHub], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Setup]:
    s = Setup(fake_github(), tmp_path, monkeypatch)
    yield s
    s.close()


def expected(report: AnalyzerReport) -> list[tuple[Any, ...]]:
    """Each finding's annotation, once."""
    anns = [annotation_of(f) for f in report.findings]
    return sorted((a["path"], a["start_line"], a["end_line"], a["message"]) for a in anns if a is not None)


def test_the_sweeps_new_attempt_after_a_lost_record_shows_each_annotation_once(setup: Setup) -> None:
    report = report_of(setup.lines)
    first, _ = setup.attempt(setup.job(), report, recorded=False)  # GitHub has it; the store lost the record
    assert setup.shown(first) == expected(report)
    row = setup.store.checks.get(setup.gh.repo, CHECK, setup.pr.head_sha)
    assert row is not None and row.status == "in_progress"  # what the sweep's new attempt finds
    again, _ = setup.attempt(setup.job(force=False), report)  # the sweep runs the same job again
    assert again == first  # the same check run, completed again in place
    assert setup.shown(first) == expected(report)  # each annotation once, not twice
    run = setup.gh.check_runs[first]
    assert run["status"] == "completed" and run["conclusion"] == "neutral"
    sent = [len((u.get("output") or {}).get("annotations") or []) for u in run["updates"]]
    assert sum(sent) == len(report.findings)  # the second completion sent none of them again
    row = setup.store.checks.get(setup.gh.repo, CHECK, setup.pr.head_sha)
    assert row is not None and (row.status, row.annotations) == ("completed", len(report.findings))
    assert len(setup.store.checks.findings(row.id)) == len(report.findings)


def test_a_forced_rerun_with_a_new_finding_sends_only_that_one(setup: Setup) -> None:
    earlier = report_of(setup.lines[:2])
    cr_id, _ = setup.attempt(setup.job(), earlier)
    now = report_of(setup.lines)  # the re-run finds one more
    assert setup.attempt(setup.job(force=True), now)[0] == cr_id
    assert setup.shown(cr_id) == expected(now)
    last = setup.gh.check_runs[cr_id]["updates"][-1]
    assert [a["start_line"] for a in last["output"]["annotations"]] == [setup.lines[2]]
    row = setup.store.checks.get(setup.gh.repo, CHECK, setup.pr.head_sha)
    assert row is not None and row.annotations == 3  # what the run shows, not what the last update sent


# ---------------------------------------------------------------------------- the store away
Published = tuple[Store, AnalyzeJob, int, CheckOutput, AnalyzerReport]  # store, job, run id, output, report


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    with started(Postgres) as pg:
        yield pg


@pytest.fixture
def published(setup: Setup, postgres: Postgres) -> Iterator[Published]:
    """A report published on GitHub, not yet recorded in a store on `postgres` (a fresh database)."""
    store = Store(postgres.create_database("publish_test"))
    report = report_of(setup.lines)
    job = setup.job()
    cr_id, out = setup.attempt(job, report, recorded=False)
    store.checks.save(job.repo, CHECK, job.head_sha, github_id=cr_id, status="in_progress")
    yield store, job, cr_id, out, report
    store.close()


@pytest.mark.slow
@pytest.mark.services
def test_recording_waits_out_a_database_restart(published: Published, postgres: Postgres) -> None:
    store, job, cr_id, out, report = published
    postgres.stop()
    back = threading.Timer(1.5, postgres.start)
    back.start()
    t0 = time.monotonic()
    try:
        record(store, job, CHECK, cr_id, out, report)
    finally:
        back.join()
    assert time.monotonic() - t0 >= 1.0  # it did wait for the database
    row = store.checks.get(job.repo, CHECK, job.head_sha)
    assert row is not None and (row.status, row.annotations) == ("completed", len(report.findings))
    assert len(store.checks.findings(row.id)) == len(report.findings)


@pytest.mark.slow
@pytest.mark.services
def test_recording_gives_up_when_the_database_stays_away(published: Published, postgres: Postgres) -> None:
    store, job, cr_id, out, report = published
    postgres.stop()
    t0 = time.monotonic()
    try:
        with pytest.raises(OperationalError):
            record(store, job, CHECK, cr_id, out, report, retry_s=1.0)
        assert time.monotonic() - t0 < 10.0  # bounded: the job fails and the sweep takes over
    finally:
        postgres.start()
    row = store.checks.get(job.repo, CHECK, job.head_sha)
    assert row is not None and row.status == "in_progress"  # nothing recorded
