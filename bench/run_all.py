"""Run every benchmark and rewrite docs/benchmarks.md with one table (`make bench`).

    .venv/bin/python -m bench.run_all [--quick] [--only e2e_floor,incremental] [--output PATH]

Each benchmark is a module with `run(quick) -> list[Row]`; CRScore throughput
(`bench/crscore_throughput.py`, `run() -> dict`) is adapted here. A benchmark that fails
becomes a row saying why; the others still run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import platform
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import ROOT, Row, row

DOC = ROOT / "docs" / "benchmarks.md"
BENCHMARKS: tuple[str, ...] = (
    "e2e_floor",
    "e2e_wide",
    "cold_start",
    "incremental",
    "crscore_throughput",
    "webhook_load",
    "workers",
    "flood",
    "semgrep_scope",
    "sandbox_startup",
    "cost",
    "cli_start",
)


# --------------------------------------------------------------------------- machine
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine() -> dict[str, str]:
    mem = memory_gib()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu_model(),
        "cores": f"{usable} usable ({os.cpu_count()} online)",
        "memory": f"{mem:.1f} GiB" if mem is not None else "unknown",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "os": f"{platform.system()} {platform.release()}",
    }


# --------------------------------------------------------------------------- adapters
def crscore_rows(quick: bool) -> list[Row]:
    mod = importlib.import_module("bench.crscore_throughput")
    kwargs: dict[str, Any] = {"naive_rows": 20} if quick else {}
    try:
        res: dict[str, Any] = mod.run(**kwargs)
    except TypeError:  # a run() without that parameter
        res = mod.run()
    floor = float(res.get("floor", 5.0))
    ratio = float(res["ratio"])
    return [
        row("CRScore throughput: batched / naive reviews per second", f"{ratio:.2f}×",
            f"≥ {floor:g}×", ratio >= floor),
        row("CRScore batched reviews per second (informational)",
            f"{res.get('batched_reviews_per_s')} /s over {res.get('reviews')} reviews "
            f"(naive {res.get('naive_reviews_per_s')} /s over {res.get('naive_reviews')} at an even stride)"),
        row("CRScore tokens through the model per review (informational: distinct sentences, padding)",
            f"batched {res.get('batched_tokens_per_review')} ({_pct(res.get('batched_padding'))} padding), "
            f"naive {res.get('naive_tokens_per_review')} ({_pct(res.get('naive_padding'))} padding)"),
    ]


def _pct(x: object) -> str:
    return f"{float(x):.0%}" if isinstance(x, int | float) else "?"


def runner(name: str) -> Callable[[bool], list[Row]]:
    if name == "crscore_throughput":
        return crscore_rows
    mod = importlib.import_module(f"bench.{name}")
    return mod.run  # type: ignore[no-any-return]


def run_benchmarks(names: Sequence[str], quick: bool = False, echo: bool = True) -> list[tuple[str, list[Row], float]]:
    out: list[tuple[str, list[Row], float]] = []
    for name in names:
        if echo:
            print(f"[bench] {name} …", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            rows = runner(name)(quick)
        except Exception as e:  # one broken benchmark must not hide the others
            if echo:
                traceback.print_exc()
            rows = [row(name, f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}",
                        "", False)]
        took = time.perf_counter() - t0
        if echo:
            for r in rows:
                print(f"  {r['figure']}: {r['value']}  (target {r['target'] or '—'}, met {fmt_met(r['met'])})",
                      file=sys.stderr, flush=True)
                if r.get("details"):
                    print(r["details"], file=sys.stderr, flush=True)
        out.append((name, rows, took))
    return out


# --------------------------------------------------------------------------- document
def fmt_met(met: bool | None) -> str:
    return "—" if met is None else ("yes" if met else "**no**")


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(results: Sequence[tuple[str, list[Row], float]], info: dict[str, str], when: str,
           quick: bool) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`python -m bench.run_all`); do not edit by hand. Every figure is",
        "a ratio measured within one run (against a floor or a peer), because these machines are",
        "shared and noisy. Methods: the docstrings of the modules in `bench/`.",
        "",
        f"- date: {when}" + (" (quick run: smaller inputs)" if quick else ""),
        f"- CPU: {info['cpu']}",
        f"- cores: {info['cores']}",
        f"- memory: {info['memory']}",
        f"- Python: {info['python']} on {info['os']}",
        "",
        "| benchmark | figure | value | target | met? |",
        "|---|---|---|---|---|",
    ]
    for name, rows, _took in results:
        for r in rows:
            lines.append(f"| {name} | {_cell(r['figure'])} | {_cell(r['value'])} | "
                         f"{_cell(r['target'] or '—')} | {fmt_met(r['met'])} |")
    for name, rows, _took in results:
        for r in rows:
            if r.get("details"):
                lines += ["", f"## {name}: {r['figure']}", "", r["details"]]
    lines += ["", "Time each benchmark took (informational): " +
              ", ".join(f"{name} {took:.0f} s" for name, _rows, took in results) + ".", ""]
    return "\n".join(lines)


def _split(doc: str) -> tuple[list[str], list[list[str]], str]:
    """A document's lines before its first details section, its details sections (each from its
    "## " line) and its line of times."""
    lines = doc.rstrip("\n").splitlines()
    times = next((ln for ln in lines if ln.startswith("Time each")), "")
    lines = [ln for ln in lines if ln != times]
    first = next((i for i, ln in enumerate(lines) if ln.startswith("## ")), len(lines))
    sections: list[list[str]] = []
    for ln in lines[first:]:
        if ln.startswith("## "):
            sections.append([])
        sections[-1].append(ln)
    return lines[:first], sections, times


def _owner(line: str) -> str:
    """The benchmark a table row ("| name | …") or a details heading ("## name: …") belongs to."""
    m = re.match(r"^(?:\| |## )(\w+)(?: \||:)", line)
    return m.group(1) if m else ""


def merged(old: str, new: str, names: Sequence[str], when: str) -> str:
    """`old` (the document as it was) with the rows, details and times of `names` from `new` (a
    run of those alone), the other benchmarks' as they were measured, and a line saying which
    ran alone when: `--only` updates its rows in place."""
    head, sections, times = _split(old)
    new_head, new_sections, new_times = _split(new)
    ran = set(names)
    rows = [ln for ln in head if _owner(ln) not in ran]
    while rows and not rows[-1].strip():
        rows.pop()
    rows += [ln for ln in new_head if _owner(ln) in ran]
    # an earlier run alone stays said unless this run measured all of its benchmarks again
    rows = [ln for ln in rows if not ln.startswith("- run alone:")
            or not set(re.findall(r"\w+", ln.split(":", 1)[1].split(" on ", 1)[0])) <= ran]
    at = max((i for i, ln in enumerate(rows) if ln.startswith(("- Python:", "- run alone:"))), default=len(rows) - 1)
    rows.insert(at + 1, f"- run alone: {', '.join(names)} on {when} (`--only`; the other rows are of the date above)")
    kept = [sec for sec in sections if _owner(sec[0]) not in ran]
    fresh = [sec for sec in new_sections if _owner(sec[0]) in ran]
    spent = dict(re.findall(r"(\w+) (\d+ s)", times)) | dict(re.findall(r"(\w+) (\d+ s)", new_times))
    time_line = "Time each benchmark took (informational): " + ", ".join(f"{k} {v}" for k, v in spent.items()) + "."
    body = [ln for sec in [*kept, *fresh] for ln in sec]
    while body and not body[-1].strip():
        body.pop()
    return "\n".join([*rows, "", *body, "", time_line, ""]) if body else "\n".join([*rows, "", time_line, ""])


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run_all", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller inputs (a smoke run)")
    ap.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    ap.add_argument("--output", type=Path, default=DOC, help="the Markdown file to rewrite")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        ap.error(f"unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})")
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    results = run_benchmarks(names, quick=args.quick)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    text = render(results, machine(), when, args.quick)
    if args.only and args.output.is_file():  # the rows of the others stay as they were measured
        text = merged(args.output.read_text(encoding="utf-8"), text, names, when)
    args.output.write_text(text, encoding="utf-8")
    print(f"[bench] wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
