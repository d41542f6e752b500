"""The span recorder: spans only while recording, from any thread; tools named at the runner."""

from __future__ import annotations

import sys
import threading

from analyzers import spans
from analyzers.tools import programs as tooling


def test_spans_are_recorded_only_while_a_recorder_is_installed() -> None:
    with spans.span("before"):
        pass
    def in_a_thread() -> None:
        with spans.span("in a thread"):
            pass

    with spans.recording() as rec:
        with spans.span("outer"):
            with spans.span("inner"):
                pass
            t = threading.Thread(target=in_a_thread)
            t.start()
            t.join()
    with spans.span("after"):
        pass
    got = rec.taken()
    assert [s.stage for s in got] == ["outer", "inner", "in a thread"]
    assert got[0].start <= got[1].start <= got[1].end <= got[2].start <= got[2].end <= got[0].end


def test_a_span_is_recorded_when_its_block_raises() -> None:
    with spans.recording() as rec:
        try:
            with spans.span("failing"):
                raise ValueError("x")
        except ValueError:
            pass
    assert [s.stage for s in rec.taken()] == ["failing"]


def test_the_tool_runner_records_each_run_under_the_tool_name() -> None:
    with spans.recording() as rec:
        tooling.run(tooling.python_argv("-m", "json.tool"), timeout=30, input="{}")
        tooling.run(["true"], timeout=30)
    assert [s.stage for s in rec.taken()] == ["json", "true"]
    assert all(s.seconds > 0 for s in rec.taken())


def test_tool_names() -> None:
    assert tooling.tool_name([sys.executable, "-I", "-m", "pylint", "--x"]) == "pylint"
    assert tooling.tool_name(["/usr/bin/node", "/x/node_modules/jshint/bin/jshint", "a.js"]) == "jshint"
    assert tooling.tool_name(["/opt/semgrep/bin/semgrep", "scan"]) == "semgrep"
