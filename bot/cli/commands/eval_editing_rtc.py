"""`rtcbot eval editing-rtc DATASET`: EditingRTC over a dataset of edits, resumable."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from analyzers.code.checkout_files import (
    CheckoutFileError,
    MiB,
    append_text,
    check_writable,
    read_text,
    split,
)
from analyzers.code.diff import DiffError, parse_github_files
from analyzers.editing_rtc.analyzer import EditingRTC
from analyzers.llm.client import BudgetExceeded, LLMClient, Usage
from analyzers.llm.local import ALIAS
from analyzers.rtc.leak import leak_rate
from analyzers.rtc.round_trip import aggregate
from bot.cli.commands._common import figure_table, plot_option, read_jsonl, save_plot
from bot.cli.commands._datasets import DatasetArgument
from bot.cli.llm_options import llm_options, pop_llm_settings
from bot.cli.progress import live
from bot.core.llm import llm_factory
from reporters.eval_plots import rtc_lift_chart


def edit_of(obj: dict[str, Any]) -> tuple[str, str] | None:
    """(old, new) from the reference's format or from a one-hunk review diff."""
    if "code_before_edit" in obj and "code_after_edit" in obj:
        return str(obj["code_before_edit"]), str(obj["code_after_edit"])
    if "code_change" in obj:
        try:
            cs = parse_github_files([{"filename": "snippet", "patch": str(obj["code_change"])}], ignore=())
        except DiffError:
            return None
        hunks = [h for _, h in cs.hunks()]
        if not hunks:
            return None
        return "".join(h.old_code for h in hunks), "".join(h.new_code for h in hunks)
    return None


def item_key(old: str, new: str) -> str:
    return hashlib.sha256(f"{old}\0{new}".encode()).hexdigest()[:24]


def default_out(data: Path, model: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model)
    return Path(".rtcbot") / "eval" / f"editing-rtc-{data.stem}-{safe}.jsonl"


MAX_RESULTS_BYTES = 256 * MiB  # the bundled 500 items take a few MiB


def load_done(out: Path) -> dict[str, dict[str, Any]]:
    """The items a results file holds already (a file in a checkout by a fixed name: no link
    followed, a regular file, capped; analyzers/code/checkout_files.py)."""
    done: dict[str, dict[str, Any]] = {}
    try:
        text = read_text(*split(out), limit=MAX_RESULTS_BYTES, name=str(out))
    except CheckoutFileError as e:
        raise click.BadParameter(str(e), param_hint="--out") from None
    if text is not None:
        for line in text.splitlines():
            try:
                rec = json.loads(line)
                done[rec["key"]] = rec
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut by an interrupted run: that item is redone
    return done


Item = tuple[str, Any, str, str]  # (key, id, old, new)


def usable_items(data: Path, limit: int | None) -> tuple[list[Item], int]:
    """The dataset's edits that EditingRTC can score (at most `limit`), and how many lines it
    skipped (no edit, or one that changes nothing)."""
    items: list[Item] = []
    unusable = 0
    for no, obj in read_jsonl(data):
        edit = edit_of(obj)
        if edit is None or edit[0] == edit[1]:
            unusable += 1
            continue
        items.append((item_key(*edit), obj.get("id", no), *edit))
        if limit and len(items) >= limit:
            break
    if not items:
        raise click.ClickException(f"{data}: no usable items (need code_before_edit/code_after_edit or code_change)")
    return items, unusable


def resume(out: Path) -> dict[str, dict[str, Any]]:
    """The results file's items so far; refused now, before any request, when it cannot be
    written (a link, not a regular file), rather than at the first result."""
    done = load_done(out)
    try:
        check_writable(*split(out), name=str(out))
    except CheckoutFileError as e:
        raise click.BadParameter(str(e), param_hint="--out") from None
    return done


