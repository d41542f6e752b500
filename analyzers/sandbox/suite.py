"""A repository's test command, run in the sandbox on a copy of its checkout, optionally with
one file replaced: SynthesisRTC's oracle, and the last check of an AutoFix fix."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from analyzers.code.paths import write_inside
from analyzers.execution.oracle import Limits
from analyzers.sandbox.box import Sandbox


@dataclass
class Suite:
    """The repository's test command, run in the sandbox on a copy of the checkout."""

    sandbox: Sandbox
    limits: Limits
    repo: Path
    command: str

    def passes(self, path: str | None = None, new_source: str | None = None) -> tuple[bool, str]:
        """Whether the suite passes (with `path` replaced by `new_source`), and its output's tail."""
        def setup(work: Path) -> None:
            # links are copied as links: a PR's link to a file of ours never copies its content in
            shutil.copytree(self.repo, work, dirs_exist_ok=True, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            if path is not None and new_source is not None:
                write_inside(work, path, new_source)  # never outside the copy

        raw, _ = self.sandbox.run(["/bin/sh", "-c", self.command], limits=self.limits, setup=setup)
        tail = raw.stderr.decode("utf-8", "replace")[-300:] or raw.stdout.decode("utf-8", "replace")[-300:]
        return (raw.exit_code == 0 and not raw.timed_out), tail
