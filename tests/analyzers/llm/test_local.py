"""The real embedded server through the openai client: structure, not wording."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.editing_rtc.analyzer import EditingRTC, EditingRTCConfig
from analyzers.llm.client import LLMClient
from tests.support import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.model]


def test_embedded_server_answers_chat(embedded_llm: LLMClient) -> None:
    out = embedded_llm.sample([{"role": "user", "content": "Name a colour."}], n=2, temperature=1.0, max_tokens=16)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    assert embedded_llm.honours_n is not None


def test_editing_rtc_end_to_end_on_embedded_model(embedded_llm: LLMClient) -> None:
    changes = parse_diff((ROOT / "samples" / "demo.diff").read_text())
    before = embedded_llm.usage.copy()
    cfg = EditingRTCConfig(forward_max_tokens=48, backward_max_tokens=96)
    report = EditingRTC(cfg).run(changes, AnalysisContext(llm_factory=lambda: embedded_llm))
    assert report.error is None and len(report.findings) == 2
    spent = embedded_llm.usage.minus(before)
    per_hunk = 5 if embedded_llm.honours_n else 7
    assert spent.requests == 2 * per_hunk
    for f in report.findings:
        assert 0.0 <= f.scores["rtc"] <= 1.0 and -1.0 <= f.scores["lift"] <= 1.0
        assert len(f.evidence["descriptions"]) == 3
        assert all(isinstance(d, str) and d for d in f.evidence["descriptions"])


def test_a_rerun_with_the_embedded_model_costs_no_request(tmp_path: Path) -> None:
    """Two `rtcbot review` processes, each starting its own embedded server (a new port each):
    the second is answered from the cache (keyed by the model file, not the port). Both run
    Editing RTC with the end-to-end test's short completions (48/96 tokens, a config's options)
    instead of the default 256/1024: the same requests and cache rows, a fraction of the decoding."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RTCBOT_LLM_", "OPENAI_"))}
    env.update({"RTCBOT_CACHE_DIR": str(tmp_path), "RTCBOT_PROGRESS_S": "0.05"})
    config = tmp_path / "rtcbot.yml"
    config.write_text("options:\n  editing_rtc: {forward_max_tokens: 48, backward_max_tokens: 96}\n",
                      encoding="utf-8")

    def run() -> str:
        p = subprocess.run([sys.executable, "-m", "bot", "review", "samples/demo.diff", "--format", "json",
                            "--config", str(config)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert p.returncode == 0, p.stderr[-2000:]
        return [ln for ln in p.stderr.splitlines() if ln.startswith("rtcbot: progress: ")][-1]

    def rows() -> int:
        [db] = tmp_path.rglob("*.sqlite3")
        with sqlite3.connect(db) as c:
            return int(c.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0])

    first = run()
    written = rows()
    assert written > 0 and " 0 LLM requests" not in first
    second = run()
    assert " · 0 LLM requests, 0 tokens, " in second and "from the cache" in second, second
    assert rows() == written
