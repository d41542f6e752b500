"""The further outputs a surface drives by name after its check runs (`reporters` input,
RTCBOT_REPORTERS): each through a finished run, one at a time. One that fails — GitHub refuses
it (a fork's read-only token), or anything else — is reported, never fatal: the check runs hold
the same findings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzers.report import AnalyzerReport
from bot.github.errors import GitHubError
from reporters.base import Sinks, Target, failure, reporters_named, run_reporter

HELD_ELSEWHERE = "the check runs and the summary hold the same findings"


@dataclass(frozen=True)
class Driven:
    """What one further output did (`said`: "pr-review: posted …", or why it failed, in a
    sentence); `reason`: its error's type and message; what it published, when it keeps a
    record of that (the pr-review reporter's suggestions, for feedback)."""

    name: str
    said: str
    ok: bool = True
    published: list[dict[str, Any]] | None = None
    reason: str = ""
    error: BaseException | None = None


def drive(names: Sequence[str], sinks: Sinks, target: Target, titles: Mapping[str, str],
          reports: list[AnalyzerReport]) -> list[Driven]:
    out = []
    for reporter in reporters_named(names, sinks):
        try:
            done = run_reporter(reporter, target, dict(titles), reports)
        except Exception as e:
            said = (f"{reporter.name}: GitHub refused it ({e.status}: {e.message}); {HELD_ELSEWHERE}"
                    if isinstance(e, GitHubError) else f"{reporter.name} failed ({failure(e)}); {HELD_ELSEWHERE}")
            out.append(Driven(reporter.name, said, False, reason=failure(e), error=e))
            continue
        out.append(Driven(reporter.name, f"{reporter.name}: {done}", published=reporter.published()))
    return out
