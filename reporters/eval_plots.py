"""Chart builders for the evaluations' `--plot FILE`: plain figures in, an altair chart out (pure;
rendering is reporters.plots)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any


def crscore_chart(pred: Sequence[float], gold: Sequence[float], spearman: float | None,
                  kendall: float | None, dataset: str) -> Any:
    """CRScore (relevance) against the human rating per review, titled with the rank correlations."""
    import altair as alt

    rho = "n/a" if spearman is None else f"{spearman:.2f}"
    tau = "n/a" if kendall is None else f"{kendall:.2f}"
    title = f"Spearman ρ = {rho}, Kendall τ = {tau}: CRScore vs human ratings on {dataset} ({len(pred)} reviews)"
    data = alt.Data(values=[{"crscore": float(p), "human": float(g)} for p, g in zip(pred, gold, strict=True)])
    return alt.Chart(data, title=title, description=title).mark_circle(opacity=0.6).encode(
        x=alt.X("human:Q", title="human relevance rating"),
        y=alt.Y("crscore:Q", title="CRScore relevance"),
    ).properties(width=480, height=320)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


VERDICT_COLOURS = {"AC": "#2ca02c", "WA": "#d62728", "TLE": "#ff7f0e", "MLE": "#9467bd", "RE": "#8c564b",
                   "CE": "#7f7f7f"}


def repair_chart(verdicts: Sequence[tuple[str, Mapping[str, int]]], pass_at: Mapping[int, float],
                 what: str) -> Any:
    """Program repair: the verdicts of every (sample, test case) per task as stacked bars, beside
    the pass@k curve over the k the samples can estimate; titled with pass@k."""
    import altair as alt

    head = ", ".join(f"pass@{k} = {v:.2f}" for k, v in sorted(pass_at.items())) or "pass@k not estimable"
    title = f"{head}: {what} ({_plural(len(verdicts), 'task')})"
    order = list(dict.fromkeys(v for _, hist in verdicts for v in hist))
    rows = [{"task": task, "verdict": v, "runs": n, "rank": order.index(v)}
            for task, hist in verdicts for v, n in hist.items() if n]
    bars = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        y=alt.Y("task:N", title="task", sort=None, axis=alt.Axis(labelLimit=280)),
        x=alt.X("runs:Q", title="test runs (samples × cases)", stack="zero"),
        color=alt.Color("verdict:N", title="verdict", sort=order, scale=alt.Scale(
            domain=order, range=[VERDICT_COLOURS.get(v, "#bcbd22") for v in order])),
        order=alt.Order("rank:Q"),
        tooltip=["task:N", "verdict:N", "runs:Q"],
    ).properties(width=320, height=alt.Step(14))
    if not pass_at:
        return bars.properties(title=title, description=title)
    curve = alt.Chart(alt.Data(values=[{"k": k, "pass_at_k": v} for k, v in sorted(pass_at.items())])).mark_line(
        point=True).encode(
        x=alt.X("k:Q", title="k (samples drawn per task)", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("pass_at_k:Q", title="pass@k", scale=alt.Scale(domain=[0, 1])),
        tooltip=["k:Q", alt.Tooltip("pass_at_k:Q", format=".3f")],
    ).properties(width=240, height=240)
    return alt.hconcat(bars, curve, title=title, description=title)


def rtc_lift_chart(items: Sequence[tuple[str, float, float]], what: str, rtc_name: str = "RTC",
                   noun: str = "item") -> Any:
    """RTC against the baseline per item, `items` as (id, rtc, baseline): a point per distinct
    pair, sized by its items, with the diagonal (above it, the round trip beat the baseline),
    beside the spread of the lift (RTC − baseline) over items; titled with the mean lift."""
    import altair as alt

    n = len(items)
    if n:
        rtc, base = fmean(r for _, r, _ in items), fmean(b for _, _, b in items)
        head = f"lift = {rtc - base:+.2f} ({rtc_name} {rtc:.2f} vs baseline {base:.2f})"
    else:
        head = "lift = n/a"
    title = f"{head} on {what} ({_plural(n, noun)})"
    sides = ("RTC above baseline", "equal", "baseline above RTC")
    rows = [{"item": str(i), "rtc": float(r), "baseline": float(b), "lift": float(r) - float(b),
             "side": sides[0] if r > b else sides[1] if r == b else sides[2]} for i, r, b in items]
    x = alt.X("baseline:Q", title="baseline (generic description)", scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("rtc:Q", title=f"{rtc_name} (round trip)", scale=alt.Scale(domain=[0, 1]))
    diagonal = alt.Chart(alt.Data(values=[{"baseline": 0.0, "rtc": 0.0}, {"baseline": 1.0, "rtc": 1.0}])).mark_line(
        color="gray", strokeDash=[4, 4]).encode(x=x, y=y)
    points = alt.Chart(alt.Data(values=rows)).mark_circle(opacity=0.7).encode(
        x=x, y=y, size=alt.Size("count():Q", title=f"{noun}s"),
        color=alt.Color("side:N", title="", sort=list(sides), scale=alt.Scale(
            domain=list(sides), range=["#2ca02c", "#7f7f7f", "#d62728"])),
        tooltip=["baseline:Q", "rtc:Q", alt.Tooltip("count():Q", title=f"{noun}s")],
    )
    scatter = alt.layer(diagonal, points).properties(width=280, height=280)
    spread = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("lift:Q", title="lift per item (RTC − baseline)", bin=alt.Bin(extent=[-1, 1], step=0.1)),
        y=alt.Y("count():Q", title=f"{noun}s"),
    ).properties(width=280, height=280)
    return alt.hconcat(scatter, spread, title=title, description=title)


def autofix_chart(groups: Sequence[tuple[str, int, int, tuple[float, float] | None]], what: str) -> Any:
    """Fix % (Semgrep's re-scan finds the finding gone, nothing new) per group, `groups` as
    (label, fixed, of, 95 % interval of the rate or None), with the interval as an error bar; the
    first group is the headline (all findings), the rest Patched RTC's pass / fail."""
    import altair as alt

    def pct(k: int, n: int) -> str:
        return f"{100 * k / n:.1f}" if n else "n/a"

    (_, k0, n0, _), rest = groups[0], groups[1:]
    head = f"Fix % = {pct(k0, n0)}" + (
        " (" + ", ".join(f"{g} {pct(k, n)}" for g, k, n, _ in rest) + ")" if rest else "")
    title = f"{head}: {what} ({_plural(n0, 'finding')})"
    rows = [{"group": f"{g} ({k}/{n})", "fix_pct": 100 * k / n,
             "low": 100 * ci[0] if ci else None, "high": 100 * ci[1] if ci else None}
            for g, k, n, ci in groups if n]
    x = alt.X("group:N", title=None, sort=None, axis=alt.Axis(labelAngle=0))
    bars = alt.Chart(alt.Data(values=rows)).mark_bar(color="#4c78a8").encode(
        x=x, y=alt.Y("fix_pct:Q", title="Fix % (re-scan clean), 95 % Wilson interval",
                     scale=alt.Scale(domain=[0, 100])),
        tooltip=["group:N", alt.Tooltip("fix_pct:Q", format=".1f"), alt.Tooltip("low:Q", format=".1f"),
                 alt.Tooltip("high:Q", format=".1f")],
    )
    whiskers = alt.Chart(alt.Data(values=rows)).mark_errorbar(
        ticks=alt.MarkConfig(size=24, color="black"), color="black").encode(
        x=x, y=alt.Y("low:Q", title="Fix % (re-scan clean), 95 % Wilson interval"), y2="high:Q")
    return alt.layer(bars, whiskers, title=title, description=title).properties(width=alt.Step(110),
                                                                               height=280)


def qualify_chart(models: Sequence[tuple[str, float, float, float, bool]], threshold: float, repository: str,
                  hunks: int) -> Any:
    """`rtcbot qualify`: each model's lift (RTC − baseline) as a point with its bootstrap 95 %
    interval, coloured by its verdict, beside the threshold its lower bound must clear; `models`
    as (model, lift, low, high, qualified)."""
    import altair as alt

    passed = [m for m, *_, ok in models if ok]
    head = (f"qualified: {', '.join(passed)}" if passed else "no model qualifies")
    title = f"{head}: lift per model on {repository} ({_plural(hunks, 'hunk')})"
    rows = [{"model": m, "lift": lift, "low": lo, "high": hi, "verdict": "qualified" if ok else "not qualified"}
            for m, lift, lo, hi, ok in models]
    y = alt.Y("model:N", title=None, sort=None)
    x_title = "lift (RTC − baseline), 95 % bootstrap interval"
    colour = alt.Color("verdict:N", title="verdict", scale=alt.Scale(domain=["qualified", "not qualified"],
                                                                     range=["#2ca02c", "#d62728"]))
    points = alt.Chart(alt.Data(values=rows)).mark_point(filled=True, size=90).encode(
        x=alt.X("lift:Q", title=x_title), y=y, color=colour,
        tooltip=["model:N", alt.Tooltip("lift:Q", format="+.3f"), alt.Tooltip("low:Q", format="+.3f"),
                 alt.Tooltip("high:Q", format="+.3f"), "verdict:N"])
    whiskers = alt.Chart(alt.Data(values=rows)).mark_errorbar(ticks=True).encode(
        x=alt.X("low:Q", title=x_title), x2="high:Q", y=y, color=colour)
    rule = alt.Chart(alt.Data(values=[{"threshold": threshold}])).mark_rule(strokeDash=[4, 4], color="gray").encode(
        x="threshold:Q")
    return alt.layer(whiskers, points, rule, title=title, description=title).properties(
        width=420, height=alt.Step(36))
