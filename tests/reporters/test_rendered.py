"""Reports read on GitHub's renderer rules (issue #43): every Markdown output — `--format
markdown`, the step summary, each check run's summary and text — parsed as CommonMark + GFM
(markdown-it-py's "gfm-like": tables, strikethrough, autolinks) has one table at most (the
overview), no stray list items (every item is one rtcbot wrote, with its own marker), and every
<details> fold closed around Markdown that still renders; what was not analysed is at most five
lines outside its fold. The browser test renders the Markdown with GitHub's own stylesheet
(tests/fixtures/github-markdown-css) in Chromium and leaves screenshots beside the dashboard's
in $RTCBOT_TEST_ARTIFACTS (default .artifacts/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from analyzers.code.diff import CODE_LANGUAGES, parse_diff
from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from reporters import check_run
from reporters.base import Target
from reporters.markdown import render_reports_markdown
from reporters.step_summary import RunOutcome, step_summary
from tests.support import FIXTURES, require

FIXTURE = FIXTURES / "prs" / "itsdangerous-uv-shaped.diff"
CSS = FIXTURES / "github-markdown-css" / "github-markdown-light.css"
TARGET = Target(repo="pallets/itsdangerous", number=7, head_sha="c" * 40, title="Use uv")


def skipped(hunk_item: str) -> list[Skipped]:
    """What EditingRTC (`hunk_item` "header") or Review ("line") skips of the fixture's change."""
    cs = parse_diff(FIXTURE.read_text())
    out = [Skipped(f.path, f.skipped or "", "policy", f.path) for f in cs.skipped]
    for fc, h in cs.hunks():
        if fc.language not in CODE_LANGUAGES:
            item = f"{fc.path} {h.header}" if hunk_item == "header" else f"{fc.path}:{h.span[0]}"
            out.append(Skipped(item, f"not code ({fc.language or 'unknown language'})", "policy", fc.path))
    return out


def reports() -> list[AnalyzerReport]:
    hunks = [Finding("editing_rtc", f"def f{i}(x):", f"EditingRTC {r:.2f}: First description: \"Uses a helper\"",
                     "src/itsdangerous/signer.py", 10 * i + 1, 10 * i + 4,
                     scores={"rtc": r, "rtc@3": r, "baseline": 0.0, "lift": r, "rtc_normalised": r, "rtc_chrf": 0.4,
                             "leaks": 0.0},
                     evidence={"descriptions": ["Uses a helper", "Calls hmac.digest"], "regenerated": ["x = 1\ny = 2"]})
             for i, r in enumerate((0.0, 0.67, 0.0))]
    comment = Finding("crscore", "comment by alice: nit", "nit: rename this", "src/itsdangerous/signer.py", 3, 3,
                      scores={"rel": 0.1, "con": 0.2, "comp": 0.05})
    fix = Finding("autofix", "python.weak-hash: fix proposed, verified by re-scan", "md5 is weak",
                  "src/itsdangerous/serializer.py", 41, 41, level="warning", scores={"fixed": 1.0},
                  fix=Fix("src/itsdangerous/serializer.py", 41, 41, "    return sha256(x)\n"))
    return [
        AnalyzerReport("editing_rtc", "EditingRTC", hunks, scores={"rtc": 0.22, "hunks": 3.0},
                       skipped=skipped("header")),
        AnalyzerReport("crscore", "CRScore", [comment], scores={"rel": 0.1, "con": 0.2, "comp": 0.05},
                       skipped=skipped("header")[:11]),
        AnalyzerReport("autofix", "AutoFix", [fix], scores={"findings": 1.0, "fixes_proposed": 1.0, "fixed": 1.0},
                       skipped=skipped("header")[:11]),
        AnalyzerReport("synthesis_rtc", "SynthesisRTC", not_run="no test command",
                       notes=["SynthesisRTC runs only where a test command is set."]),
        AnalyzerReport("review", "Review", scores={"hunks": 3.0, "candidates": 0.0, "unparsed": 8.0},
                       not_run="the model's answers were not usable: 0 of 8 in format", skipped=skipped("line")),
    ]


def outputs() -> dict[str, str]:
    rs = reports()
    out = {"markdown": render_reports_markdown(rs), "step summary": step_summary(TARGET, rs, RunOutcome())}
    for r in rs:
        run = check_run.render(r, target=TARGET)
        out[f"{r.title} summary"], out[f"{r.title} text"] = run.summary, run.text
    return out


def gfm() -> MarkdownIt:
    return MarkdownIt("gfm-like")  # CommonMark + GFM's tables, strikethrough and autolinks


