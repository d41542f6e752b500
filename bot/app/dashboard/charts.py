"""The dashboard's charts: figures (figures.py) in, altair charts out, rendered to inline SVG by
reporters/plots.py (no browser script, no CDN). Each analyzer describes its charts as data
(analyzers/presentation.py `Chart`: a kind, its fields and titles); this module draws the
kinds. Each SVG carries an accessible name (role="img", aria-label and <title>); colours come
from a palette readable on light and dark pages."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import altair as alt

from analyzers.presentation import Chart as ChartSpec
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


def bars_and_points(c: ChartSpec) -> Any:
    base = _chart(c.values).encode(x=alt.X(f"{c.x}:O", title=c.x_title, sort="ascending",
                                           axis=alt.Axis(labelOverlap=True)))
    bars = base.mark_bar().encode(y=alt.Y(f"{c.y}:Q", title=c.y_title), color=alt.value("#4c78a8"))
    points = base.mark_point(shape="diamond", filled=True, size=40, color="#f58518").encode(y=f"{c.points}:Q")
    return (bars + points).properties(width=WIDTH, height=HEIGHT)


def _y(c: ChartSpec) -> Any:
    if c.y_domain is None:
        return alt.Y(f"{c.y}:Q", title=c.y_title)
    return alt.Y(f"{c.y}:Q", title=c.y_title, scale=alt.Scale(domain=list(c.y_domain)))


def _series(c: ChartSpec) -> Any:
    return alt.Color(f"{c.series}:N", title=None, sort=list(c.order) or "ascending")


def lines(c: ChartSpec) -> Any:
    return _chart(c.values).mark_line(point=True).encode(
        x=alt.X(f"{c.x}:O", title=c.x_title), y=_y(c), color=_series(c),
    ).properties(width=WIDTH, height=HEIGHT)


def boxes(c: ChartSpec) -> Any:
    return _chart(c.values).mark_boxplot(extent="min-max", size=10).encode(
        x=alt.X(f"{c.x}:O", title=c.x_title), xOffset=alt.XOffset(f"{c.series}:N", sort=list(c.order)),
        y=_y(c), color=_series(c),
    ).properties(width=WIDTH, height=HEIGHT)


def grouped_bars(c: ChartSpec) -> Any:
    return _chart(c.values).mark_bar().encode(
        x=alt.X(f"{c.x}:O", title=c.x_title), xOffset=alt.XOffset(f"{c.series}:N", sort=list(c.order)),
        y=_y(c), color=_series(c),
    ).properties(width=WIDTH, height=HEIGHT)


KINDS: dict[str, Callable[[ChartSpec], Any]] = {"bars+points": bars_and_points, "lines": lines, "boxes": boxes,
                                                "grouped-bars": grouped_bars}


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
    """The page's charts, each rendered: every analyzer's (its `dashboard`), then the LLM's use;
    a chart without data is left out."""
    out = []
    for section in f.sections:
        for c in section.panel.charts:
            if c.values:
                out.append(Chart(c.key, c.title, c.label, accessible(svg(_done(KINDS[c.kind](c), c.label)), c.label)))
    if f.llm:
        t = f.totals
        label = f"LLM tokens ({t.get('llm_tokens', 0)}) and requests ({t.get('llm_requests', 0)}) spent per week"
        out.append(Chart("llm", "LLM tokens and requests per week", label,
                         accessible(svg(_done(llm(f.llm), label)), label)))
    return out
