"""`rtcbot qualify`: which models re-create this repository's own edits (EditingRTC)?

The hunks of the last N first-parent commits (or of BASE..HEAD) are sampled — stratified by
language and hunk size, seeded, at most `--max-hunks` — and scored with EditingRTC by each
`--model`. Each model gets RTC, RTC@3, baseline, lift with a bootstrap interval over hunks,
requests, tokens, wall time, cost (with `--price-per-1k`) and a verdict; the cheapest model
that qualifies is named, and the whole result is written as the repository's qualification
record (`--output`, default `.rtcbot/qualification.json` in the checkout), which `rtcbot
review` reads under `require_qualified: true`. Re-runs draw the same hunks and send the same
requests, so they are served from the LLM cache.

Its parts: the hunks sampled from git (bot/cli/commands/_qualify_history.py) and the verdicts
stored in the App's database with `--database` (_qualify_store.py); what it prints is here.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from analyzers.code.checkout_files import CheckoutFileError, check_writable, split, write_text
from analyzers.editing_rtc.analyzer import EditingRTC, EditingRTCConfig
from analyzers.llm.client import BudgetExceeded, LLMClient, LLMError, LLMSettings
from analyzers.qualify import Candidate, ModelResult, Thresholds, record, summarise, verdict_of
from bot.cli.commands._common import bar, plot_option, save_plot
from bot.cli.commands._qualify_history import repository_name, sample_history
from bot.cli.commands._qualify_store import app_store, store_results
from bot.core.settings import llm_settings
from bot.shell.commands import options
from reporters.eval_plots import qualify_chart

RECORD_PATH = Path(".rtcbot") / "qualification.json"  # bot/core/qualification.py reads it


# -- what it prints: the record as JSON, Markdown or a table, each model's verdict, and a note on
# stderr for each model whose budget left sampled hunks unscored --------------------------------
def _ci(r: ModelResult) -> str:
    return f"[{r.lift_low:+.3f}, {r.lift_high:+.3f}]"


def _fmt_share(r: ModelResult) -> str:
    return "n/a" if r.format_share is None else f"{r.format_share:.0%}"


def _verdict(r: ModelResult) -> str:
    return "qualified" if r.qualified else "not qualified: " + "; ".join(r.reasons)


COLUMNS = ("model", "hunks", "RTC", "RTC@3", "baseline", "lift", "lift 95% CI", "format", "requests",
           "tokens", "wall s", "cost", "qualified")


def _row(r: ModelResult) -> list[str]:
    return [r.model, str(r.hunks), f"{r.rtc:.3f}", f"{r.rtc_at_3:.3f}", f"{r.baseline:.3f}", f"{r.lift:+.3f}", _ci(r),
            _fmt_share(r), str(r.requests), str(r.tokens), f"{r.wall_s:.1f}",
            "" if r.cost is None else f"{r.cost:.4f}", "yes" if r.qualified else "no"]


def _summary(rec: dict[str, Any]) -> str:
    best = rec["cheapest_qualified"]
    return f"cheapest qualified model: {best}" if best else "no model qualified"


def markdown(rec: dict[str, Any], results: list[ModelResult]) -> str:
    lines = [f"### rtcbot qualify: {rec['repository']} ({rec['revisions']}, "
             f"{results[0].hunks + results[0].not_scored if results else 0} of {rec['hunks_available']} hunks)", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _row(r)) + " |" for r in results]
    lines += [""] + [f"- {r.model}: {_verdict(r)}" for r in results]
    lines += ["", f"**{_summary(rec)}**",
              "", "format: the share of the model's answers in the expected format (a description without code; "
                  "code in a fenced block)."]
    return "\n".join(lines)


def table(rec: dict[str, Any], results: list[ModelResult]) -> Table:
    t = Table(title=f"rtcbot qualify: {rec['repository']} ({rec['revisions']})",
              caption=_summary(rec) + " · format: answers in the expected format")
    for col in COLUMNS:
        t.add_column(col, justify="left" if col == "model" else "right", no_wrap=col != "model")
    for r in results:
        t.add_row(*_row(r))
    return t


def print_results(fmt: str, rec: dict[str, Any], results: list[ModelResult]) -> None:
    """The record as JSON, Markdown or a table with each verdict; notes of budgets spent on stderr."""
    if fmt == "json":
        click.echo(json.dumps(rec, ensure_ascii=False))
    elif fmt == "markdown":
        click.echo(markdown(rec, results))
    else:
        out = Console()
        if not out.is_terminal:  # a pipe or a log: the whole table, not squeezed to 80 columns
            out = Console(width=200)
        out.print(table(rec, results))
        for r in results:
            out.print(f"{r.model}: {_verdict(r)}", markup=False, highlight=False)
    for r in results:
        if r.not_scored:
            click.echo(f"note: {r.model}: {r.not_scored} sampled hunk(s) not scored (budget spent)", err=True)


# -- models ------------------------------------------------------------------------------------
def parse_model(spec: str, base_url: str | None) -> tuple[str | None, str]:
    """`NAME` (at --llm-base-url) or `URL#NAME` → (base URL, name)."""
    url, sep, name = spec.rpartition("#")
    if sep and url.startswith(("http://", "https://")):
        if not name:
            raise click.BadParameter(f"{spec!r}: no model name after '#'", param_hint="--model")
        return url, name
    if not spec.strip():
        raise click.BadParameter("empty model name", param_hint="--model")
    return base_url, spec


def parse_prices(specs: tuple[str, ...]) -> tuple[float | None, dict[str, float]]:
    """`PRICE` (every model) and `MODEL=PRICE` → (the default, per model)."""
    default: float | None = None
    per: dict[str, float] = {}
    for spec in specs:
        name, sep, value = spec.rpartition("=")
        try:
            price = float(value)
        except ValueError:
            raise click.BadParameter(f"expected PRICE or MODEL=PRICE, got {spec!r}",
                                     param_hint="--price-per-1k") from None
        if price < 0 or price != price:
            raise click.BadParameter(f"{spec!r}: a price must be a non-negative number", param_hint="--price-per-1k")
        if sep:
            per[name] = price
        else:
            default = price
    return default, per


def qualify_model(llm: LLMClient, sample: list[Candidate], analyzer: EditingRTC,
                  on_hunk: Callable[[], None]) -> tuple[list[dict[str, float]], int, float | None]:
    """Per-hunk scores of the sample, how many hunks a budget cut off, and the share of the
    model's answers in the expected format (None: no answer)."""
    tally = Counter[bool]()
    lock = threading.Lock()

    def answered(well_formed: bool) -> None:
        with lock:
            tally[well_formed] += 1

    def one(c: Candidate) -> dict[str, float] | None:
        try:
            return analyzer.score(llm, c.old, c.new, c.language, answered)[1]
        except BudgetExceeded:
            return None
        finally:
            on_hunk()

    res = llm.map(one, sample)
    total = tally[True] + tally[False]
    return [r for r in res if r is not None], sum(r is None for r in res), tally[True] / total if total else None