def _folds(tokens: list[Token]) -> list[tuple[int, int]]:
    """(index of the opening, index of the closing) html_block of each top-level fold."""
    opened, out = [], []
    for i, t in enumerate(tokens):
        if t.type != "html_block":
            continue
        opened += [i] * t.content.count("<details")
        for _ in range(t.content.count("</details>")):
            assert opened, "a </details> with no fold open"
            out.append((opened.pop(), i))
    assert not opened, "a fold left open"
    return out


def structure_problems(markdown: str, tables: int) -> list[str]:
    tokens = gfm().parse(markdown)
    lines = markdown.splitlines()
    problems = []
    if (n := sum(t.type == "table_open" for t in tokens)) != tables:
        problems.append(f"{n} tables, not {tables}")
    for t in tokens:
        if t.type == "list_item_open":  # an item rtcbot wrote: "- " or "N. " starts its line
            assert t.map is not None
            line = lines[t.map[0]].lstrip()
            if t.markup not in ("-", ".") or not re.match(r"(- |\d+\. |-$|\d+\.$)", line):
                problems.append(f"stray list item: {line!r}")
        if t.type in ("html_block", "html_inline") and re.search(r"<details[^>]*\bopen\b", t.content):
            problems.append(f"a fold shown open: {t.content!r}")
    for start, end in _folds(tokens):
        if not any(t.type not in ("html_block",) for t in tokens[start + 1:end]):
            problems.append(f"a fold whose content is not Markdown: {tokens[start].content!r}")
    return problems


def not_analysed_lines(markdown: str) -> list[str]:
    """The lines of the "Not analysed" section outside its fold."""
    part = re.split(r"#{2,3} Not analysed\n", markdown, maxsplit=1)[1]
    part = re.split(r"\n#{1,3} |<details>", part, maxsplit=1)[0]
    return [ln for ln in part.splitlines() if ln.strip() and not ln.startswith(("To dismiss", "```"))]


def test_every_output_has_one_table_no_stray_items_and_closed_folds() -> None:
    for where, markdown in outputs().items():
        tables = 1 if where in ("markdown", "step summary") else 0  # the overview, and only it
        assert structure_problems(markdown, tables) == [], (where, markdown)


def test_what_was_not_analysed_is_five_lines_and_every_file_in_the_fold() -> None:
    cs = parse_diff(FIXTURE.read_text())
    for where in ("markdown", "step summary", "EditingRTC summary", "EditingRTC text"):
        markdown = outputs()[where]
        shown = not_analysed_lines(markdown)
        assert 1 <= len(shown) <= 5, (where, shown)
        fold = markdown.split("<summary>Every file not analysed (17)</summary>", 1)[1].split("</details>", 1)[0]
        for f in cs.files:
            expected = 1 if f.skipped or f.language not in CODE_LANGUAGES else 0
            assert fold.count(f"`{f.path}`") == expected, (where, f.path)
    assert "`.github/workflows/tests.yaml`: not code (yaml) — 3 hunks" in outputs()["markdown"]


def test_the_checks_catch_what_they_look_for() -> None:
    """The structure check fails on a second table, a "*" item, an open fold and a fold left open."""
    assert structure_problems("| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |\n", 1) == ["2 tables, not 1"]
    assert structure_problems("text\n* stray\n", 0)[0].startswith("stray list item")
    assert structure_problems("<details open><summary>x</summary>\n\n- a\n\n</details>\n", 0)[0] \
        .startswith("a fold shown open")
    with pytest.raises(AssertionError, match="left open"):
        structure_problems("<details><summary>x</summary>\n\n- a\n", 0)


@pytest.mark.browser
@pytest.mark.slow
def test_the_report_in_githubs_stylesheet_in_chromium() -> None:
    from tests.bot.dashboard.test_browser import artifacts, chromium

    exe = chromium()
    require(exe, "Chromium is not installed (Debian: apt-get install chromium; `make setup` does it as root)")
    from playwright.sync_api import sync_playwright

    css, out = CSS.read_text(encoding="utf-8"), artifacts()
    pages = {"report-markdown": outputs()["markdown"], "report-check-run": outputs()["EditingRTC summary"]}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1012, "height": 900})  # GitHub's content column
            for name, markdown in pages.items():
                html = gfm().render(markdown)
                page.set_content(f"<!doctype html><html><head><meta charset='utf-8'><style>{css}</style></head>"
                                 f"<body><article class='markdown-body' style='padding:32px'>{html}</article>"
                                 "</body></html>")
                assert page.locator("details").count() >= 1 and page.locator("details[open]").count() == 0
                assert page.locator("table").count() == (1 if name == "report-markdown" else 0)
                assert page.get_by_role("heading", name="Not analysed").is_visible()
                hidden = page.locator("details li").first
                assert not hidden.is_visible()  # folded away until a reader opens it
                assert page.evaluate("document.documentElement.scrollWidth") <= 1012
                page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                assert Path(out / f"{name}.png").stat().st_size > 10_000
        finally:
            browser.close()
