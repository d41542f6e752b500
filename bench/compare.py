"""This code's benchmark figures against another commit's, on one machine, in one sitting.

A figure in docs/benchmarks.md is a ratio within one run, but the machines these runs get are
not always of one kind (a day's CPU can cost twice another's per request), so "no figure worse
than before" is only honest when both commits are measured here, now, turn about. This runs
`bench.run_all --only ROW` in a checkout of the base commit (with its own virtualenv: an older
commit may need other packages) and in this one, alternately, `--repeat` times each, and writes
one table: each figure's headline numbers (those before the value's first parenthesis: "3.5 /
36.5 ms", "1.21×", "20 / 39 / 76") as the median of the runs, head / base, and whether the head
is worse by more than `--tolerance` where the row's target (or its words) say which way is
better. Rows only one side has are listed as such.

    .venv/bin/python -m bench.compare --base ../old --rows webhook_load,e2e_floor [--repeat 2]
        [--output docs/benchmarks-compared.md] [--runs DIR [--no-measure]]

`--runs DIR` keeps each run's document there as ROW-base-N.md and ROW-head-N.md; with
`--no-measure` the table is made from the documents already there.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import ROOT
from bench.run_all import BENCHMARKS, machine

NUMBER = re.compile(r"(?<![\w.-])-?\d[\d,]*(?:\.\d+)?(?![\w-])")  # not the digits of a name (jsoup-b286a31b26)
LOWER = ("wall", "latency", "p99", "p50", "seconds", " ms", "tokens", "requests", "cpu", "wait")
HIGHER = ("per minute", "per second", "/s", "throughput", "servable")


@dataclass(frozen=True)
class Figure:
    benchmark: str
    figure: str
    target: str
    numbers: tuple[float, ...]


def cells(line: str) -> list[str]:
    """A Markdown table row's cells (a `\\|` inside a cell is not a separator)."""
    parts = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [p.strip().replace("\\|", "|") for p in parts]


def headline(value: str) -> tuple[float, ...]:
    """The numbers before the value's first parenthesis (none of a name's digits)."""
    lead = value.split("(", 1)[0]
    return tuple(float(n.replace(",", "")) for n in NUMBER.findall(lead))


def figures(doc: str, names: Sequence[str]) -> dict[tuple[str, str], Figure]:
    """The table rows of `names` in a docs/benchmarks.md-shaped document, by (benchmark, figure)."""
    found: dict[tuple[str, str], Figure] = {}
    for line in doc.splitlines():
        if not line.startswith("| "):
            continue
        c = cells(line)
        if len(c) >= 4 and c[0] in names:
            found[(c[0], c[1])] = Figure(c[0], c[1], c[3], headline(c[2]))
    return found


def better(fig: Figure) -> str | None:
    """"lower" or "higher" where the target or the figure's words say which is better, else None."""
    if "≤" in fig.target or fig.target.startswith("<"):
        return "lower"
    if "≥" in fig.target or fig.target.startswith(">"):
        return "higher"
    words = fig.figure.lower()
    if any(w in words for w in HIGHER):
        return "higher"
    if any(w in words for w in LOWER):
        return "lower"
    return None


def medians(runs: Sequence[Figure]) -> tuple[float, ...] | None:
    """Each headline number's median over the runs; None when the runs disagree on their count."""
    counts = {len(r.numbers) for r in runs}
    if len(counts) != 1 or not runs[0].numbers:
        return None
    return tuple(statistics.median(r.numbers[i] for r in runs) for i in range(len(runs[0].numbers)))


def worse(base: tuple[float, ...], head: tuple[float, ...], direction: str | None, tolerance: float) -> bool | None:
    """Whether any headline number moved the wrong way by more than `tolerance`; None: no direction."""
    if direction is None:
        return None
    for b, h in zip(base, head, strict=True):
        if b == 0:
            continue
        ratio = h / b
        if (direction == "lower" and ratio > 1 + tolerance) or (direction == "higher" and ratio < 1 - tolerance):
            return True
    return False


def _numbers(xs: tuple[float, ...]) -> str:
    return " / ".join(f"{x:g}" for x in xs)


