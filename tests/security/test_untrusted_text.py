"""One rule for text rtcbot did not write (reporters/untrusted.py), held to what a CommonMark
(+ GFM tables) parser makes of it: no live mention, no link hiding its destination, no image,
no raw HTML, no code block closed early, no block of rtcbot's own closed by it; and the reader
still sees the characters that were written."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from reporters import pr_view, readable, unanalysed
from reporters.check_run import cut, render
from reporters.markdown import render_evidence_markdown, render_reports_markdown, render_text
from reporters.pr_review import Suggestion, comment_body, key_of
from reporters.untrusted import JOINER, code, fenced, inert, plain, unclosed
from reporters.workflow_commands import workflow_commands
from tests import hypothesis_profiles
from tests.security.markdown_audit import MENTION, audit, parser, texts

HOST = "evil.example"
HOSTILE = (
    "@octo-org/security-team @alice please approve. [the docs](https://evil.example/phish) "
    "![](https://evil.example/pixel.png) <img src=\"https://evil.example/i.png\"> "
    "<a href=\"https://evil.example/a\">here</a> <https://evil.example/auto> &#64;bob &commat;carol "
    "</details></summary> ``` ```` | a | b | [x][r] ![y][r]"
)
HOSTILE_LINES = "\n".join([
    "[r]: https://evil.example/ref",
    "</details>",
    "<details><summary>rtcbot says: all good</summary>",
    "<script>alert(1)</script>",
    "# Verified by rtcbot",
    "> **Note:** @org/admins approved",
    "1. [click](https://evil.example/1)",
    "- ![img][r]",
    "    indented <b>code</b>",
    "```",
    "`````",
    "| cell | cell |",
    "|---|---|",
    "Setext",
    "===",
    "<!-- rtcbot:suggestion:0123456789abcdef -->",
    "x@y.example wrote RTC@3 &amp; a<b @",
])
# what Markdown makes of characters: the ones that mean something, letters, spaces, line breaks
PIECES = [*"@/[]()!<>&#;*_`~|$\\-+=.:0123456789abcdefxyz \n\t\r\"'", "evil.example", "https://", "<img src=x>",
          "</details>", "<a href=", "&#64;", "```", "@org/team", "\n    ", "\n1. ", "\n- ", "\n> "]
MARKUP = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def visible(text: str) -> str:
    """What `inert(text)` should read as: the same characters on one line, ends trimmed."""
    return " ".join(ln.strip() for ln in re.split(r"\r\n|\r|\n", text) if ln.strip())


# ---------------------------------------------------------------------------- each rule
def test_hostile_text_is_inert_inline_and_as_a_block() -> None:
    for text in (HOSTILE, HOSTILE_LINES, HOSTILE + "\n" + HOSTILE_LINES):
        assert not audit(text, HOST).clean, "the fixture is hostile when rendered live"
        for out in (inert(text), inert(text, block=True)):
            assert audit(out, HOST).clean, (audit(out, HOST), out)
            assert "<" + "details" not in out.replace("&lt;details", "")


def test_the_reader_sees_what_was_written() -> None:
    [seen] = texts(inert(HOSTILE))
    assert seen.replace(JOINER, "") == HOSTILE
    lines = texts(inert(HOSTILE_LINES, block=True))
    seen_lines = [ln.strip().replace(JOINER, "") for t in lines for ln in t.split("\n")]
    assert seen_lines == [ln.strip() for ln in HOSTILE_LINES.splitlines()]


def _links(markdown: str) -> list[tuple[str, str]]:
    """Each link of `markdown` as (its destination, its text as shown)."""
    out = []
    for block in parser().parse(markdown):
        kids = block.children or []
        for i, t in enumerate(kids):
            if t.type == "link_open":
                out.append((str(t.attrGet("href")), kids[i + 1].content))
    return out


def test_a_bare_url_stays_a_link_unless_an_escape_would_spoil_it() -> None:
    """Autolinks are read from the raw source (GitHub's and markdown-it's linkify alike), so an
    escape or a word joiner inside a URL would show in its text and spoil its destination."""
    for url in ("https://example.org/plain/path?q=1", "http://example.org", "www.example.org/docs"):
        out = inert(f"see {url} for more")
        assert out == f"see {url} for more"
        [(href, shown)] = _links(out)
        assert shown == url and href.endswith(url)
    for url in ("https://0/[", "https://example.org/foo_bar", "https://example.org/a*b*", "www.example.org/a_b",
                "https://example.org/?a=1&b=2", "https://github.com/o/r/issues/1#12", "http://example.org/@bob",
                "ftp://example.org/a\\b", "HTTPS://example.org/~x~"):
        out = inert(f"({url}) and more")
        assert JOINER in out.split(" ")[0]
        assert all("\\" not in shown and JOINER not in href for href, shown in _links(out)), (url, _links(out))
        [seen] = texts(out)
        assert seen.replace(JOINER, "") == f"({url}) and more", seen


@settings(max_examples=hypothesis_profiles.examples(150), deadline=None)
@given(MARKUP)
@example("https://0/[")  # an autolink read from the raw source showed the escape: "https://0/\\["
def test_any_text_is_inert_and_literal_in_a_paragraph_and_a_table_cell(text: str) -> None:
    out = inert(text)
    assert "\n" not in out and "\r" not in out
    assert audit(out, HOST).clean
    if visible(text):
        assert [t.replace(JOINER, "") for t in texts(out)] == [visible(text)]
    table = f"| item | value |\n|---|---|\n| x | {out} |\n"
    tokens = parser().parse(table)
    assert [t.type for t in tokens].count("td_open") == 2  # one row, its two cells: nothing split it
    assert audit(table, HOST).clean
    cells = [t for t in texts(table)]
    assert cells[-1].replace(JOINER, "") == visible(text)


@settings(max_examples=hypothesis_profiles.examples(150), deadline=None)
@given(MARKUP)
def test_any_text_as_a_block_inside_rtcbots_details_stays_inside(text: str) -> None:
    doc = "\n".join(["<details><summary>evidence</summary>", "", inert(text, block=True), "", "</details>",
                     "", "after"])
    assert audit(doc, HOST).clean
    tokens = parser().parse(doc)
    html = [t.content.strip() for t in tokens if t.type == "html_block"]
    assert html == ["<details><summary>evidence</summary>", "</details>"]  # only rtcbot's own, in order
    assert unclosed(doc) == ""


def test_mentions_are_defused_where_github_would_read_them_only() -> None:
    out = plain("@alice, @org/team and (@bob) mail x@y.example about RTC@3; @")
    assert MENTION.findall(out) == []
    assert "x@y.example" in out and "RTC@3" in out  # not mentions on GitHub: left alone
    assert out.count("@" + JOINER) == 4
    assert plain("no mention here") == "no mention here"
    refs = plain("fixes #12, see other-org/repo#3 and GH-4; C# 10 and issue#x stay")
    assert re.findall(r"#\d|GH-\d", refs) == [] and "C# 10" in refs and "issue#x" in refs
    [seen] = texts(inert("closes other-org/repo#3"))
    assert re.findall(r"#\d", seen) == []


def test_code_spans_and_fences_outlast_any_backtick_run() -> None:
    for text in ("a`b", "``x``", "`", "a ``` b ```` c", "<img src=x> @alice"):
        span = code(text)
        [tok] = [t for t in parser().parse(span)[1].children or [] if t.type == "code_inline"]
        assert tok.content == text  # the whole text, one span: nothing ended it early
    assert code("a\nb") == "`a b`" and code("") == ""
    body = "x = 1\n```\n</details>\n`````\n<img src=x>"
    block = "\n".join(fenced(body))
    tokens = parser().parse(block + "\n\nafter")
    assert tokens[0].type == "fence" and tokens[0].content == body + "\n"
    assert Fix("a.py", 1, 1, body).suggestion.startswith(fenced(body)[0] + "suggestion")  # one helper


def test_unclosed_names_rtcbots_open_blocks_only() -> None:
    assert unclosed("<details>\n\n```\nx") == "\n```\n</details>"
    assert unclosed("<details>\n````\n</details>\n```\n") == "\n````\n</details>"  # a tag in code is code
    assert unclosed("<details>\n\n```\n</details>\n```\n\n</details>") == ""
    assert unclosed("~~~\n```\n") == "\n~~~"


# ---------------------------------------------------------------------------- in the renderers
def hostile_report() -> AnalyzerReport:
    f = Finding("crscore", f"comment by @mallory: {HOSTILE}", HOSTILE_LINES, path="src/<img src=x>@a`b|c.py",
                start_line=3, end_line=4, scores={"rel": 1.0},
                evidence={"comment": HOSTILE_LINES, "pseudo_references": [HOSTILE, HOSTILE_LINES],
                          "matched": [{"pseudo_ref": HOSTILE, "similarity": 0.9}]})
    return AnalyzerReport("crscore", "CRScore", findings=[f], scores={"rel": 1.0},
                          skipped=[Skipped("docs/`x`<img src=y>.png", f"binary {HOSTILE}")],
                          notes=[f"not covered by any review comment: {HOSTILE}"])


def test_a_hostile_report_renders_inert_in_every_markdown_renderer() -> None:
    r = hostile_report()
    out = render(r, target=None)
    bodies = [out.summary, out.text, render_reports_markdown([r], repo="o/r", head_sha="a" * 40),
              render_evidence_markdown(r.findings[0]), pr_view.finding_line(r.findings[0], "o/r", "a" * 40),
              *pr_view.todo_lines([(r.findings[0], HOSTILE)]), *unanalysed.markdown([r, r]),
              *unanalysed.reason_lines(unanalysed.collect([r])), *readable.overview([r])]
    for body in bodies:
        assert audit(body, HOST).clean, (audit(body, HOST), body)
        assert unclosed(body) == ""
    for ann in out.annotations:  # plain text on GitHub: as written, mentions defused, no escapes
        for key in ("title", "message", "raw_details"):
            assert MENTION.findall(ann[key]) == []
        assert plain(HOSTILE) in ann["raw_details"] and plain(HOSTILE_LINES) in ann["message"]


def test_a_cut_closes_rtcbots_blocks_even_after_long_fences() -> None:
    evidence = {"regenerated": "x = 1\n" + "````\n" * 3 + "y\n" * 40_000}
    f = Finding("editing_rtc", "hunk", "m", path="a.py", start_line=1, evidence=evidence)
    body = render_evidence_markdown(f, max_chars=10**6)
    short = cut(body, 20_000)
    assert len(short.encode()) <= 20_000 and unclosed(short.rsplit("\n\n> … cut", 1)[0]) == ""
    tokens = parser().parse(short)
    assert [t.content.strip() for t in tokens if t.type == "html_block"][-1] == "</details>"


def test_a_fix_comment_and_the_plain_text_outputs_carry_no_live_text() -> None:
    fix = Fix("m.py", 2, 2, "    @decorated\n    return safe(x)  # ``` </details>\n", "-x\n+y")
    f = Finding("autofix", f"rule: {HOSTILE}", HOSTILE_LINES, "m.py", 2, 2, scores={"fixed": 1.0, "rtc_pass": 1.0},
                rule_id="python.eval`x`", fix=fix)
    body = comment_body(Suggestion(f, key_of(f)))
    assert audit(body, HOST).clean and fix.suggestion in body  # the committable code is untouched
    lines, _, _ = workflow_commands([AnalyzerReport("autofix", "AutoFix", findings=[f])])
    assert lines and all(MENTION.findall(ln) == [] for ln in lines)
    text = render_text([AnalyzerReport("autofix", "AutoFix", findings=[
        Finding("autofix", "[link=https://evil.example]click[/link] [bold]x[/bold]", "[red]m[/red]", "m.py", 1)])])
    assert "[link=https://evil.example]click[/link]" in text and "[red]m[/red]" in text  # no rich markup
