"""Nothing in bot/ or reporters/ names an analyzer (issue #42, "Analyzers describe themselves"):
what one is, does and says comes from the analyzer, through analyzers/registry.py.

Every string literal of bot/ and reporters/ (read from the syntax tree: f-strings' parts and
docstrings included) that equals a registered analyzer's name, in either spelling
(`editing_rtc`, `editing-rtc`), or its title (`EditingRTC`) is a failure, unless ALLOWED lists
that file and literal with the reason it means something else. The failure names every place,
so one run shows all that is left.

Nor does bot/ or reporters/ import an analyzer's package (`analyzers.crscore…`) to reach it
around the registry (a worker's warm-up, `rtcbot doctor`'s tool checks, `explain` reading an
analyzer's evidence once did), unless IMPORTS_ALLOWED lists the file with its reason."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from analyzers import registry
from tests.support import ROOT, syntax_nodes

PACKAGES = ("bot", "reporters")
_EVAL = "`rtcbot eval …`: the evaluation of the paper's method, named after it"
_DATASET = "a bundled dataset's kind: the evaluation that reads it"
_KIND = "a comment's kind on GitHub: a review comment (on a line), not the Review analyzer"
_FIELD = "a field of the human study's rows: the human-written review"

# (file, literal) → why that literal there is not the analyzer
ALLOWED: dict[tuple[str, str], str] = {
    ("bot/entry.py", "review"): "the command `rtcbot review`",
    ("bot/cli/review.py", "review"): "the command `rtcbot review`",
    ("bot/github/conversation.py", "review"): _KIND,
    ("bot/app/command_events.py", "review"): _KIND,
    ("bot/app/comment_commands.py", "review"): _KIND,
    ("bot/cli/evaluate.py", "editing-rtc"): _EVAL,
    ("bot/cli/evaluate.py", "crscore"): _EVAL,
    ("bot/cli/evaluate.py", "autofix"): _EVAL,
    ("bot/cli/evaluate.py", "synthesis-rtc"): _EVAL,
    ("bot/cli/commands/eval_editing_rtc.py", "editing-rtc"): _EVAL,
    ("bot/cli/commands/eval_crscore.py", "crscore"): _EVAL,
    ("bot/cli/commands/eval_autofix.py", "autofix"): _EVAL,
    ("bot/cli/commands/eval_synthesis_rtc.py", "synthesis-rtc"): _EVAL,
    ("bot/cli/commands/eval_synthesis_rtc.py", "SynthesisRTC"): _EVAL + " (its progress bar)",
    ("bot/cli/commands/eval_crscore.py", "review"): _FIELD,
    ("bot/cli/commands/eval_review_filter.py", "review"): _FIELD,
    ("bot/cli/commands/eval_review_filter.py", "crscore"): _DATASET,
    ("bot/cli/datasets/__init__.py", "crscore"): _DATASET,
    ("bot/cli/datasets/__init__.py", "editing-rtc"): _DATASET,
    ("reporters/eval_plots.py", "crscore"): "a field of the chart of `rtcbot eval crscore`",
}


# file → why it imports an analyzer's package: the evaluations of the paper's methods
IMPORTS_ALLOWED: dict[str, str] = {
    "bot/cli/commands/_crscore_cv.py": _EVAL,
    "bot/cli/commands/eval_autofix.py": _EVAL,
    "bot/cli/commands/eval_crscore.py": _EVAL,
    "bot/cli/commands/eval_editing_rtc.py": _EVAL,
    "bot/cli/commands/eval_review_filter.py": _EVAL,
    "bot/cli/commands/eval_synthesis_rtc.py": _EVAL,
    "bot/cli/commands/qualify.py": "`rtcbot qualify`: a model qualified by EditingRTC's round trip on a sample",
}


def analyzer_packages() -> dict[str, str]:
    """Every registered analyzer's package ("analyzers.crscore") → that analyzer's name."""
    return {target.split(":")[0].rsplit(".", 1)[0]: name for name, target in registry.ANALYZERS.items()}


def importing(root: Path, packages: Mapping[str, str], allowed: Mapping[str, str] = IMPORTS_ALLOWED,
              where: tuple[str, ...] = PACKAGES) -> list[str]:
    """One line per import, anywhere in a module of `where` (a function's too), of an analyzer's
    package or a module in it, from a file `allowed` does not list."""
    out = []
    for package in where:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in allowed:
                continue
            for node in syntax_nodes(path):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                out += [f"{rel}:{node.lineno}: imports {n}, the analyzer {packages[p]}'s (ask analyzers/registry.py)"
                        for n in names for p in packages if n == p or n.startswith(p + ".")]
    return out


def analyzer_words() -> dict[str, str]:
    """Every literal that names a registered analyzer → that analyzer's name."""
    words: dict[str, str] = {}
    for name in registry.ANALYZERS:
        for word in (name, name.replace("_", "-"), registry.title(name)):
            words[word] = name
    return words


def literals(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[tuple[str, int, str]]:
    """(file, line, text) of every string literal in `packages` (folders under `root`), in order."""
    out = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for node in syntax_nodes(path):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    out.append((rel, node.lineno, node.value))
    return sorted(out, key=lambda t: (t[0], t[1]))


def naming(root: Path, words: Mapping[str, str], allowed: Mapping[tuple[str, str], str] = ALLOWED,
           packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """One line per literal of `packages` that names an analyzer and is not allowed."""
    return [f"{rel}:{line}: {text!r} names the analyzer {words[text]} (ask analyzers/registry.py)"
            for rel, line, text in literals(root, packages) if text in words and (rel, text) not in allowed]


def test_nothing_in_bot_or_reporters_names_an_analyzer() -> None:
    found = naming(ROOT, analyzer_words())
    assert not found, f"{len(found)} literals name an analyzer:\n" + "\n".join(found)


def test_every_allowed_literal_is_still_there() -> None:
    """An entry whose literal has gone is removed, so that the list stays the short, true one."""
    present = {(rel, text) for rel, _, text in literals(ROOT)}
    stale = sorted(set(ALLOWED) - present)
    assert not stale, f"no longer in the code, remove from ALLOWED: {stale}"
    words = analyzer_words()
    assert all(text in words for _, text in ALLOWED), "ALLOWED lists only literals that name an analyzer"


def test_a_default_written_as_a_name_again_fails(tmp_path: Path) -> None:
    """`"crscore"` written back into bot/app/settings.py (as the comment analyzers' default once
    was) is found, in either spelling and as a title, even inside an f-string; the same literal
    where ALLOWED says why it is not the analyzer passes."""
    settings = tmp_path / "bot" / "app" / "settings.py"
    settings.parent.mkdir(parents=True)
    settings.write_text('DEFAULT = ["crscore"]\nCLI = "editing-rtc"\nNOTE = f"{1} AutoFix"\nOK = "crscored"\n'
                        'TITLE = f"rtcbot / {\'EditingRTC\'}"\n', encoding="utf-8")
    (tmp_path / "bot" / "entry.py").write_text('COMMANDS = {"review": "bot.cli.review:review"}\n', encoding="utf-8")
    (tmp_path / "reporters").mkdir()
    found = naming(tmp_path, analyzer_words())
    assert found == [
        "bot/app/settings.py:1: 'crscore' names the analyzer crscore (ask analyzers/registry.py)",
        "bot/app/settings.py:2: 'editing-rtc' names the analyzer editing_rtc (ask analyzers/registry.py)",
        "bot/app/settings.py:5: 'EditingRTC' names the analyzer editing_rtc (ask analyzers/registry.py)",
    ]  # "{1} AutoFix" and "crscored" are not equal to a name; bot/entry.py's "review" is ALLOWED
    assert naming(tmp_path, analyzer_words(), allowed={}) == [
        *found, "bot/entry.py:1: 'review' names the analyzer review (ask analyzers/registry.py)"]


def test_nothing_in_bot_or_reporters_imports_an_analyzer() -> None:
    found = importing(ROOT, analyzer_packages())
    assert not found, f"{len(found)} imports reach an analyzer around the registry:\n" + "\n".join(found)
    stale = sorted(rel for rel in IMPORTS_ALLOWED if not (ROOT / rel).exists())
    assert not stale, f"no longer in the code, remove from IMPORTS_ALLOWED: {stale}"


def test_an_import_of_an_analyzer_again_fails(tmp_path: Path) -> None:
    """A warm-up that imports CRScore's module again (as the worker's once did), even inside a
    function, is found; the same import in a file IMPORTS_ALLOWED lists passes."""
    worker = tmp_path / "bot" / "app" / "worker.py"
    worker.parent.mkdir(parents=True)
    worker.write_text("import analyzers.editing_rtc\nfrom analyzers import registry\n\n\ndef warm_up():\n"
                      "    from analyzers.crscore.analyzer import warm_up\n    warm_up()\n", encoding="utf-8")
    (tmp_path / "reporters").mkdir()
    assert importing(tmp_path, analyzer_packages()) == [
        "bot/app/worker.py:1: imports analyzers.editing_rtc, the analyzer editing_rtc's (ask analyzers/registry.py)",
        "bot/app/worker.py:6: imports analyzers.crscore.analyzer, the analyzer crscore's (ask analyzers/registry.py)"]
    assert importing(tmp_path, analyzer_packages(), allowed={"bot/app/worker.py": "a test"}) == []