# -- the run -----------------------------------------------------------------------------------------
def record_file(repo: Path, output: Path | None) -> tuple[Path, str, str]:
    """(root, path under it, the option to name in an error) of the record; refused now, when
    a link stands in its place, before spending on the run."""
    root, rel = split(output) if output is not None else (repo, RECORD_PATH.as_posix())
    hint = "--output" if output is not None else "--repo"
    try:
        check_writable(root, rel)
    except CheckoutFileError as e:
        raise click.BadParameter(str(e), param_hint=hint) from None
    return root, rel, hint


def write_record(root: Path, rel: str, hint: str, rec: dict[str, Any]) -> Path:
    """The record written, never through a link the repository committed (analyzers/code/checkout_files.py)."""
    try:
        return write_text(root, rel, json.dumps(rec, indent=2, ensure_ascii=False) + "\n")
    except CheckoutFileError as e:
        raise click.BadParameter(str(e), param_hint=hint) from None
    except OSError as e:
        raise click.ClickException(f"cannot write {root / rel}: {e.strerror}") from None


@dataclass(frozen=True)
class Trial:
    """The same test for every model: the sampled hunks, EditingRTC's settings, the thresholds,
    the seed, the prices, and how the models are asked (key, budget per model, cache)."""

    sample: list[Candidate]
    cfg: EditingRTCConfig
    thresholds: Thresholds
    seed: int
    prices: tuple[float | None, dict[str, float]]
    api_key: str | None
    max_requests: int | None
    max_tokens_total: int | None
    concurrency: int
    no_cache: bool

    def settings(self, url: str | None, name: str | None) -> LLMSettings:
        settings = llm_settings(base_url=url, model=name, api_key=self.api_key, max_requests=self.max_requests,
                                max_tokens_total=self.max_tokens_total, max_concurrency=self.concurrency)
        if self.no_cache:
            settings.cache_path = None
        return settings


