"""The dashboard's charts: figures (figures.py) in, altair charts out, rendered to inline SVG by
reporters/plots.py (no browser script, no CDN). Each SVG carries an accessible name (role="img",
aria-label and <title>); colours come from a palette readable on light and dark pages."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import altair as alt

from bot.app.dashboard.figures import Figures
from reporters.plots import svg

WIDTH = 420
HEIGHT = 220
CONFIG: dict[str, Any] = {
    "background": "transparent",  # the page's own background, light or dark
    "font": "system-ui, sans-serif",
    "axis": {"labelColor": "#888", "titleColor": "#888", "labelFontSize": 11, "titleFontSize": 12,
             "gridColor": "#8884", "domainColor": "#888", "tickColor": "#888"},
    "legend": {"labelColor": "#888", "titleColor": "#888", "orient": "bottom", "labelFontSize": 12},
    "view": {"stroke": None},
    "range": {"category": ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#b279a2"]},
}


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    label: str  # the accessible name
    svg: str


def _chart(values: list[dict[str, Any]]) -> alt.Chart:
    return alt.Chart(alt.Data(values=values))


def _done(chart: Any, label: str) -> Any:
    return chart.properties(description=label).configure(**CONFIG)


def rtc_per_pr(values: list[dict[str, Any]]) -> Any:
    base = _chart(values).encode(x=alt.X("pr:O", title="pull request", sort="ascending",
                                         axis=alt.Axis(labelOverlap=True)))
    bars = base.mark_bar().encode(y=alt.Y("rtc:Q", title="RTC (bars), lift (◆)"), color=alt.value("#4c78a8"))
    lift = base.mark_point(shape="diamond", filled=True, size=40, color="#f58518").encode(y="lift:Q")
    return (bars + lift).properties(width=WIDTH, height=HEIGHT)


def rtc_per_week(values: list[dict[str, Any]]) -> Any:
    return _chart(values).mark_line(point=True).encode(
        x=alt.X("week:O", title="week"), y=alt.Y("value:Q", title="mean over PRs"),
        color=alt.Color("metric:N", title=None, sort=["rtc", "lift"]),
    ).properties(width=WIDTH, height=HEIGHT)


def crscore(values: list[dict[str, Any]]) -> Any:
    return _chart(values).mark_boxplot(extent="min-max", size=10).encode(
        x=alt.X("week:O", title="week"), xOffset=alt.XOffset("metric:N", sort=["Rel", "Con", "Comp"]),
        y=alt.Y("value:Q", title="score per review comment", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("metric:N", title=None, sort=["Rel", "Con", "Comp"]),
    ).properties(width=WIDTH, height=HEIGHT)


AUTOFIX_ORDER = ["findings", "fixes proposed", "fixes verified", "suggested", "applied"]


def autofix(values: list[dict[str, Any]]) -> Any:
    return _chart(values).mark_bar().encode(
        x=alt.X("week:O", title="week"), xOffset=alt.XOffset("what:N", sort=AUTOFIX_ORDER),
        y=alt.Y("count:Q", title="count"), color=alt.Color("what:N", title=None, sort=AUTOFIX_ORDER),
    ).properties(width=WIDTH, height=HEIGHT)


def llm(values: list[dict[str, Any]]) -> Any:
    base = _chart(values).encode(x=alt.X("week:O", title="week"))
    tokens = base.mark_bar(color="#4c78a8").encode(y=alt.Y("tokens:Q", title="tokens")).properties(
        width=WIDTH, height=HEIGHT // 2)
    requests = base.mark_bar(color="#f58518").encode(y=alt.Y("requests:Q", title="requests")).properties(
        width=WIDTH, height=HEIGHT // 2)
    return alt.vconcat(tokens, requests)


def accessible(svg_text: str, label: str) -> str:
    """The SVG with role="img", an aria-label and a <title> (its accessible name)."""
    name = html.escape(label, quote=True)
    head, sep, rest = svg_text.partition("<svg ")
    if not sep:
        raise ValueError("not an SVG document")
    tag_end = rest.index(">")
    return (f'{head}<svg role="img" aria-label="{name}" {rest[:tag_end + 1]}<title>{name}</title>'
            f"{rest[tag_end + 1:]}")


def charts(f: Figures) -> list[Chart]:
    """The page's charts, each rendered; a chart without data is left out."""
    t = f.totals
    specs: list[tuple[str, str, str, list[dict[str, Any]], Any]] = [
        ("rtc-per-pr", "EditingRTC per pull request",
         f"EditingRTC (bars) and lift (diamonds) of {len(f.rtc_per_pr)} pull requests of {f.repo}; "
         f"mean RTC {t.get('mean_rtc')}, mean lift {t.get('mean_lift')}", f.rtc_per_pr, rtc_per_pr),
        ("rtc-per-week", "EditingRTC and lift per week",
         f"Mean EditingRTC and lift per week over {len({r['week'] for r in f.rtc_per_week})} weeks",
         f.rtc_per_week, rtc_per_week),
        ("crscore", "CRScore of review comments per week",
         f"Distributions of CRScore Rel, Con and Comp of review comments per week "
         f"({len(f.crscore) // 3 if f.crscore else 0} comments)", f.crscore, crscore),
        ("autofix", "AutoFix findings, fixes and acceptance per week",
         f"AutoFix per week: Semgrep findings, fixes proposed and verified, suggestions published "
         f"({t.get('suggested', 0)}) and applied ({t.get('applied', 0)})", f.autofix, autofix),
        ("llm", "LLM tokens and requests per week",
         f"LLM tokens ({t.get('llm_tokens', 0)}) and requests ({t.get('llm_requests', 0)}) spent per week",
         f.llm, llm),
    ]
    out = []
    for key, title, label, values, build in specs:
        if not values:
            continue
        out.append(Chart(key, title, label, accessible(svg(_done(build(values), label)), label)))
    return out
