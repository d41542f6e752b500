"""Semgrep on the changed files only, against the whole repository: scan time as a ratio.

A synthetic Python repository of a few hundred modules (each a few functions, every tenth
with a line our rules flag) is written to a temporary folder; a push changes 3 of them. Both
scans go through the AutoFix scanner (`analyzers/semgrep/scan.py`: our local rules,
`--metrics=off --disable-version-check`), once over the 3 changed files and once over the
whole tree, alternating, best of `repeats` each. Both must report the same findings in the
changed files (the narrow scan loses nothing). Ratio = changed-files scan / whole scan.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from analyzers.semgrep.scan import SemgrepUnavailable, find_semgrep, scan
from bench import Row, not_measured, row

TEMPLATE = '''"""Module {i}: helpers for batch {i}."""

import json
import os
import subprocess


def load_{i}(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def total_{i}(values):
    result = 0
    for v in values:
        if v is None:
            continue
        result += v * {i}
    return result


def describe_{i}(record):
    parts = []
    for key in sorted(record):
        parts.append(f"{{key}}={{record[key]}}")
    return ", ".join(parts)


def run_{i}(args):
    return subprocess.run(["echo", *args], check=False, capture_output=True)


class Worker{i}:
    def __init__(self, name):
        self.name = name
        self.home = os.path.join("/tmp", name)

    def label(self):
        return self.name.upper() + "-{i}"
'''
FLAGGED = '''

def unsafe_{i}(cmd):
    return subprocess.call("run " + cmd, shell=True)
'''


def build_repo(root: Path, files: int) -> list[str]:
    paths = []
    for i in range(files):
        rel = f"pkg{i // 50}/mod_{i}.py"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(TEMPLATE.format(i=i) + (FLAGGED.format(i=i) if i % 10 == 0 else ""),
                                encoding="utf-8")
        paths.append(rel)
    return paths


def change(root: Path, rel: str) -> None:
    p = root / rel
    p.write_text(p.read_text(encoding="utf-8") + "\n\ndef added(x):\n    return eval(x)\n", encoding="utf-8")


def measure(files: int = 300, changed: int = 3, repeats: int = 2) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="rtcbot-bench-semgrep-") as tmp:
        root = Path(tmp)
        paths = build_repo(root, files)
        targets = paths[:: max(1, files // changed)][:changed]
        for rel in targets:
            change(root, rel)
        narrow_times, whole_times = [], []
        narrow = whole = None
        for _ in range(repeats):
            t0 = time.perf_counter()
            narrow = scan(root, targets)
            narrow_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            whole = scan(root, ["."])
            whole_times.append(time.perf_counter() - t0)
        assert narrow is not None and whole is not None
        key = lambda f: (f.rule_id, f.path.removeprefix("./"), f.start_line)  # noqa: E731
        in_changed = {key(f) for f in whole.findings if f.path.removeprefix("./") in targets}
        return {
            "files": files,
            "changed": len(targets),
            "narrow_s": min(narrow_times),
            "whole_s": min(whole_times),
            "narrow_findings": len(narrow.findings),
            "whole_findings": len(whole.findings),
            "same_findings": float({key(f) for f in narrow.findings} == in_changed),
        }


def run(quick: bool = False) -> list[Row]:
    figure = "Semgrep: scan of the changed files / scan of the whole repository"
    if find_semgrep() is None:
        return [not_measured(figure, "< 1×", "semgrep is not installed")]
    try:
        m = measure(files=40 if quick else 300, repeats=1 if quick else 2)
    except SemgrepUnavailable as e:
        return [not_measured(figure, "< 1×", str(e))]
    ratio = m["narrow_s"] / m["whole_s"]
    return [
        row(f"{figure} ({m['changed']:.0f} of {m['files']:.0f} Python files)",
            f"{ratio:.2f}× (best of runs: {m['narrow_s']:.2f} s / {m['whole_s']:.2f} s)", "< 1×", ratio < 1),
        row("Semgrep: the changed-files scan finds what the whole scan finds in those files",
            f"{m['narrow_findings']:.0f} findings, same: {'yes' if m['same_findings'] else 'no'}",
            "same", bool(m["same_findings"])),
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
