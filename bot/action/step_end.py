"""The step's own outputs, written once the check runs (or the workflow commands that stand in
for them) and the further reporters have published (bot/core/review.py `execute` drives it
last): the SARIF file (`sarif-file`), the step summary (GITHUB_STEP_SUMMARY) and the outputs
(GITHUB_OUTPUT), each saying where the findings went — check runs, or workflow-command
annotations where the token cannot create check runs (that note is said in the log too)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from analyzers.report import AnalyzerReport
from bot.action.settings import ActionSettings
from bot.action.workflow import ActionError, PullRequest
from bot.core.checks import CheckRunsOutput
from bot.core.outputs import Fallback, Reported
from bot.core.review import Output, Result
from reporters.base import Target, run_reporter
from reporters.check_run import check_name_of
from reporters.sarif import SarifReporter
from reporters.step_summary import OutputsReporter, RunOutcome, StepSummaryReporter
from reporters.workflow_commands import STEP_ANNOTATIONS_PER_LEVEL


class StepEnd(Output):
    """SARIF, the step summary and the outputs of the review published through `primary` (the
    check runs `checks`, or the workflow commands `commands` once it swapped); `mode`: which."""

    def __init__(self, s: ActionSettings, pr: PullRequest, gate: str, primary: Fallback, checks: CheckRunsOutput,
                 commands: Reported, say: Callable[[str], None], stdout: IO[str]) -> None:
        self.s, self.pr, self.gate, self.say, self.stdout = s, pr, gate, say, stdout
        self.primary, self.checks, self.commands = primary, checks, commands
        self.titles: dict[str, str] = {}
        self.mode = "check-runs"

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        self.titles = dict(titles)

    def publish(self, result: Result, target: Target) -> None:
        checks, titles = self.checks, self.titles
        self.mode = "workflow-commands" if self.primary.swapped else "check-runs"
        mode_note = self._commands_note(self.commands.value) if self.primary.swapped else (
            f"Posted {len(checks.runs)} check run(s): " + ", ".join(check_name_of(n) or n for n in titles) + ".")
        outcome = RunOutcome(mode=self.mode, mode_note=mode_note, conclusion=result.verdict.conclusion,
                             gate=self.gate, matched=result.verdict.matched, missing=result.verdict.missing,
                             notes=result.notes, blocked=tuple(result.verdict.blocked.values()),
                             sarif_file=self._sarif(target, result.reports),
                             links=self.pr.run_links(checks.runs if self.mode == "check-runs" else {}),
                             conclusions={n: out.conclusion for n, out in checks.sent.items()})
        s = self.s
        run_reporter(StepSummaryReporter(Path(s.step_summary_path) if s.step_summary_path else None, self.stdout),
                     target, titles, result.reports, outcome)
        if s.output_path:
            run_reporter(OutputsReporter(Path(s.output_path)), target, titles, result.reports, outcome)

    def _commands_note(self, shown_left: tuple[int, int]) -> str:
        """The summary's sentence on the workflow commands written instead of check runs."""
        shown, left = shown_left
        why = ("a pull request from a fork gets a read-only token" if self.pr.fork
               else "the workflow needs `permissions: checks: write`")
        mode_note = (f"**This token cannot create check runs** ({why}), so the findings are "
                     f"workflow-command annotations: {shown} shown"
                     + (f", {left} more only in this summary (GitHub shows at most "
                        f"{STEP_ANNOTATIONS_PER_LEVEL} per level and step)." if left else "."))
        self.say("rtcbot: " + mode_note.replace("**", ""))
        return mode_note

    def _sarif(self, target: Target, reports: list[AnalyzerReport]) -> str:
        """The SARIF file, when asked for; its path."""
        s = self.s
        if not s.sarif_file:
            return ""
        try:  # relative: inside the workspace (the PR's checkout), no symbolic link followed
            sarif = SarifReporter(Path(s.sarif_file), root=None if Path(s.sarif_file).is_absolute() else s.workspace)
            written = str(run_reporter(sarif, target, self.titles, reports))
        except (ValueError, OSError) as e:
            raise ActionError(f"sarif-file: cannot write {s.sarif_file!r}: {e}") from None
        self.say(f"rtcbot: SARIF written to {written}")
        return written
