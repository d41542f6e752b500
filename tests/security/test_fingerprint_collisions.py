"""Fingerprints fail closed (issue #51, item 3), played as the pull request's author.

Attacks covered (each passed on f32233f: the dismissed finding's fingerprint named the new code,
0 findings, exit 0):
- same-named definitions: a second `@handle.register def _` (singledispatch), `def run` in the
  other arm of `if os.name == "nt"`, a `@property`'s setter, a JavaScript object literal's
  `{admin: {run(){…}}, guest: {run(){…}}}` — the team dismissed the harmless one, the author adds
  the dangerous one beside it;
- a copy of the dismissed line added *above* it in the same definition, which took over the
  dismissed occurrence (the summary called the attacker's line "dismissed");
- `@rtcbot ignore <fp>` of code not pushed yet (an author asks a maintainer to dismiss a
  fingerprint of no current finding, then pushes the code): refused on the App, and the Action
  proposes no entry for it.
Now a place names the whole path of definitions and branches, and the count of identical lines
in the definition is part of it: the new code is a finding of its own, and the gate fails. The
CLI's `--dismissals FILE` (the team's file) on real Semgrep; the App's `@rtcbot ignore` through
the fake GitHub.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.entry import main
from tests.bot.app_support import App
from tests.bot.test_action_comments import _github as action_github
from tests.bot.test_action_comments import command as action_command
from tests.bot.test_action_comments import replies as action_replies
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.security.test_dismiss_target import MAINTAINER, _opened, _pushed, app  # noqa: F401  (fixture)
from tests.security.test_fingerprints import dismissals_file, finding
from tests.security.test_semgrep_gates import _semgrep

pytestmark = pytest.mark.slow
GATE = "autofix.findings>0"

SINGLEDISPATCH = ('''import functools
import subprocess


@functools.singledispatch
def handle(arg):
    raise TypeError(arg)


@handle.register
def _(arg: int):
    cmd = "uptime"
    subprocess.call(cmd, shell=True)
''', '''

@handle.register
def _(arg: str):
    cmd = arg
    subprocess.call(cmd, shell=True)
''')
BRANCHES = ('''import os
import subprocess

if os.name == "nt":
    def run(request):
        cmd = "ver"
        subprocess.call(cmd, shell=True)
''', '''else:
    def run(request):
        cmd = request.args["cmd"]
        subprocess.call(cmd, shell=True)
''')
PROPERTY = ('''import subprocess


class Service:
    @property
    def command(self):
        cmd = "status"
        subprocess.call(cmd, shell=True)
        return cmd
''', '''
    @command.setter
    def command(self, value):
        cmd = value
        subprocess.call(cmd, shell=True)
''')
OBJECT_BASE = '''const handlers = {
  admin: {
    run(input) {
      return eval(input);
    },
  },
};
'''
OBJECT_HEAD = OBJECT_BASE.replace("};\n", '''  guest: {
    run(input) {
      return eval(input);
    },
  },
};
''')
SAME_NAMED = {
    "singledispatch": ("app.py", SINGLEDISPATCH[0], SINGLEDISPATCH[0] + SINGLEDISPATCH[1]),
    "if-else": ("app.py", BRANCHES[0], BRANCHES[0] + BRANCHES[1]),
    "property": ("app.py", PROPERTY[0], PROPERTY[0] + PROPERTY[1]),
    "object-literal": ("app.js", OBJECT_BASE, OBJECT_HEAD),
}


def _llm(scripted_llm: Callable[..., ScriptedLLM]) -> list[str]:
    srv = scripted_llm("NOT_VULNERABLE: test input")
    return ["--llm-base-url", srv.base_url, "--model", srv.model]


def _run(tmp_path: Path, path: str, base: str | None, head: str, llm: list[str], *more: str
         ) -> tuple[int, dict[str, Any]]:
    """`rtcbot review` of the change base → head of `path` (None: the file is new), a checkout at
    the head, AutoFix with the findings gate; the exit code and the one report."""
    work = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
    (work / "repo").mkdir(parents=True)
    (work / "repo" / path).write_text(head)
    patch = work / "change.diff"
    old = [] if base is None else base.splitlines(True)
    patch.write_text(f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if base is None else "") + "".join(
        difflib.unified_diff(old, head.splitlines(True), "/dev/null" if base is None else f"a/{path}", f"b/{path}")))
    cfg = work / "rtcbot.yml"
    cfg.write_text(f'fail_on: "{GATE}"\n')
    r = CliRunner().invoke(main, ["review", str(patch), "--repo", str(work / "repo"), "--config", str(cfg),
                                  "--format", "json", "--quiet", "--analyzers", "autofix", *llm, *more])
    assert r.exit_code in (0, 1), r.output
    (rep,) = json.loads(r.stdout)["reports"]
    return r.exit_code, rep


def _dismissed_at_base(tmp_path: Path, path: str, base: str, llm: list[str]) -> Path:
    """The team's file dismissing the one finding of `base` (the harmless one), by fingerprint."""
    code, rep = _run(tmp_path, path, None, base, llm)
    assert code == 1
    (harmless,) = [finding(f) for f in rep["findings"]]
    return dismissals_file(tmp_path, harmless.fingerprint())


