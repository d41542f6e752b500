"""Qualifying a model on a repository's own history (pure: sampling, statistics, verdict).

`rtcbot qualify` (bot/cli/commands/qualify.py) runs EditingRTC with each candidate model over a
sample of the repository's past hunks and asks: does this model re-create the repository's
edits from its own descriptions clearly better than from the uninformative "Edit."? This
module holds the parts that need no model and no git:

- `stratified_sample`: hunks drawn per stratum (language × hunk size), each stratum in
  proportion to its share of the history (largest remainders, at least one per stratum while
  the bound allows), seeded, so a re-run draws the same hunks (and hits the LLM cache);
- `bootstrap_interval`: a percentile bootstrap of a mean over hunks, seeded;
- `summarise` / `verdict_of` / `cheapest`: one model's figures, its verdict against `Thresholds`
  (by default: lift's lower bound > 0), and the cheapest model that qualifies;
- the qualification record (`record`, `qualified_models`): the JSON a repository keeps at
  `.rtcbot/qualification.json`, read back by `rtcbot review` under `require_qualified: true`.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from analyzers.llm import format_watch
from analyzers.urls import redact_url

RECORD_VERSION = 1
SIZE_BUCKETS: tuple[tuple[str, int], ...] = (("small", 4), ("medium", 16))  # changed lines ≤; else large


class RecordError(ValueError):
    """The qualification record cannot be read (one line)."""


@dataclass(frozen=True)
class Candidate:
    """One hunk of the history that EditingRTC could score."""

    commit: str
    path: str
    language: str
    changed_lines: int
    old: str
    new: str
    header: str = ""

    @property
    def stratum(self) -> tuple[str, str]:
        return self.language, size_bucket(self.changed_lines)


def size_bucket(changed_lines: int) -> str:
    for name, limit in SIZE_BUCKETS:
        if changed_lines <= limit:
            return name
    return "large"


def _allocate(sizes: Mapping[tuple[str, str], int], total: int) -> dict[tuple[str, str], int]:
    """How many to draw from each stratum: proportional by largest remainders, at least one
    from each (the smallest strata first lose that one when `total` is below their count)."""
    keys = sorted(sizes)
    if total >= sum(sizes.values()):
        return dict(sizes)
    n = sum(sizes.values())
    floor = {k: min(sizes[k], 1) for k in keys} if total >= len(keys) else {}
    if not floor:  # fewer draws than strata: the largest strata get one each
        ranked = sorted(keys, key=lambda k: (-sizes[k], k))[:total]
        return {k: int(k in ranked) for k in keys}
    rest = total - sum(floor.values())
    quota = {k: (sizes[k] - floor[k]) * rest / max(n - sum(floor.values()), 1) for k in keys}
    alloc = {k: floor[k] + int(quota[k]) for k in keys}
    left = total - sum(alloc.values())
    for k in sorted(keys, key=lambda k: (-(quota[k] - int(quota[k])), k)):
        if left <= 0:
            break
        if alloc[k] < sizes[k]:
            alloc[k] += 1
            left -= 1
    return alloc


def stratified_sample(items: Sequence[Candidate], max_items: int, seed: int) -> list[Candidate]:
    """At most `max_items` of `items`, stratified by language and hunk size, seeded; in the
    order of `items` (the history's)."""
    if max_items < 1:
        raise ValueError("max_items must be at least 1")
    strata: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        strata[it.stratum].append(i)
    alloc = _allocate({k: len(v) for k, v in strata.items()}, max_items)
    rng = random.Random(seed)
    chosen: list[int] = []
    for key in sorted(strata):
        chosen += rng.sample(strata[key], alloc[key])
    return [items[i] for i in sorted(chosen)]


def bootstrap_interval(values: Sequence[float], *, seed: int, resamples: int = 2000,
                       confidence: float = 0.95) -> tuple[float, float]:
    """A percentile bootstrap interval of the mean of `values` (resampled with replacement)."""
    if not values:
        return 0.0, 0.0
    rng = random.Random(seed)
    n = len(values)
    means = sorted(fmean(rng.choices(values, k=n)) for _ in range(resamples))
    tail = (1.0 - confidence) / 2
    lo = means[int(tail * (resamples - 1))]
    hi = means[int((1.0 - tail) * (resamples - 1) + 0.5)]
    return lo, hi


@dataclass
class Thresholds:
    """What a model must show to qualify; a None threshold is not checked."""

    min_lift_lower: float = 0.0  # lift's bootstrap lower bound must be above this
    min_rtc: float | None = None  # mean RTC at least this
    min_hunks: int = 1  # scored hunks at least this


@dataclass
class ModelResult:
    """One model's figures on the sample (per_hunk: each scored hunk's EditingRTC scores)."""

    model: str
    base_url: str | None
    hunks: int = 0
    rtc: float = 0.0
    rtc_at_3: float = 0.0
    baseline: float = 0.0
    lift: float = 0.0
    lift_low: float = 0.0
    lift_high: float = 0.0
    format_share: float | None = None  # of the model's answers, those in the expected format (None: none)
    requests: int = 0
    tokens: int = 0
    cache_hits: int = 0
    wall_s: float = 0.0
    cost: float | None = None
    not_scored: int = 0  # sampled hunks a budget cut off
    qualified: bool = False
    reasons: list[str] = field(default_factory=list)  # why not qualified

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarise(model: str, base_url: str | None, per_hunk: Sequence[Mapping[str, float]], *,
              seed: int, requests: int = 0, tokens: int = 0, cache_hits: int = 0, wall_s: float = 0.0,
              price_per_1k: float | None = None, not_scored: int = 0,
              format_share: float | None = None) -> ModelResult:
    """A model's figures from its per-hunk scores (`rtc`, `rtc@3`, `baseline`, `lift`)."""
    shown = None if base_url is None else redact_url(base_url)  # a record or an output never holds a key
    r = ModelResult(model, shown, hunks=len(per_hunk), requests=requests, tokens=tokens,
                    cache_hits=cache_hits, wall_s=wall_s, not_scored=not_scored, format_share=format_share)
    if per_hunk:
        r.rtc = fmean(s.get("rtc", 0.0) for s in per_hunk)
        r.rtc_at_3 = fmean(max((v for k, v in s.items() if k.startswith("rtc@")), default=0.0) for s in per_hunk)
        r.baseline = fmean(s.get("baseline", 0.0) for s in per_hunk)
        lifts = [s.get("lift", 0.0) for s in per_hunk]
        r.lift = fmean(lifts)
        r.lift_low, r.lift_high = bootstrap_interval(lifts, seed=seed)
    if price_per_1k is not None:
        r.cost = tokens / 1000 * price_per_1k
    return r


def verdict_of(result: ModelResult, thresholds: Thresholds) -> ModelResult:
    """Set the verdict (and the reasons against) on `result`; returns it."""
    reasons = []
    if result.hunks < thresholds.min_hunks:
        reasons.append(f"{result.hunks} hunk(s) scored, fewer than {thresholds.min_hunks}")
    if not result.lift_low > thresholds.min_lift_lower:
        reasons.append(f"lift's lower bound {result.lift_low:+.3f} is not above {thresholds.min_lift_lower:+.3f}")
    if thresholds.min_rtc is not None and result.rtc < thresholds.min_rtc:
        reasons.append(f"RTC {result.rtc:.3f} is below {thresholds.min_rtc:.3f}")
    if result.format_share is not None and result.format_share < format_watch.MIN_SHARE:
        # the rule a review applies while it runs: such a model is stopped after a handful
        reasons.append(f"{result.format_share:.0%} of its answers in the expected format, "
                       f"under {format_watch.MIN_SHARE:.0%}")
    result.reasons = reasons
    result.qualified = not reasons
    return result


def cheapest(results: Sequence[ModelResult]) -> ModelResult | None:
    """The qualified model that cost least: by cost where priced (unpriced ones after), then
    by tokens, then by requests, then in the order given."""
    ok = [r for r in results if r.qualified]
    if not ok:
        return None
    return min(ok, key=lambda r: (r.cost is None, r.cost or 0.0, r.tokens, r.requests))


# -- the record ----------------------------------------------------------------------------
def record(results: Sequence[ModelResult], *, repository: str, revisions: str, date: str,
           hunks_available: int, thresholds: Thresholds, seed: int) -> dict[str, Any]:
    best = cheapest(results)
    return {
        "version": RECORD_VERSION,
        "repository": repository,
        "revisions": revisions,
        "date": date,
        "analyzer": "editing_rtc",
        "hunks_available": hunks_available,
        "seed": seed,
        "thresholds": asdict(thresholds),
        "cheapest_qualified": best.model if best else None,
        "models": [r.to_dict() for r in results],
    }


def qualified_models(path: Path) -> set[str]:
    """The names of the models a record at `path` qualifies (RecordError when unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: no qualification record (run `rtcbot qualify`)") from None
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise RecordError(f"{path}: not JSON ({e})") from None
    return qualified_in(text, str(path))


def qualified_in(text: str, where: str) -> set[str]:
    """The names of the models a record's JSON `text` qualifies (RecordError when it is not one);
    `where` names it in the error."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise RecordError(f"{where}: not JSON ({e})") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        raise RecordError(f"{where}: not a qualification record (no 'models' list)")
    return {str(m["model"]) for m in models
            if isinstance(m, dict) and m.get("qualified") is True and isinstance(m.get("model"), str)}
