"""Render the example report of docs/reports.md: `rtcbot review` of the change shaped like
pallets/itsdangerous's "use uv" (tests/fixtures/prs/itsdangerous-uv-shaped.diff) with every
analyzer, against the tests' scripted model on loopback (tests/fakes/llm_server.py), which
describes every hunk in one long sentence, re-creates none of them and answers the review
prompt out of format. TREE is the checkout whose `rtcbot` renders it (default: this one; the
"before" is an older commit's tree, e.g. `git archive <commit> | tar -x -C /tmp/old`).

    .venv/bin/python scripts/report_example.py [--tree TREE] [--format markdown|json|text]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import ScriptedLLM, describes_only  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "prs" / "itsdangerous-uv-shaped.diff"
DESCRIPTION = ("Replaces the two-step HMAC object construction with the one-shot hmac.digest helper, which "
               "computes the signature for the key and value with the configured digest method in a single "
               "call and returns the bytes.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--format", default="markdown")
    args = ap.parse_args()
    tree = args.tree.resolve()
    with ScriptedLLM(describes_only(DESCRIPTION, "        return hmac.digest(key, value, self.digest_method)")) as srv:
        p = subprocess.run([sys.executable, "-m", "bot", "review", str(FIXTURE), "--analyzers", "all",
                            "--format", args.format, "--llm-base-url", srv.base_url, "--model", srv.model,
                            "--no-cache", "-q"], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                           capture_output=True, text=True, timeout=600)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
