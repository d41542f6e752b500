"""bench/compare.py: a row's figures from two checkouts' documents, head against base."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.compare import Figure, better, cells, figures, headline, main, worse

DOC = """# Benchmarks

| benchmark | figure | value | target | met? |
|---|---|---|---|---|
| webhook_load | Webhook ack (sqlite, 200/s for 30 s): p50 / p99 latency to 202 | {p50} / {p99} ms (7 opened) \
| p99 ≤ 25 ms | yes |
| workers | Many workers: PRs per minute with 1 / 2 / 4 workers | {w1} / {w2} / {w4} (1: 1.00×) | — | — |
| workers | Many workers: throughput of 4 workers / 1 worker | {r}× | ≥ 3.5× | yes |
| cost | Cost: prompt tokens \\| all | 31,275 tokens (a \\| b) | — | — |
"""


def doc(p50: float = 2, p99: float = 9, w1: float = 20, w2: float = 39, w4: float = 76, r: float = 3.8) -> str:
    return DOC.format(p50=p50, p99=p99, w1=w1, w2=w2, w4=w4, r=r)


def test_a_rows_headline_numbers_are_those_before_its_first_parenthesis() -> None:
    assert headline("3.5 / 36.5 ms from the due time (sent 200/s, 68 opened)") == (3.5, 36.5)
    assert headline("1.21× (median 1.18×)") == (1.21,)
    assert headline("31,275 tokens (a)") == (31275.0,)
    assert headline("median 0.00 s, max 0.04 s on jsoup-b286a31b26; on 0 of 11 PRs") == (0.0, 0.04, 0.0, 11.0)
    assert cells(r"| cost | a \| b | 1 |") == ["cost", "a | b", "1"]


def test_figures_are_read_per_benchmark_and_which_way_is_better_from_the_target_or_the_words() -> None:
    found = figures(doc(), ["webhook_load", "workers"])
    assert set(found) == {("webhook_load", "Webhook ack (sqlite, 200/s for 30 s): p50 / p99 latency to 202"),
                          ("workers", "Many workers: PRs per minute with 1 / 2 / 4 workers"),
                          ("workers", "Many workers: throughput of 4 workers / 1 worker")}
    directions = {k[1][:20]: better(f) for k, f in found.items()}
    assert directions == {"Webhook ack (sqlite,": "lower", "Many workers: PRs pe": "higher",
                          "Many workers: throug": "higher"}
    assert better(Figure("x", "how many rows", "", (1.0,))) is None


def test_worse_is_past_the_tolerance_in_the_wrong_direction_only() -> None:
    assert worse((10.0,), (10.4,), "lower", 0.05) is False
    assert worse((10.0,), (10.6,), "lower", 0.05) is True
    assert worse((10.0,), (5.0,), "lower", 0.05) is False
    assert worse((10.0,), (9.4,), "higher", 0.05) is True
    assert worse((10.0,), (20.0,), None, 0.05) is None


def test_the_table_takes_each_sides_median_and_flags_what_got_worse(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for i, (b99, h99) in enumerate([(9, 9.2), (10, 30), (11, 31)], start=1):
        (runs / f"webhook_load-base-{i}.md").write_text(doc(p99=b99), encoding="utf-8")
        (runs / f"webhook_load-head-{i}.md").write_text(doc(p99=h99), encoding="utf-8")
    (runs / "workers-base-1.md").write_text(doc(r=3.8), encoding="utf-8")
    (runs / "workers-head-1.md").write_text(doc(r=3.7), encoding="utf-8")
    out = tmp_path / "compared.md"
    assert main(["--base", str(tmp_path), "--rows", "webhook_load,workers", "--repeat", "3", "--runs", str(runs),
                 "--no-measure", "--output", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    p99_line = next(ln for ln in text.splitlines() if "p50 / p99" in ln)
    assert "| 2 / 10 | 2 / 30 | 1.00 / 3.00 | **yes** |" in p99_line  # medians: base 10, head 30
    ratio_line = next(ln for ln in text.splitlines() if "throughput of 4" in ln)
    assert ratio_line.endswith("| 3.8 | 3.7 | 0.97 | no |")


def test_bad_arguments_are_one_message_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--base", str(tmp_path), "--rows", "nonsense"])
    assert e.value.code == 2 and "unknown benchmark 'nonsense'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["--base", str(tmp_path), "--rows", "workers"])
    assert e.value.code == 2 and "no .venv/bin/python there" in capsys.readouterr().err