def table(base_runs: dict[tuple[str, str], list[Figure]], head_runs: dict[tuple[str, str], list[Figure]],
          tolerance: float) -> list[str]:
    lines = ["| benchmark | figure | base | head | head / base | worse by more than "
             f"{tolerance:.0%}? |", "|---|---|---|---|---|---|"]
    for key in sorted(set(base_runs) | set(head_runs), key=lambda k: (k[0], k[1])):
        b_runs, h_runs = base_runs.get(key, []), head_runs.get(key, [])
        name, figure = key
        if not b_runs or not h_runs:
            lines.append(f"| {name} | {figure} | {'—' if not b_runs else 'measured'} | "
                         f"{'—' if not h_runs else 'measured'} | only one side has it | — |")
            continue
        b, h = medians(b_runs), medians(h_runs)
        if b is None or h is None or len(b) != len(h):
            lines.append(f"| {name} | {figure} | (no headline number) | (no headline number) | — | — |")
            continue
        ratio = " / ".join(f"{y / x:.2f}" if x else "—" for x, y in zip(b, h, strict=True))
        verdict = worse(b, h, better(h_runs[0]), tolerance)
        said = "—" if verdict is None else ("**yes**" if verdict else "no")
        lines.append(f"| {name} | {figure} | {_numbers(b)} | {_numbers(h)} | {ratio} | {said} |")
    return lines


def measure(checkout: Path, row: str, out: Path) -> str:
    """One `bench.run_all --only row` in `checkout` with its own virtualenv; the document it wrote."""
    python = checkout / ".venv" / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "bench.run_all", "--only", row, "--output", str(out)],
                          cwd=checkout, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not out.is_file():
        raise SystemExit(f"bench.compare: {row} failed in {checkout} (exit {proc.returncode}): "
                         f"{proc.stderr.strip().splitlines()[-1:] or ['no output']}")
    return out.read_text(encoding="utf-8")


def commit(checkout: Path) -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True,
                          text=True, check=False)
    return proc.stdout.strip() or "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="a checkout of the base commit with its own .venv")
    ap.add_argument("--rows", required=True, help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each row on each side (default 2)")
    ap.add_argument("--tolerance", type=float, default=0.05, help="what counts as worse (default 0.05)")
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks-compared.md")
    ap.add_argument("--runs", type=Path, help="where each run's document is kept (default: a temporary folder)")
    ap.add_argument("--no-measure", action="store_true", help="make the table from the documents in --runs")
    args = ap.parse_args(argv)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in rows if r not in BENCHMARKS]
    if unknown:
        ap.error(f"unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})")
    if args.no_measure and args.runs is None:
        ap.error("--no-measure needs --runs DIR")
    if not args.no_measure and not (args.base / ".venv" / "bin" / "python").is_file():
        ap.error(f"--base {args.base}: no .venv/bin/python there (set the checkout up first)")
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    sides = {"base": args.base.resolve(), "head": ROOT}
    runs: dict[str, dict[tuple[str, str], list[Figure]]] = {"base": {}, "head": {}}
    counted: dict[tuple[str, str], int] = {}  # documents read per (row, side)
    with tempfile.TemporaryDirectory(prefix="rtcbot-compare-") as tmp:
        folder = args.runs or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for row in rows:
            for i in range(args.repeat):
                for side, checkout in sides.items():  # turn about, so a drift in the machine hits both
                    path = folder / f"{row}-{side}-{i + 1}.md"
                    if args.no_measure:
                        if not path.is_file():
                            continue
                        doc = path.read_text(encoding="utf-8")
                    else:
                        print(f"[compare] {row} {side} {i + 1}/{args.repeat}", file=sys.stderr)
                        doc = measure(checkout, row, path)
                    counted[(row, side)] = counted.get((row, side), 0) + 1
                    for key, fig in figures(doc, [row]).items():
                        runs[side].setdefault(key, []).append(fig)
    info = machine()
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks: this code against a base commit, on one machine",
        "",
        "Written by `python -m bench.compare` (its docstring says how); do not edit by hand. Each",
        "row ran in both checkouts turn about; each value is the median of the runs' headline numbers.",
        "",
        f"- base: {commit(sides['base'])}; head: {commit(ROOT)}; runs (base + head): "
        + ", ".join(f"{row} {counted.get((row, 'base'), 0)} + {counted.get((row, 'head'), 0)}" for row in rows),
        f"- date: {when}; CPU: {info['cpu']}; cores: {info['cores']}; memory: {info['memory']}",
        "",
        *table(runs["base"], runs["head"], args.tolerance),
        "",
    ]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines), encoding="utf-8")
    print(f"[compare] wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
