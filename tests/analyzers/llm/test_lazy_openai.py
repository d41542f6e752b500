"""`openai` is imported where the LLM client uses it (analyzers/llm/__init__.py): a process that
makes no request never pays its import, one that makes a client gets it, and a worker's warm-up
and the review's LLM factory pay it before the first job or review."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

# what a process imports that may never ask a model: the CLI and each of its commands (all
# of them for `rtcbot --help`), the App's web and worker processes, the Action, the analyzers
# and the review's use case
NO_REQUEST = ("bot.entry", "bot.app.web", "bot.app.worker", "bot.action.run", "analyzers.registry",
              "analyzers.pipeline", "bot.core.review")


def _fresh(code: str, tmp_path: Path) -> list[str]:
    """What `code` prints in a new interpreter (the test process has imported openai long ago):
    isolated mode, a clean environment, a private folder, this tree's modules first."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n" + code],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.slow  # new Python processes that import the CLI, the App and the analyzers
def test_importing_the_cli_the_app_and_the_analyzers_does_not_import_openai(tmp_path: Path) -> None:
    code = ("import importlib\n"
            "from bot.entry import COMMANDS\n"
            f"names = [*{NO_REQUEST!r}, *(target.split(':')[0] for target in COMMANDS.values())]\n"
            "for name in names:\n"
            "    importlib.import_module(name)\n"
            "    print(name, 'openai' in sys.modules)\n")
    printed = _fresh(code, tmp_path)
    assert len(printed) == 2 * (len(NO_REQUEST) + 10)  # and the CLI's ten commands
    assert [name for name, imported in zip(printed[::2], printed[1::2], strict=True) if imported != "False"] == []


@pytest.mark.slow
def test_a_client_and_a_workers_warm_up_import_it(tmp_path: Path) -> None:
    code = ("from analyzers.llm.client import LLMClient, LLMSettings\n"
            "before = 'openai' in sys.modules\n"
            "LLMClient(LLMSettings(base_url='http://127.0.0.1:9/v1', model='m'))\n"
            "print(before, 'openai' in sys.modules)\n")
    assert _fresh(code, tmp_path) == ["False", "True"]
    code = ("from analyzers.llm.http import preload\n"
            "before = 'openai' in sys.modules\n"
            "preload()\n"
            "print(before, 'openai' in sys.modules)\n")
    assert _fresh(code, tmp_path) == ["False", "True"]


@pytest.mark.slow
def test_the_review_s_llm_factory_imports_it_before_the_review_starts(tmp_path: Path) -> None:
    """`rtcbot review`, the Action and the App make the one factory (bot/core/llm.py) before a
    review: its first request does not wait for the import (nor does bench/cold_start.py time it)."""
    code = ("from analyzers.llm.client import LLMSettings\n"
            "from bot.core.llm import llm_factory\n"
            "before = 'openai' in sys.modules\n"
            "llm_factory(LLMSettings(base_url='http://127.0.0.1:9/v1', model='m'))\n"
            "print(before, 'openai' in sys.modules)\n")
    assert _fresh(code, tmp_path) == ["False", "True"]