@pytest.mark.parametrize("case", list(SAME_NAMED))
def test_cli_a_dismissal_does_not_hide_a_same_named_definition_the_author_adds(
        case: str, scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    path, base, head = SAME_NAMED[case]
    llm = _llm(scripted_llm)
    dismiss = _dismissed_at_base(tmp_path, path, base, llm)
    code, rep = _run(tmp_path, path, base, head, llm, "--dismissals", str(dismiss))
    added = len(base.splitlines()) + 1
    assert code == 1, rep  # the gate fails on the new code ...
    assert [f["start_line"] for f in rep["findings"]] and all(f["start_line"] >= added for f in rep["findings"])
    assert rep["dismissed"] == []  # ... and nothing is called dismissed
    (new,) = [finding(f) for f in rep["findings"]]
    assert new.place is not None and new.place.path  # the path tells the two apart


CLEANUP = '''import subprocess


def cleanup(request):
    cmd = "rm -rf /tmp/cache"
    subprocess.call(cmd, shell=True)
'''
COPIED = CLEANUP.replace('    cmd = "rm',
                         '    cmd = request.args["cmd"]\n    subprocess.call(cmd, shell=True)\n    cmd = "rm')


def test_cli_a_copy_above_the_dismissed_line_is_a_finding_with_a_note(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    llm = _llm(scripted_llm)
    dismiss = _dismissed_at_base(tmp_path, "app.py", CLEANUP, llm)
    code, rep = _run(tmp_path, "app.py", CLEANUP, COPIED, llm, "--dismissals", str(dismiss))
    assert code == 1 and [f["start_line"] for f in rep["findings"]] == [6]  # the attacker's line shows
    assert rep["dismissed"] == []  # and is not called dismissed
    [note] = [n for n in rep["notes"] if n.startswith("The dismissal of")]
    assert "by @alice no longer covers app.py:6" in note
    assert "function cleanup held 1 identical line like it when the dismissal was made and holds 2 now" in note
    # the team's dismissal still covers the line while the definition is as it was
    code, rep = _run(tmp_path, "app.py", CLEANUP, "# jobs\n" + CLEANUP, llm, "--dismissals", str(dismiss))
    assert code == 0 and rep["findings"] == []


# ------------------------------------------------------------------------- the App
def test_app_ignore_of_the_harmless_overload_leaves_the_authors_overload_failing(app: App) -> None:  # noqa: F811
    w = app
    path_base, head = SINGLEDISPATCH[0], SINGLEDISPATCH[0] + SINGLEDISPATCH[1]
    _, (harmless,) = _opened(w, 61, path_base)
    w.say(f"@rtcbot ignore {harmless.fingerprint()} because a constant command", number=61, user=MAINTAINER)
    assert [d.target for d in w.rt.store.dismissals.listed(w.gh.repository_id, w.gh.repo)] == [harmless.fingerprint()]
    run = _pushed(w, 61, head)
    assert run["conclusion"] == "failure"  # the author's `def _(arg: str)` is a finding of its own
    assert 19 in [a["start_line"] for a in run["annotations"]]


FUTURE = "import subprocess\n\n\ndef run_user(request):\n    subprocess.call(request.args['cmd'], shell=True)\n"


def test_app_ignore_of_a_fingerprint_of_no_current_finding_is_refused(app: App) -> None:  # noqa: F811
    """The author computes the fingerprint of code not pushed yet (here: from another pull request
    that holds it), asks a maintainer to ignore it, then pushes the code."""
    w = app
    _, (future,) = _opened(w, 63, FUTURE)
    _opened(w, 62, "import subprocess\n")
    fp = future.fingerprint()
    w.say(f"@rtcbot ignore {fp} because reviewed", number=62, user=MAINTAINER)
    assert w.rt.store.dismissals.listed(w.gh.repository_id, w.gh.repo) == []  # nothing recorded ...
    reply = w.replies()[-1]
    assert reply.startswith(f"`{fp}` is the fingerprint of no finding at the head")  # ... and the reply says so
    assert "nothing is dismissed" in reply and "never code still to come" in reply
    run = _pushed(w, 62, FUTURE)
    assert run["conclusion"] == "failure" and [a["start_line"] for a in run["annotations"]] == [5]


def test_action_ignore_of_a_fingerprint_no_check_run_shows_proposes_no_entry(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The Action's `ignore <fp>` answers with an entry to commit: only for a fingerprint its check
    runs annotate at the head, never one of code still to come."""
    gh, llm = action_github(fake_github), scripted_llm(varied)
    gh.permissions[MAINTAINER] = "write"
    fp = "0123456789abcdef"
    proc, _ = action_command(gh, llm, tmp_path, f"@rtcbot ignore {fp} because reviewed", user=MAINTAINER)
    assert proc.returncode == 0, proc.stderr[-3000:]
    reply = action_replies(gh)[-1]
    assert reply.startswith(f"`{fp}` is the fingerprint of no finding rtcbot's check runs annotate at the head")
    assert "no entry to commit" in reply and "dismissals:" not in reply