def score_items(llm: LLMClient, todo: list[Item], done: dict[str, dict[str, Any]], out: Path,
                concurrency: int) -> str | None:
    """Scores `todo` on up to 8 threads, each result appended to `out` (and put in `done`) as it
    comes; the budget's message when it stopped the run early, None when all were scored."""
    analyzer = EditingRTC()
    lock = threading.Lock()
    stopped: str | None = None

    def one(item: Item) -> None:
        key, ident, old, new = item
        trip, scores = analyzer.score(llm, old, new)
        rec = {"key": key, "id": ident, "scores": scores,
               "descriptions": trip.forward, "leaks": trip.leaks,
               "regenerated": [r[0] if r else "" for r in trip.backward],
               "baseline_regenerated": trip.baseline[0] if trip.baseline else ""}
        with lock:
            append_text(*split(out), json.dumps(rec, ensure_ascii=False) + "\n", name=str(out))
            done[key] = rec

    with live(lambda: llm.usage) as display:
        advance = display.step("EditingRTC items", total=len(todo))
        with ThreadPoolExecutor(max_workers=max(1, min(concurrency, 8))) as ex:
            futures = [ex.submit(one, it) for it in todo]
            for f in futures:
                f.add_done_callback(lambda _f: advance(1))
            finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for f in finished:
                exc = f.exception()
                if isinstance(exc, BudgetExceeded):
                    stopped = str(exc)
                    for g in futures:
                        g.cancel()
                elif exc is not None:
                    for g in futures:
                        g.cancel()
                    raise exc
    return stopped


def figures(results: list[dict[str, Any]], usage: Usage | None) -> list[tuple[str, str]]:
    """The closing table's rows: the aggregate scores, the leak rate and the LLM's usage."""
    agg = aggregate([r["scores"] for r in results])
    checked = [r for r in results if "leaks" in r["scores"]]  # records of older runs were not checked
    agg["leak_rate"] = leak_rate([r["scores"]["leaks"] for r in checked],
                                 [float(len(r["descriptions"])) for r in checked])
    return [
        ("items", str(len(results))),
        ("RTC-avg", f"{agg.get('rtc', 0):.3f}"),
        ("RTC@3", f"{agg.get('rtc@3', 0):.3f}"),
        ("baseline", f"{agg.get('baseline', 0):.3f}"),
        ("lift", f"{agg.get('lift', 0):+.3f}"),
        ("RTC, whitespace-normalised", f"{agg.get('rtc_normalised', 0):.3f}"),
        ("chrF", f"{agg.get('rtc_chrf', 0):.3f}"),
        ("leak rate (descriptions carrying the code)",
         f"{agg['leak_rate']:.3f} of {sum(len(r['descriptions']) for r in checked)}"),
        ("requests", str(usage.requests if usage else 0)),
        ("tokens", str(usage.tokens if usage else 0)),
        ("cache hits", str(usage.cache_hits if usage else 0)),
    ]


@click.command("editing-rtc")
@click.argument("data", type=DatasetArgument("editing-rtc"), metavar="DATASET")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N usable items.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Results file (JSONL); a re-run skips the items already in it.")
@plot_option
@llm_options
def command(data: Path, limit: int | None, out: Path | None, plot: Path | None, **kwargs: Any) -> None:
    """EditingRTC over DATASET (fields code_before_edit/code_after_edit, or code_change).

    DATASET: a JSON-lines file, or the bundled `codereviewer-validation` (see `rtcbot eval --list`)."""
    settings = pop_llm_settings(kwargs)
    items, unusable = usable_items(data, limit)
    out = out or default_out(data, settings.model or ALIAS)
    done = resume(out)
    todo = [it for it in items if it[0] not in done]
    llm = llm_factory(settings)() if todo else None
    stopped = score_items(llm, todo, done, out, settings.max_concurrency) if llm is not None else None
    results = [done[k] for k, *_ in items if k in done]
    save_plot(plot, lambda: rtc_lift_chart([(str(r["id"]), r["scores"]["rtc"], r["scores"]["baseline"])
                                            for r in results], f"{data.name} with {settings.model or ALIAS}", "RTC"))
    usage = llm.usage if llm is not None else None
    Console().print(figure_table(f"EditingRTC on {data.name}", figures(results, usage)))
    skipped = len(items) - len(todo)
    click.echo(f"results: {out} ({skipped} item(s) reused from an earlier run"
               f"{f', {unusable} unusable line(s) skipped' if unusable else ''})")
    if stopped:
        click.echo(f"stopped early: {stopped}; re-run to continue", err=True)
        sys.exit(3)
