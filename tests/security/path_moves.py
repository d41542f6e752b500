"""The pull request author's moves of one vulnerable file to a name that once hid it from the
scans that cost nothing (issue #51, item 1): a catalogue for tests/security/test_path_policy_scans.py
and any harness that moves a fixture to another path. Each entry: (path, text); the text holds
one `eval` of request data that AutoFix's rules flag.

`new_file_diff(path, text)` is the git diff that adds it, for `rtcbot review`; GitHub's
`patch` of the same is tests/security/test_fail_closed.py's `pr_files`.
"""

from __future__ import annotations

EVAL_PY = 'def handle(request):\n    return eval(request.args["q"])\n'
EVAL_JS = "function handle(req) {\n  return eval(req.query.q);\n}\n"
SHEBANG_PY = "#!/usr/bin/env python3\n" + EVAL_PY

# the control: where the gate always failed
PLAIN: tuple[str, str] = ("app.py", EVAL_PY)
MOVES: tuple[tuple[str, str], ...] = (
    ("app/generated/handler.py", EVAL_PY),  # */generated/*
    ("auth_pb2.py", EVAL_PY),  # *_pb2.py
    ("build/lib/auth.py", EVAL_PY),  # build/*
    ("vendor/auth.py", EVAL_PY),  # vendor/*
    ("auth.generated.py", EVAL_PY),  # *.generated.*
    ("static/app.bundle.js", EVAL_JS),  # *.bundle.js
    ("lib/util.min.js", EVAL_JS),  # *.min.js (Semgrep itself leaves it out by name)
    ("src/auth.mts", EVAL_JS),  # an extension Semgrep does not know
    ("src/auth.cts", EVAL_JS),
    ("bin/deploy", SHEBANG_PY),  # no extension: a shebang says Python
    ("tools/notes.txt", EVAL_PY),  # a misleading extension: the content parses as a program
)


def new_file_diff(path: str, text: str) -> str:
    """The git diff that adds `path` holding `text`."""
    lines = text.splitlines()
    body = "".join(f"+{ln}\n" for ln in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n"
            f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}")