def qualify_one(trial: Trial, url: str | None, name: str | None, bar_: Progress) -> ModelResult:
    """One model's figures and verdict on the trial (an LLM that fails is a result with its reason)."""
    settings = trial.settings(url, name)
    label = name or settings.model or "embedded"
    task = bar_.add_task(label, total=len(trial.sample))
    t0 = time.monotonic()
    try:
        from analyzers.llm.local import client_from_settings

        llm = client_from_settings(settings)
        label = name or llm.model
        scores, cut, share = qualify_model(llm, trial.sample, EditingRTC(trial.cfg), lambda: bar_.advance(task))
    except LLMError as e:
        res = ModelResult(label, url)
        res.reasons = [str(e)]
        return res
    default_price, prices_by_model = trial.prices
    res = summarise(label, llm.base_url if url else None, scores, seed=trial.seed,
                    requests=llm.usage.requests, tokens=llm.usage.tokens,
                    cache_hits=llm.usage.cache_hits, wall_s=time.monotonic() - t0,
                    price_per_1k=prices_by_model.get(label, default_price), not_scored=cut, format_share=share)
    return verdict_of(res, trial.thresholds)


def qualify_all(trial: Trial, specs: list[tuple[str | None, str | None]]) -> list[ModelResult]:
    err = Console(stderr=True)
    with bar("{task.description}", err, disable=not err.is_terminal) as progress:
        return [qualify_one(trial, url, name, progress) for url, name in specs]


