"""A hunk's label is the pull request's text: the definition its change is in, read from the
file at the head, else the context git wrote after `@@ … @@` (any text, in a patch file). A
PR author names a function, or writes a line git takes for one, to publish through it: a live
mention, a link, an image or HTML in the check run, terminal escapes or a bidirectional
override, or a name of megabytes that crowds every other finding out of the check run's text.

Every label is one line of at most LABEL_CHARS characters (analyzers/code/diff.py `one_line`), and
every surface renders it inert (reporters/untrusted.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from analyzers.code.diff import SECTION_CHARS, parse_diff
from analyzers.code.enclosing import LABEL_CHARS
from analyzers.context import AnalysisContext
from analyzers.pipeline import run_one
from analyzers.report import AnalyzerReport
from reporters.check_run import MAX_ANNOTATION_TITLE, render
from reporters.markdown import render_text
from reporters.untrusted import unclosed
from tests.conftest import client_for
from tests.fakes.llm_server import RoundTrips, ScriptedLLM
from tests.security.markdown_audit import MENTION, audit
from tests.security.test_untrusted_text import HOST

# what git would write after `@@ … @@` for a line of the PR's own (one that starts with a
# letter): mentions, a link, an image, HTML, code marks, a terminal escape, a bell, a
# right-to-left override; then a tail of megabytes, which a patch file may carry
HOSTILE_SECTION = ("x @octo-org/admins ![i](https://evil.example/i.png) <img src=x> `a` **b** "
                   "[ok](https://evil.example/p) \x1b[31m\x07\u202e")
TAIL = "z" * 100_000
LONG_NAME = "n" * 50_000  # `def nnnn…():`, a Python identifier of any length
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")

# calc/mean.py is not at the head (its label is git's header); long.py is
DIFF = (
    f"--- a/calc/mean.py\n+++ b/calc/mean.py\n@@ -1,3 +1,4 @@ {HOSTILE_SECTION}{TAIL}\n"
    " def mean(values):\n-    total = 0\n+    total = sum(values)\n+    return total / len(values)\n \n"
    f"--- a/long.py\n+++ b/long.py\n@@ -8,3 +8,3 @@ def {LONG_NAME}():\n"
    "     a = 7\n-    b = 8\n+    b = 9\n     c = 10\n"
)
LONG_PY = f"def {LONG_NAME}():\n" + "    pass\n" * 12  # line 9, where the hunk's change is, in the def


def _report(scripted_llm: Callable[..., ScriptedLLM]) -> AnalyzerReport:
    srv = scripted_llm(RoundTrips())  # passes every baseline: the hunks are conclusive, and annotated
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv),
                          file_loader=lambda p: LONG_PY if p == "long.py" else None)
    report = run_one("editing_rtc", parse_diff(DIFF), ctx)
    assert report.error is None and len(report.findings) == 2, report
    return report


def test_a_diff_carries_gits_context_as_one_short_line() -> None:
    [mean, long] = [fc.hunks[0] for fc in parse_diff(DIFF).files]
    assert len(mean.section) <= SECTION_CHARS and len(long.section) <= SECTION_CHARS
    assert not CONTROL.search(mean.section) and mean.section.startswith("x @octo-org/admins ![i](")
    assert "z" * 200 not in mean.header and mean.section.endswith("…")


def test_hostile_definition_names_are_short_and_inert_in_the_check_run(
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    report = _report(scripted_llm)
    titles = sorted(f.title for f in report.findings)
    assert all(len(t) <= LABEL_CHARS and not CONTROL.search(t) for t in titles), titles
    by_path = {f.path: f.title for f in report.findings}
    assert by_path["long.py"].startswith("function nnnn") and by_path["long.py"].endswith("…")
    assert "@octo-org/admins" in by_path["calc/mean.py"]  # the reader still sees what git wrote
    out = render(report, target=None)
    for body in (out.summary, out.text):
        assert audit(body, HOST).clean, (audit(body, HOST), body[:3000])
        assert unclosed(body) == "" and not CONTROL.search(body)
        assert "n" * 200 not in body and "z" * 200 not in body
    assert len(out.annotations) == 2
    for ann in out.annotations:  # plain text on GitHub: mentions defused, bounded, one line
        assert len(ann["title"].encode()) <= min(MAX_ANNOTATION_TITLE, LABEL_CHARS * 4)
        for key in ("title", "message", "raw_details"):
            assert MENTION.findall(ann[key]) == [] and not CONTROL.search(ann[key]), (key, ann[key][:500])
            assert "n" * 200 not in ann[key] and "z" * 200 not in ann[key]
    printed = render_text([report])  # `rtcbot review`'s terminal: no escape reaches it
    assert "\x1b[31m" not in printed and "\u202e" not in printed and "n" * 200 not in printed
