"""Benchmarks: ratios measured in one run against a floor or a peer, never bare times.

Every benchmark module exposes `run(quick: bool = False) -> list[Row]`; `bench.run_all`
runs them all and rewrites `docs/benchmarks.md`. Speed is measured here only, never
asserted in tests (tests/bench/ only checks that the machinery works, e.g. request counts).

Shared here: the row shape, the paths to the fixtures in tests/fixtures, and `bench_responder`, which
answers each analyzer's prompts in the shape that analyzer expects (so every analyzer makes
its full number of requests against the latency-injecting server in tests/fakes/llm_server.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from tests.fakes.llm_server import RoundTrips, last_user_text

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"  # the repository's own copies, with SOURCES.md
PRS = FIXTURES / "prs"
LATENCY_S = 0.4  # the LLM's latency per request in the floor benchmarks


class Row(TypedDict):
    figure: str
    value: str
    target: str
    met: bool | None  # None: informational, or not measured
    details: NotRequired[str]  # Markdown shown under the table (e.g. timelines)


def row(figure: str, value: str, target: str = "", met: bool | None = None) -> Row:
    return {"figure": figure, "value": value, "target": target, "met": met}


def not_measured(figure: str, target: str, why: str) -> Row:
    return row(figure, f"not measured: {why}", target, None)


def system_text(request: dict[str, Any]) -> str:
    msgs = [m for m in request.get("messages", []) if m.get("role") == "system"]
    return str(msgs[0]["content"]) if msgs else ""


_FLAGGED = re.compile(r"Flagged lines:\n```[^\n]*\n(.*?)```", re.S)
# EditingRTC's rounds: a model that round-trips (each hunk described in words, re-created from
# them; the code given back for "Edit."), so hunks are scored and annotated as a capable model's
# are; with a model that re-creates nothing, every hunk of a PR is inconclusive and published bare.
_EDITS = RoundTrips()


def _indent(text: str) -> str:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return first[: len(first) - len(first.lstrip())]


def bench_responder(request: dict[str, Any]) -> str | list[str]:
    """Plausible answers for every analyzer's prompts (distinct per sample where it matters).

    - EditingRTC forward ([new] in the prompt) and backward ([edit description]): `RoundTrips`
      (tests/fakes/llm_server.py): n distinct descriptions in words, each hunk re-created from them.
    - CRScore claims: two numbered sections.
    - AutoFix fix: the flagged lines replaced by a harmless statement; description: one
      sentence; regeneration: the same harmless statement (so Patched RTC passes).
    """
    system = system_text(request)
    user = last_user_text(request)
    if system.startswith("Task: fix a security finding"):
        m = _FLAGGED.search(user)
        pad = _indent(m.group(1)) if m else ""
        return f"```\n{pad}pass  # removed the unsafe call\n```"
    if system.startswith("Task: describe a code change"):
        return "Replace the flagged lines with a pass statement that says the unsafe call was removed."
    if system.startswith("Task: apply an instruction"):
        return "```\npass  # removed the unsafe call\n```"
    if "Summary of changes" in user and "Implications" in user:
        return ("1. The change updates the function's behaviour for the edge case.\n"
                "2. It adds handling of empty input.\n\n"
                "Implications:\n"
                "1. Callers that relied on the old behaviour may see different results.\n"
                "2. The new branch needs a test.\n")
    if "[edit description]" in user:  # one re-creation, as a model answers it
        back = _EDITS(request)
        return back[0] if isinstance(back, list) and len(back) == 1 else back
    if "[new]" in user:
        return _EDITS(request)
    return "ok"
