"""JavaScript smells: JSHint (npm, pinned in package.json), checkstyle XML report.

JSHint runs with an `esversion` (ES2020 syntax: classes, arrow functions, `const`, async) so
modern syntax is not reported as a smell; files with `import` / `export` are read as modules.
"""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from analyzers.crscore.smells import TOOL_TIMEOUT_S, Smell, SmellReport, node_bin, which
from analyzers.tooling import run, workdir

ESVERSION = 11
_MODULE = re.compile(r"^\s*(import\s[\w{*]|import\s*['\"]|export\s)", re.M)


def unavailable_reason() -> str | None:
    if which("node") is None:
        return "Node.js is not installed (JSHint needs it)"
    if node_bin("jshint") is None:
        return "JSHint is not installed (run `npm install --ignore-scripts`)"
    return None


def config_for(code: str) -> dict[str, object]:
    return {"esversion": ESVERSION, "module": bool(_MODULE.search(code))}


def jshint_command(config: Path, files: list[Path]) -> list[str]:
    """`node …/jshint …`: node by the path found here, JSHint's script itself (no shebang
    lookup on the tool's PATH)."""
    script = node_bin("jshint")
    assert script is not None
    return [which("node") or "node", str(script.resolve()), "--reporter=checkstyle",
            "--config", str(config), *map(str, files)]


def run_jshint(config: Path, files: list[Path], cwd: Path | None = None) -> str:
    """JSHint's own checkstyle XML for `files` (exit 2 means it found something); a clean
    environment, in `cwd` (a folder of ours) or a private one."""
    proc = run(jshint_command(config, files), timeout=TOOL_TIMEOUT_S, cwd=cwd)
    if proc.returncode not in (0, 2) or "<checkstyle" not in proc.stdout:
        raise RuntimeError(f"JSHint failed (exit {proc.returncode}): {proc.stderr.strip()[:200]}")
    return proc.stdout


def parse_checkstyle(xml_text: str) -> dict[str, list[Smell]]:
    """file path → smells, from a checkstyle XML report."""
    out: dict[str, list[Smell]] = {}
    root = ET.fromstring(xml_text)
    for f in root.iter("file"):
        smells = out.setdefault(str(Path(f.get("name", "")).resolve()), [])
        for e in f.iter("error"):
            source = e.get("source", "")
            code = source.rsplit(".", 1)[-1] if source else "jshint"
            smells.append(Smell("jshint", int(e.get("line", "0")), code, e.get("message", "").strip(),
                                int(e.get("column", "0")) or None))
    return out


def detect_javascript(files: Mapping[str, str]) -> dict[str, SmellReport]:
    reason = unavailable_reason()
    if reason:
        return {name: SmellReport(skipped=reason) for name in files}
    out = {name: SmellReport() for name in files}
    with workdir("rtcbot-jshint-") as tmp:
        groups: dict[bool, list[tuple[str, Path]]] = {}
        for i, (name, code) in enumerate(files.items()):
            p = tmp / f"{i}-{Path(name).stem}.js"
            p.write_text(code, encoding="utf-8")
            groups.setdefault(bool(config_for(code)["module"]), []).append((name, p))
        for module, members in groups.items():
            cfg = tmp / f"jshint-{int(module)}.json"
            cfg.write_text(json.dumps({"esversion": ESVERSION, "module": module}), encoding="utf-8")
            try:
                found = parse_checkstyle(run_jshint(cfg, [p for _, p in members], cwd=tmp))
            except (RuntimeError, subprocess.TimeoutExpired, ET.ParseError, OSError) as e:
                for name, _ in members:
                    out[name].skipped = f"JSHint did not run: {e}"
                continue
            for name, p in members:
                out[name].smells = found.get(str(p.resolve()), [])
    return out
