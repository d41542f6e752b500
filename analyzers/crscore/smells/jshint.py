"""JavaScript smells: JSHint (npm, pinned in package.json), in a Node process kept running.

JSHint runs with an `esversion` (ES2020 syntax: classes, arrow functions, `const`, async) so
modern syntax is not reported as a smell; files with `import` / `export` are read as modules.

Starting Node and loading JSHint's modules costs more than linting a pull request's files, so
JSHint runs in one Node process per process of ours (`jshint_server.js`, a LineServer: a clean
environment, a private folder, dead with us, started again if it dies), fed the files' text
as one JSON line per detection and answering JSHint's errors as its command line reports them.
A file over MAX_FILE_BYTES is not linted (it is skipped, with the reason), and a request holds
at most MAX_REQUEST_BYTES (the server refuses a longer line). Where the server cannot start,
or stops during a request, that detection runs JSHint's command line (checkstyle XML).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from analyzers.crscore.smells.found import ROOT, TOOL_TIMEOUT_S, Smell, SmellReport, node_bin, which
from analyzers.crscore.smells.line_server import LineServer, ServerUnavailable
from analyzers.tools.programs import run, workdir

ESVERSION = 11
JSHINT_LIB = ROOT / "node_modules" / "jshint" / "src" / "jshint.js"
SERVER_SOURCE = Path(__file__).with_name("jshint_server.js")
MAX_FILE_BYTES = 1 << 20  # a larger file (minified, generated) is not linted
MAX_REQUEST_BYTES = 8 << 20  # one request line to the server, JSON-escaped files together
_MODULE = re.compile(r"^\s*(import\s[\w{*]|import\s*['\"]|export\s)", re.M)


def unavailable_reason() -> str | None:
    if which("node") is None:
        return "Node.js is not installed (JSHint needs it)"
    if node_bin("jshint") is None:
        return (f"JSHint is not installed: no {ROOT / 'node_modules' / '.bin' / 'jshint'} (in a checkout: "
                "`npm install --ignore-scripts`; an installed rtcbot: scripts/install.sh puts node_modules there)")
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


class JshintServer(LineServer):
    """JSHint in one Node process, one detection at a time (line_server.py)."""

    title = "the JSHint server"
    folder_prefix = "rtcbot-jshint-server-"

    def command(self) -> list[str]:
        return [which("node") or "node", str(SERVER_SOURCE), str(JSHINT_LIB), str(MAX_REQUEST_BYTES)]

    def missing(self) -> str | None:
        return None if SERVER_SOURCE.is_file() else f"{SERVER_SOURCE.name} is missing"

    def lint(self, codes: list[str], timeout: float = TOOL_TIMEOUT_S) -> list[list[Smell]]:
        """JSHint's smells in each piece of code (at most MAX_REQUEST_BYTES in all)."""
        files = [{"code": c, "module": bool(config_for(c)["module"])} for c in codes]
        answer = json.loads(self.request(json.dumps({"esversion": ESVERSION, "files": files}), timeout))
        if "error" in answer:
            raise RuntimeError(f"JSHint failed: {str(answer['error'])[:300]}")
        return [[_smell(e) for e in errors] for errors in answer["results"]]


def _smell(e: dict[str, object]) -> Smell:
    """One of JSHint's errors as its checkstyle report gives it (an XML attribute: line breaks
    and tabs read as spaces)."""
    message = re.sub(r"[\t\n\r]", " ", str(e.get("reason") or "")).strip()
    return Smell("jshint", int(str(e.get("line") or 0)), str(e.get("code") or "jshint"), message,
                 int(str(e.get("col") or 0)) or None)


_server = JshintServer()
atexit.register(_server.stop)


def warm_up() -> None:
    """Start the JSHint server (a long-lived process, e.g. a worker)."""
    if unavailable_reason() is None:
        with contextlib.suppress(ServerUnavailable):
            _server.start()


def requests(codes: Mapping[str, str]) -> list[list[str]]:
    """The names of `codes`, in requests of at most MAX_REQUEST_BYTES of JSON-escaped code."""
    out: list[list[str]] = []
    size = MAX_REQUEST_BYTES
    for name, code in codes.items():
        n = len(json.dumps(code)) + 32
        if size + n > MAX_REQUEST_BYTES - 64:
            out.append([])
            size = 0
        out[-1].append(name)
        size += n
    return out


def detect_javascript(files: Mapping[str, str]) -> dict[str, SmellReport]:
    reason = unavailable_reason()
    if reason:
        return {name: SmellReport(skipped=reason) for name in files}
    out = {name: SmellReport() for name in files}
    todo: dict[str, str] = {}
    for name, code in files.items():
        size = len(code.encode("utf-8", "surrogatepass"))
        if size > MAX_FILE_BYTES:
            out[name].skipped = f"too large for JSHint ({size} bytes; at most {MAX_FILE_BYTES})"
        else:
            todo[name] = code
    for batch in requests(todo):
        try:
            found = _server.lint([todo[n] for n in batch])
        except ServerUnavailable:  # cannot start, or stopped: this batch goes to the command line
            for name, rep in detect_with_cli({n: todo[n] for n in batch}).items():
                out[name] = rep
            continue
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError, ValueError) as e:
            for name in batch:
                out[name].skipped = f"JSHint did not run: {e}"
            continue
        for name, smells in zip(batch, found, strict=True):
            out[name].smells = smells
    return out


def detect_with_cli(files: Mapping[str, str]) -> dict[str, SmellReport]:
    """JSHint's command line over the files (one run per module kind), checkstyle XML."""
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