# -- the command -------------------------------------------------------------------------------------
qualify_options = options(
    click.option("--git", "git_range", metavar="BASE..HEAD", default=None,
                 help="The commits to sample (first parents)."),
    click.option("--last", type=click.IntRange(min=1), default=None,
                 help="The last N first-parent commits of HEAD (default 100 when --git is not given)."),
    click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
                 help="The git checkout."),
    click.option("--model", "models", multiple=True, metavar="NAME|URL#NAME",
                 help="A model to qualify (repeatable): NAME at --llm-base-url, or URL#NAME. "
                      "Default: RTCBOT_LLM_MODEL, else the embedded model."),
    click.option("--llm-base-url", envvar="RTCBOT_LLM_BASE_URL", default=None, metavar="URL",
                 help="OpenAI-compatible endpoint of the NAME models."),
    click.option("--api-key", envvar=["RTCBOT_LLM_API_KEY", "OPENAI_API_KEY"], default=None, show_envvar=False,
                 help="API key (env RTCBOT_LLM_API_KEY or OPENAI_API_KEY)."),
    click.option("--max-hunks", type=click.IntRange(min=1), default=200, show_default=True,
                 help="Hunks sampled (stratified by language and hunk size)."),
    click.option("--seed", type=click.IntRange(min=0), default=1234, show_default=True,
                 help="Sampling and bootstrap seed."),
    click.option("--min-lift-lower", type=float, default=0.0, show_default=True,
                 help="A model qualifies when lift's 95% lower bound is above this."),
    click.option("--min-rtc", type=click.FloatRange(0, 1), default=None, help="…and its mean RTC is at least this."),
    click.option("--price-per-1k", "prices", multiple=True, metavar="PRICE|MODEL=PRICE",
                 help="Price per 1000 tokens, for every model or one (repeatable): adds cost."),
    click.option("--max-requests", type=click.IntRange(min=1), default=None, help="Request budget per model."),
    click.option("--max-tokens", "max_tokens_total", type=click.IntRange(min=1), default=None,
                 help="Token budget per model."),
    click.option("--concurrency", type=click.IntRange(min=1, max=64), default=4, show_default=True),
    click.option("--no-cache", is_flag=True, help="Do not read or write the LLM cache."),
    click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
                 show_default=True),
    click.option("--json", "as_json", is_flag=True, help="Same as --format json (one line)."),
    click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
                 help="The qualification record (default: .rtcbot/qualification.json in --repo)."),
    click.option("--database", "database_url", metavar="URL", default=None,
                 help="Also store each model's verdict in the GitHub App's database (a SQLAlchemy URL; "
                      "`--database app` uses the App's DATABASE_URL / RTCBOT_DATABASE_URL), where the App "
                      "reads it under `require_qualified: true`."),
    click.option("--repo-name", default=None, metavar="OWNER/NAME",
                 help="The repository's name on GitHub for --database (default: from the origin remote)."),
)


@click.command("qualify")
@qualify_options
@plot_option
def command(git_range: str | None, last: int | None, repo: Path, models: tuple[str, ...], llm_base_url: str | None,
            api_key: str | None, max_hunks: int, seed: int, min_lift_lower: float, min_rtc: float | None,
            prices: tuple[str, ...], max_requests: int | None, max_tokens_total: int | None, concurrency: int,
            no_cache: bool, fmt: str, as_json: bool, output: Path | None, database_url: str | None,
            repo_name: str | None, plot: Path | None) -> None:
    """Qualify models on this repository's own history with EditingRTC.

    Exit 0 when at least one model qualifies, 1 when none does."""
    if git_range is not None and last is not None:
        raise click.UsageError("give either --git BASE..HEAD or --last N")
    if not repo.is_dir():
        raise click.ClickException(f"--repo {repo}: no such directory")
    root, rel, hint = record_file(repo, output)
    app = app_store(database_url, repo_name, repo)
    price_list = parse_prices(prices)
    specs: list[tuple[str | None, str | None]] = ([parse_model(m, llm_base_url) for m in models]
                                                  or [(llm_base_url, None)])
    thresholds = Thresholds(min_lift_lower=min_lift_lower, min_rtc=min_rtc)
    cfg = EditingRTCConfig()
    revisions, available, sample = sample_history(repo, git_range, last or 100, max_hunks, seed, cfg.max_hunk_chars)
    trial = Trial(sample, cfg, thresholds, seed, price_list, api_key, max_requests, max_tokens_total, concurrency,
                  no_cache)
    results = qualify_all(trial, specs)
    rec = record(results, repository=repository_name(repo), revisions=revisions,
                 date=datetime.now(UTC).isoformat(timespec="seconds"), hunks_available=available,
                 thresholds=thresholds, seed=seed)
    target = write_record(root, rel, hint, rec)
    save_plot(plot, lambda: qualify_chart([(r.model, r.lift, r.lift_low, r.lift_high, r.qualified) for r in results],
                                          thresholds.min_lift_lower, str(rec.get("repository") or repo.name),
                                          len(sample)))
    if app is not None:
        owner_name, store = app
        store_results(store, owner_name, results, rec)
        click.echo(f"stored in the App's database for {owner_name}", err=True)
    print_results("json" if as_json else fmt, rec, results)
    click.echo(f"record: {target}", err=True)
    sys.exit(0 if rec["cheapest_qualified"] else 1)
