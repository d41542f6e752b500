"""Render what a pull request's author reads for the three itsdangerous changes of
samples/itsdangerous/ (docs/reports.md): `rtcbot review FILE --format markdown` against a scripted
model on loopback (tests/fakes/llm_server.py) that round-trips well — it describes each hunk
in words (never its code) and re-creates a hunk from its own description, and gives the code
back unchanged for the uninformative "Edit." — except for hunks of more than LONG added lines,
which its descriptions do not carry (it gives the old code back). TREE is the checkout whose
`rtcbot` renders it (default: this one; the "before" is an older commit's tree, e.g.
`git archive f32233f | tar -x -C /tmp/old`). Writes docs/examples/verdict-<sha>-<label>.md.

    .venv/bin/python scripts/verdict_examples.py [--tree TREE] [--label after] [--out docs/examples]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import ScriptedLLM, last_user_text  # noqa: E402

SAMPLES = ROOT / "samples" / "itsdangerous"
SHAS = ("4bb03cd", "f966a62", "38774c9")
LONG = 12  # added lines a description of this model does not carry
_BLOCK = re.compile(r"\[(old|new)\]\n(`{3,})[^\n]*\n(.*?)\n\2", re.S)


class RoundTrips:
    """The scripted model: a hunk's description names it by a number it keeps; the backward
    prompt's description gives the number back, and with it the new code."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.new: list[str] = []

    def __call__(self, req: dict[str, Any]) -> str | list[str]:
        text = last_user_text(req)
        blocks = {kind: body for kind, _, body in _BLOCK.findall(text)}
        n = int(req.get("n") or 1)
        if "[edit description]" not in text:  # forward: describe, in words only
            with self.lock:
                self.new.append(blocks.get("new", ""))
                k = len(self.new)
            added = len(set(blocks.get("new", "").splitlines()) - set(blocks.get("old", "").splitlines()))
            return [f"Apply the edit numbered {k}, which changes {added} lines of this code as the "
                    f"author intended." for _ in range(n)]
        old = blocks.get("old", "")
        m = re.search(r"numbered (\d+)", text.rsplit("[edit description]", 1)[1])
        new = self.new[int(m.group(1)) - 1] if m else old
        carried = len(set(new.splitlines()) - set(old.splitlines())) <= LONG
        return [f"```\n{new if carried else old}\n```\n[end]"] * n


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
