"""SynthesisRTC in words: its headline and what a pull request's author does with each of its
findings (analyzers/presentation.py)."""

from __future__ import annotations

from analyzers.report import AnalyzerReport, Finding
from analyzers.rtc import round_trip

LABELS = {**round_trip.LABELS, "rtc_pass": "RTC pass", "regions": "regions", "n_tasks": "tasks"}  # its scores' words
COUNTS = (*round_trip.COUNTS, "regions", "n_tasks")


def headline(report: AnalyzerReport) -> str | None:
    """"1 of 2 changed regions re-created from a description so that the tests pass (SynthesisRTC 0.50)"."""
    s = report.scores
    n = len(report.findings)
    if "rtc_pass" not in s or not n:
        return None
    made = sum(1 for f in report.findings if f.scores.get("rtc_pass", 0) > 0)
    return (f"{made} of {n} changed region{'s' if n != 1 else ''} re-created from a description so that the "
            f"tests pass (SynthesisRTC {s['rtc_pass']:.2f})")


def advice(f: Finding) -> str | None:
    """A region no description re-created: its intent is hard to say from the code."""
    if f.scores.get("rtc_pass", 1.0) > 0:
        return None
    return ("no description of it let the model write code that passes the tests: its intent may need a "
            "clearer name or a docstring")


def not_run(test_command: str | None, checkout: object | None) -> str:
    """Why SynthesisRTC does not run, in a few words ("" when it can)."""
    if not test_command:
        return "no test command"
    return "no checkout of the repository" if checkout is None else ""


def why_not_run(test_command: str | None, checkout: object | None) -> str | None:
    """The same, said in full with how to turn it on (None when it can run)."""
    if not test_command:
        return ("SynthesisRTC runs only where a test command is set: `test_command` in .github/rtcbot.yml, "
                "the Action's `test-command` input or `rtcbot review --test-command`. The GitHub App never "
                "runs a pull request's code.")
    if checkout is None:
        return ("SynthesisRTC needs a checkout of the repository at the head to run its tests (`rtcbot review "
                "--repo`; in the Action, actions/checkout with `ref: <head sha>`).")
    return None
