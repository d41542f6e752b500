"""pylint's design checks counted in process (analyzers/crscore/smells/design.py) against
pylint itself, on a corpus of real files: the Python files under tests/fixtures/ (with
tests/fixtures/smells/design_edges.py, the checks' corner cases), the Python code of the
bundled datasets (the crscore-human hunks, QuixBugs' programs), the Python hunks of the PR
fixtures, and rtcbot's own modules (analyzers/, reporters/: real code with most of the smells).
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

from analyzers.code.diff import parse_diff
from analyzers.crscore.smells import design
from analyzers.crscore.smells.python import DESIGN_SMELLS, detect_python, parseable
from analyzers.tools.programs import python_argv
from tests.support import DATA, FIXTURES, ROOT

Key = tuple[str, int, str, str, str]  # file, line, symbol, message, object

# Each smell found here that pylint does not report on the corpus, and why.
DIFFERENCES: dict[tuple[str, int, str], str] = {
    # pylint obeys `# pylint: disable=…` comments in the code it reads; rtcbot reads the code
    # of a pull request's author, who must not be able to hide a smell from the score.
    ("design_edges.py", 9, "too-many-arguments"): "the code's own `# pylint: disable` comment",
}


def pylint_command(files: list[Path]) -> list[str]:
    """pylint as rtcbot ran it for these smells, with the same thresholds."""
    return [*python_argv("-m", "pylint"), "--disable=all", "--enable=" + ",".join(DESIGN_SMELLS),
            "--output-format=json", "--persistent=n", "--score=n",
            f"--max-statements={design.MAX_STATEMENTS}", f"--max-args={design.MAX_ARGS}",
            f"--max-positional-arguments={design.MAX_ARGS}", f"--max-branches={design.MAX_BRANCHES}",
            f"--max-public-methods={design.MAX_PUBLIC_METHODS}", f"--max-attributes={design.MAX_ATTRIBUTES}",
            *map(str, files)]


def corpus() -> dict[str, str]:
    """File name → Python code that parses."""
    out: dict[str, str] = {}
    for p in sorted(FIXTURES.rglob("*.py")):
        out[p.name if p.name == "design_edges.py" else f"fixture_{len(out)}.py"] = p.read_text(encoding="utf-8")
    for d in sorted((FIXTURES / "prs").glob("*.diff")):
        for f, h in parse_diff(d.read_text(encoding="utf-8")).hunks():
            if f.language == "python":
                out[f"pr_{len(out)}.py"] = h.new_code
    for line in (DATA / "crscore-human" / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("lang") == "py":
            for _, h in parse_diff("--- a/x.py\n+++ b/x.py\n" + row["diff"]).hunks():
                out[f"crscore_{len(out)}.py"] = h.new_code
    for line in (DATA / "repair" / "quixbugs-python-dev.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[f"quixbugs_{len(out)}.py"] = row["buggy"]
        out[f"quixbugs_{len(out)}.py"] = row["reference"]
    for package in ("analyzers", "reporters"):
        for p in sorted((ROOT / package).rglob("*.py")):
            out[f"own_{len(out)}_{p.stem}.py"] = p.read_text(encoding="utf-8")
    return {name: fixed for name, code in out.items() if (fixed := parseable(code)) is not None}


@pytest.mark.slow
def test_the_design_smells_are_pylints(tmp_path: Path) -> None:
    files = corpus()
    for name, code in files.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    proc = subprocess.run(pylint_command(sorted(tmp_path.glob("*.py"))), capture_output=True, text=True,
                          timeout=600, check=False, cwd=tmp_path)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    theirs: set[Key] = {(Path(m["path"]).name, m["line"], m["symbol"], m["message"], m["obj"])
                        for m in json.loads(proc.stdout)}
    ours: set[Key] = {(name, m.line, m.symbol, m.message, m.obj)
                      for name, code in files.items() for m in design.design_messages(ast.parse(code))}
    differences = {k[:3]: k for k in theirs ^ ours}
    assert set(differences) == set(DIFFERENCES), sorted(differences.values())
    assert not theirs - ours  # pylint found nothing these counts miss
    found = {symbol for _, _, symbol, _, _ in ours}
    assert found == set(DESIGN_SMELLS)  # every check has something to agree on
    assert len(ours) >= 50 and len(files) >= 300


def test_the_smells_read_as_pylints_did() -> None:
    code = "class A:\n    def m(self, a, b, c, d, e, f):\n        return a\n"
    (smell,) = [s for s in detect_python({"a.py": code})["a.py"].smells if s.rule == "too-many-arguments"]
    assert (smell.line, smell.message) == (2, "Too many arguments (6/5)")
    assert smell.sentence() == "line 2, long parameter list smell in `A.m`: Too many arguments (6/5)"


def test_deep_code_is_counted_without_recursion() -> None:
    deep = "def f(a, b, c, d, e, g):\n    return " + " + ".join(["a"] * 2500) + "\n"
    assert [m.symbol for m in design.design_messages(ast.parse(deep))] == ["too-many-arguments"]
