"""Render what a pull request's author reads for the three itsdangerous changes of
samples/itsdangerous/ (docs/reports.md): `rtcbot review FILE --format markdown` against a scripted
model on loopback that round-trips well (tests/fakes/llm_server.py `RoundTrips`: it describes
each hunk in words and re-creates it from its own description, except hunks of more than 12
added lines). TREE is the checkout whose
`rtcbot` renders it (default: this one; the "before" is an older commit's tree, e.g.
`git archive f32233f | tar -x -C /tmp/old`). Writes docs/examples/verdict-<sha>-<label>.md.

    .venv/bin/python scripts/verdict_examples.py [--tree TREE] [--label after] [--out docs/examples]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import RoundTrips, ScriptedLLM  # noqa: E402

SAMPLES = ROOT / "samples" / "itsdangerous"
SHAS = ("4bb03cd", "f966a62", "38774c9")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--label", default="after")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "examples")
    args = ap.parse_args()
    tree = args.tree.resolve()
    worst = 0
    for sha in SHAS:
        with ScriptedLLM(RoundTrips(), model="scripted-round-trips") as srv:
            p = subprocess.run([sys.executable, "-m", "bot", "review", str(SAMPLES / f"{sha}.diff"),
                                "--format", "markdown", "--llm-base-url", srv.base_url, "--model", srv.model,
                                "--no-cache", "-q"], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                               capture_output=True, text=True, timeout=600)
        (args.out / f"verdict-{sha}-scripted-{args.label}.md").write_text(p.stdout, encoding="utf-8")
        print(f"{sha}: exit {p.returncode}; {p.stderr.strip()[-300:]}", file=sys.stderr)
        worst = max(worst, p.returncode if p.returncode != 3 else 0)
    return worst


if __name__ == "__main__":
    sys.exit(main())
