"""EditingRTC in words and on the dashboard: its headline, and per repository its RTC and lift
per pull request and per week, with the pull requests and hunks that scored lowest."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from analyzers.presentation import Cell, Chart, DashboardData, Panel, Table, Total, num, score, week
from analyzers.report import AnalyzerReport, Finding
from analyzers.rtc import round_trip

LABELS = {**round_trip.LABELS, "rtc_chrf": "RTC chrF", "rtc_normalised": "RTC normalised",
          "inconclusive": "inconclusive hunks"}  # its scores' words
COUNTS = (*round_trip.COUNTS, "inconclusive")

LOWEST = 10  # rows in each "lowest scores" table


def headline(report: AnalyzerReport) -> str | None:
    """"7 of 9 changes explained; 2 unclear; 3 inconclusive (the embedded model is too small to
    judge a change)": how many scored hunks some description re-created (explained), how many
    none did (unclear), and the hunks whose evidence says nothing about the change, with why."""
    scored, apart = report.conclusive, report.inconclusive
    if not scored and not apart:
        return None if report.findings else "no hunks scored"  # None: the generic words
    parts = []
    if scored:
        made, n = sum(1 for f in scored if f.scores.get("rtc", 0) > 0), len(scored)
        if n == 1:
            parts.append("the change is explained" if made else "the change is not explained")
        else:
            parts.append(f"{made} of {n} changes explained" + (f"; {n - made} unclear" if made and n - made else ""))
    if apart:
        reasons = Counter(f.inconclusive for f in apart if f.inconclusive is not None)
        why = reasons.most_common(1)[0][0].words
        every = "every scored hunk" if report.planned > len(report.findings) else "every hunk"
        many = f"{len(apart)} inconclusive" if scored else \
            f"{every} is inconclusive" if len(apart) > 1 else "the hunk is inconclusive"
        parts.append(f"{many} ({why})")
    return "; ".join(parts)


MEASURES = ("EditingRTC asks a model to describe each changed hunk and to re-create the hunk from "
            "each description alone; RTC is the share of descriptions that re-create it exactly "
            "(1.00 best), and a lift above 0 over the baseline means the descriptions carried the edit.")
QUOTED = 60  # characters of a missed line in the advice


def advice(f: Finding) -> str | None:
    """What the author does with a hunk no description re-created, naming what the descriptions
    missed (None: nothing to do, or the evidence cannot say: an inconclusive hunk)."""
    if f.inconclusive is not None or f.scores.get("rtc", 1.0) > 0:
        return None
    if f.missed:
        line = textwrap.shorten(f.missed[0], QUOTED, placeholder=" …")
        rest = len(f.missed) - 1
        more = f" (and {rest} more added line{'s' if rest > 1 else ''})" if rest else ""
        return f"no description carried “{line}”{more}: say in the pull request what it does and why"
    return ("each description carried the added lines but not the edit as a whole (their place, or what "
            "they replace): say in the pull request how the parts fit, or split it")


def per_pr(data: DashboardData) -> list[dict[str, Any]]:
    """Each pull request's RTC and lift (its newest head), by PR number."""
    out = []
    for r in data.runs:
        rtc, lift = num(r.scores.get("rtc")), num(r.scores.get("lift"))
        if rtc is not None:
            out.append({"pr": r.pr_number, "week": week(r.updated_at), "rtc": rtc,
                        "lift": lift if lift is not None else 0.0})
    return out


def per_week(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Mean RTC and lift over each week's pull requests (long form: one row per metric)."""
    weeks: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        weeks.setdefault(row["week"], []).append(row)
    return [{"week": w, "metric": metric, "value": round(fmean(r[metric] for r in weeks[w]), 4),
             "prs": len(weeks[w])} for w in sorted(weeks) for metric in ("rtc", "lift")]


def lowest_prs(data: DashboardData, n: int = LOWEST) -> Table:
    rows = sorted((r for r in data.runs if num(r.scores.get("rtc")) is not None),
                  key=lambda r: (float(r.scores["rtc"]), r.pr_number or 0))[:n]
    return Table("Pull requests with the lowest EditingRTC", ("PR", "RTC", "lift", "hunks", "check run"), [
        (Cell(f"#{r.pr_number}", data.links.pull(r.pr_number)), Cell(score(num(r.scores["rtc"])), numeric=True),
         Cell(score(num(r.scores.get("lift"))), numeric=True),
         Cell(str(int(num(r.scores.get("hunks")) or 0)), numeric=True),
         Cell(r.conclusion or "check run", data.links.run(r)) if data.links.run(r) else Cell("–"))
        for r in rows])


def lowest_hunks(data: DashboardData, n: int = LOWEST) -> Table:
    """The conclusive hunks with the lowest RTC (an inconclusive hunk's RTC says nothing about
    its change: it is no low score, and is counted apart, `inconclusive_hunks`)."""
    by_id = {r.id: r for r in data.runs}
    scored = [(it, by_id[it.run_id]) for it in data.items
              if it.run_id in by_id and not it.inconclusive and num(it.scores.get("rtc")) is not None]
    scored.sort(key=lambda p: (float(p[0].scores["rtc"]), p[1].pr_number or 0, p[0].path or "", p[0].start_line or 0))
    rows = []
    for it, run in scored[:n]:
        lines = it.path or "–"
        if it.path and it.start_line:
            lines += f":{it.start_line}" + (f"-{it.end_line}" if it.end_line and it.end_line != it.start_line else "")
        run_url = data.links.run(run)
        rows.append((Cell(f"#{run.pr_number}"), Cell(lines, data.links.lines(run, it.path, it.start_line, it.end_line)),
                     Cell(score(num(it.scores["rtc"])), numeric=True),
                     Cell(score(num(it.scores.get("lift"))), numeric=True),
                     Cell("check run", run_url) if run_url else Cell("–")))
    return Table("Hunks with the lowest EditingRTC", ("PR", "lines", "RTC", "lift", "check run"), rows)


def inconclusive_hunks(data: DashboardData) -> int:
    """The hunks of the shown check runs whose evidence says nothing about their change."""
    ids = {r.id for r in data.runs}
    return sum(1 for it in data.items if it.run_id in ids and it.inconclusive)


def dashboard(data: DashboardData) -> Panel:
    """RTC and lift per pull request and per week; the lowest pull requests and hunks."""
    prs = per_pr(data)
    weekly = per_week(prs)
    mean_rtc = round(fmean(r["rtc"] for r in prs), 3) if prs else None
    mean_lift = round(fmean(r["lift"] for r in prs), 3) if prs else None
    return Panel(
        charts=[
            Chart("rtc-per-pr", "EditingRTC per pull request",
                  f"EditingRTC (bars) and lift (diamonds) of {len(prs)} pull requests of {data.repo}; "
                  f"mean RTC {mean_rtc}, mean lift {mean_lift}", "bars+points", prs,
                  x="pr", x_title="pull request", y="rtc", y_title="RTC (bars), lift (◆)", points="lift"),
            Chart("rtc-per-week", "EditingRTC and lift per week",
                  f"Mean EditingRTC and lift per week over {len({r['week'] for r in weekly})} weeks", "lines",
                  weekly, x="week", x_title="week", y="value", y_title="mean over PRs", series="metric",
                  order=("rtc", "lift")),
        ],
        totals=[Total(score(mean_rtc), "mean EditingRTC"), Total(score(mean_lift), "mean lift"),
                *([Total(str(apart), "inconclusive hunks (not scored: the model, not the change)")]
                  if (apart := inconclusive_hunks(data)) else [])],
        tables=[lowest_prs(data), lowest_hunks(data)],
    )
