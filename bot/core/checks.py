"""A check run's life, the one owner for the App and the Action: one per (check name, head
SHA), updated in place, re-runs and review comments included (GitHub appends a re-run's
annotations to those already there). Found (in the ledger, else on GitHub) or created in
progress with its external_id; completed with the report (`complete`: the check-run reporter's
output, annotations in batches of 50, the gate's conclusion and the Re-run button); cancelled
when a newer push supersedes its head; completed as neutral with the reason when its work
fails or stops.

`CheckRunsOutput` is the review's output that does all this for its analyzers (bot/core/review.py
`execute`). The ledger is where a surface keeps its check runs besides GitHub: the App's store (claims
let two jobs of the same analysis share one run), the Action's memory of this one step.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from analyzers.report import AnalyzerReport
from bot.core.review import Output, Result
from bot.github import GitHub
from reporters.base import Target
from reporters.check_run import (
    CheckOutput,
    CheckRunReporter,
    Conclude,
    abandon_body,
    check_name_of,
    create_body,
    external_id,
)


class LedgerRow(Protocol):
    @property
    def github_id(self) -> int | None: ...
    @property
    def status(self) -> str | None: ...


class Ledger(Protocol):
    """Where a surface keeps its check runs besides GitHub (the App's: bot/store/checks.py)."""

    def get(self, repo: str, name: str, head_sha: str) -> LedgerRow | None: ...
    def claim(self, repo: str, name: str, head_sha: str, pr_number: int | None = None) -> bool: ...
    def save(self, repo: str, name: str, head_sha: str, **values: Any) -> object: ...


@dataclass
class _Row:
    github_id: int | None = None
    status: str | None = None
    conclusion: str | None = None


class MemoryLedger:
    """The Action's ledger: the check runs of this one step."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], _Row] = {}

    def get(self, repo: str, name: str, head_sha: str) -> _Row | None:
        return self.rows.get((repo, name, head_sha))

    def claim(self, repo: str, name: str, head_sha: str, pr_number: int | None = None) -> bool:
        return self.rows.setdefault((repo, name, head_sha), _Row()).github_id is None

    def save(self, repo: str, name: str, head_sha: str, **values: Any) -> _Row:
        row = self.rows.setdefault((repo, name, head_sha), _Row())
        for key in ("github_id", "status", "conclusion"):
            if key in values:
                setattr(row, key, values[key])
        return row


@dataclass(frozen=True)
class HeadAnalysis:
    """One analyzer on one head (the Action's; the App's jobs are AnalyzeJob, and its
    bot/app/analysis.py `Analysis` runs them)."""

    repo: str
    pr_number: int | None
    head_sha: str
    analyzer: str
    force: bool = False


class AnalysisRef(Protocol):
    """The analysis whose check run this is: an App job (bot/app/job_kinds.py AnalyzeJob)."""

    @property
    def repo(self) -> str: ...
    @property
    def pr_number(self) -> int | None: ...
    @property
    def head_sha(self) -> str: ...
    @property
    def analyzer(self) -> str: ...
    @property
    def force(self) -> bool: ...


CLAIM_WAIT_S = 10.0  # how long a job waits for the check run another job is creating


def complete(gh: GitHub, job: AnalysisRef, cr_id: int, report: AnalyzerReport, *, target: Target,
             conclude: Conclude | None, notes: Sequence[str] = (), fresh: bool = False) -> CheckOutput:
    """Complete check run `cr_id` (the analysis's, open) with the report; its output (every
    annotation of the report, those the run showed already included). `fresh`: this attempt
    created the run, which shows nothing yet; otherwise the run may show an earlier attempt's
    annotations (a forced re-run, or a new attempt after a lost record) and only the others are
    sent, since GitHub appends annotations and never removes one."""
    reporter = CheckRunReporter(gh, runs={job.analyzer: cr_id}, gate=conclude, notes=notes,
                                shown=None if fresh else (lambda rid: gh.check_run_annotations(job.repo, rid)))
    reporter.start(target, {})
    out = reporter.publish(report)
    if out is None:  # the report is another analyzer's: a bug, never a silent no-op
        raise RuntimeError(f"the report of {report.name!r} is not {job.analyzer!r}'s")
    return out


class CheckRuns:
    """Check runs kept in step between GitHub and a ledger (the App's store, the Action's memory)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def existing(self, gh: GitHub, job: AnalysisRef, name: str) -> tuple[int | None, bool]:
        """(the check run to use, None for a new one; whether the work is already done). The
        check run of (analysis, head) is found in the store, else on GitHub (made by this App),
        and reused whatever its state: a forced job (a re-run, a review comment) redoes
        completed work in it, in place; any other job finds completed work done."""
        row = self.ledger.get(job.repo, name, job.head_sha)
        if row is not None and row.github_id is not None:
            return row.github_id, row.status == "completed" and not job.force
        found = gh.find_check_run(job.repo, job.head_sha, name)
        if found is None:
            return None, False
        self.ledger.save(job.repo, name, job.head_sha, github_id=int(found["id"]),
                         status=found.get("status"), conclusion=found.get("conclusion"),
                         pr_number=job.pr_number)
        return int(found["id"]), found.get("status") == "completed" and not job.force

    def start(self, gh: GitHub, job: AnalysisRef, title: str, cr_id: int | None) -> tuple[int, bool]:
        """The check run of the analyzer titled `title` (created when `cr_id` is None), marked
        in progress: (its id, whether this call created it, so that it shows nothing yet).
        Creating it claims its row in the store first: a job that finds the row claimed (the
        same analysis of the same head running at once) waits for the other's check run and
        updates it instead of making a second one."""
        name, ext = check_name_of(job.analyzer), external_id(job.pr_number, job.analyzer)
        if name is None:
            raise ValueError(f"no analyzer {job.analyzer!r} here")
        if cr_id is None and not self.ledger.claim(job.repo, name, job.head_sha, job.pr_number):
            cr_id = self._claimed_id(job.repo, name, job.head_sha)
        if cr_id is None:  # created in progress, with its external_id: nothing to update
            # the same body as the Action's (reporters/check_run.py)
            body = create_body(Target(repo=job.repo, number=job.pr_number, head_sha=job.head_sha), job.analyzer,
                               title)
            created = gh.create_check_run(job.repo, body.pop("name"), body.pop("head_sha"), **body)
            cr_id, new = int(created["id"]), True
        else:
            gh.update_check_run(job.repo, cr_id, status="in_progress", external_id=ext)
            new = False
        self.ledger.save(job.repo, name, job.head_sha, github_id=cr_id, status="in_progress",
                         conclusion=None, pr_number=job.pr_number)
        return cr_id, new

    def _claimed_id(self, repo: str, name: str, head_sha: str) -> int | None:
        """The GitHub id of a check run another job claimed, once it has one (None after
        CLAIM_WAIT_S: its creator died; this job creates it)."""
        deadline = time.monotonic() + CLAIM_WAIT_S
        while True:
            row = self.ledger.get(repo, name, head_sha)
            if row is not None and row.github_id is not None:
                return row.github_id
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def cancel(self, gh: GitHub, repo: str, analyzer: str | None, head_sha: str | None, newer: str) -> None:
        """Complete the check run of a superseded analysis (if it has one still open) as cancelled."""
        name = check_name_of(analyzer) if analyzer else None
        if name is None or not head_sha:
            return
        cr = self.ledger.get(repo, name, head_sha)
        if cr is None or cr.github_id is None or cr.status == "completed":
            return
        gh.update_check_run(repo, cr.github_id, conclusion="cancelled", output={
            "title": "Superseded by a newer push", "summary": f"A newer commit ({newer[:12]}) replaced this one."})
        self.ledger.save(repo, name, head_sha, status="completed", conclusion="cancelled")

    def fail(self, gh: GitHub, job: AnalysisRef, why: str) -> None:
        """Complete the job's check run (if it has one still open) as neutral, saying why."""
        name = check_name_of(job.analyzer)
        if name is None:
            return
        cr = self.ledger.get(job.repo, name, job.head_sha)
        if cr is None or cr.github_id is None or cr.status == "completed":
            return
        gh.update_check_run(job.repo, cr.github_id, **abandon_body(why))
        self.ledger.save(job.repo, name, job.head_sha, status="completed", conclusion="neutral")


class CheckRunsOutput(Output):
    """A review's check runs, one per analyzer of the head `target` names: found or created in
    progress by `start` (`found`: ids already known, by analyzer), completed with the report,
    the gate's conclusion and the review's notes by `publish`, completed as neutral, saying
    why, by `abandon` (those not completed yet; best effort: the error that stopped the run is
    what matters)."""

    def __init__(self, gh: GitHub, checks: CheckRuns, *, force: bool = False,
                 found: Mapping[str, int | None] | None = None) -> None:
        self.gh, self.checks, self.force, self.found = gh, checks, force, dict(found or {})
        self.target = Target()
        self.runs: dict[str, int] = {}  # analyzer → its check run
        self.fresh: dict[str, bool] = {}  # analyzer → whether this run created it (it shows nothing yet)
        self.sent: dict[str, CheckOutput] = {}  # analyzer → what its completed check run says

    def ref(self, analyzer: str) -> HeadAnalysis:
        t = self.target
        return HeadAnalysis(t.repo, t.number, t.head_sha, analyzer, self.force)

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        self.target = target
        for name, title in titles.items():
            self.runs[name], self.fresh[name] = self.checks.start(self.gh, self.ref(name), title,
                                                                  self.found.get(name))

    def publish(self, result: Result, target: Target) -> None:
        for r in result.reports:
            self.sent[r.name] = complete(self.gh, self.ref(r.name), self.runs[r.name], r, target=target,
                                         conclude=result.verdict.of, notes=result.notes,
                                         fresh=self.fresh[r.name])

    def abandon(self, why: str) -> None:
        for name in self.runs:
            if name not in self.sent:
                try:
                    self.checks.fail(self.gh, self.ref(name), why)
                except Exception:
                    continue
