"""An analysis's report → its check run on GitHub → the store. The App publishes through the
one check-run reporter (reporters/check_run.py), so a report gives the same request bodies as
in the Action: output, annotations in batches of 50, and with the last batch the conclusion the
gate (bot/gate.py) gives and the Re-run button. Then the check run is completed in the store,
with the report's findings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from analyzers.report import AnalyzerReport
from bot.events import AnalyzeJob
from bot.gate import FailOn, judge
from bot.github import GitHub
from bot.store import Store
from reporters.base import Target
from reporters.check_run import CheckOutput, CheckRunReporter

Gate = Callable[[AnalyzerReport], tuple[str, list[str]]]


def gate_for(fail_on: FailOn) -> Gate:
    """One report's check-run conclusion under the gate, with the alternatives that hold."""
    def gate(report: AnalyzerReport) -> tuple[str, list[str]]:
        verdict = judge(fail_on, [report])
        return verdict.conclusion_of(report.name), verdict.crossed(report.name)

    return gate


def publish(gh: GitHub, job: AnalyzeJob, cr_id: int, report: AnalyzerReport, *,
            fail_on: FailOn, notes: Sequence[str] = ()) -> CheckOutput:
    """Complete check run `cr_id` (the job's, already open) with the report; what was sent."""
    reporter = CheckRunReporter(gh, runs={job.analyzer: cr_id}, gate=gate_for(fail_on), notes=notes)
    reporter.start(Target(repo=job.repo, number=job.pr_number, head_sha=job.head_sha), {})
    out = reporter.publish(report)
    reporter.flush()
    if out is None:  # the report is another analyzer's: a bug, never a silent no-op
        raise RuntimeError(f"the report of {report.name!r} is not {job.analyzer!r}'s")
    return out


def record(store: Store, job: AnalyzeJob, name: str, cr_id: int, out: CheckOutput,
           report: AnalyzerReport) -> None:
    """The published check run, completed in the store, with the report's findings."""
    cr = store.save_check_run(job.repo, name, job.head_sha, github_id=cr_id, status="completed",
                              conclusion=out.conclusion, scores=dict(report.scores), pr_number=job.pr_number,
                              annotations=len(out.annotations))
    store.save_findings(cr.id, report.findings)
