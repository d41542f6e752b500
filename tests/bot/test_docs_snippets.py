"""Every `.github/rtcbot.yml` snippet in the README and docs/*.md is a valid config, read by the
loader the App uses (`bot.core.config.parse_config`); one the doc marks `<!-- invalid on purpose -->`
on the line before its fence must be refused, so an example of an error stays one.

A ```yaml (or ```yml) block is a config unless it is a GitHub Actions workflow or a piece of one
(top-level `on`, `jobs`, `steps`, `with`, `uses`, `runs-on`, `permissions`), or a dismissals file
(`.github/rtcbot-dismissals.yml`: one top-level key, `dismissals`, a list), which is read by the
loader the Action uses (`bot.core.dismissals_file.parse_dismissals`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from analyzers.context import Tools
from bot.core.config import parse_config
from bot.core.dismissals_file import parse_dismissals
from tests.support import ROOT

INVALID_MARK = "<!-- invalid on purpose -->"
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)(?P<info>[^\n`]*)$")
WORKFLOW_KEYS = {"on", True, "jobs", "steps", "with", "uses", "runs-on", "permissions"}  # `on:` reads as True


@dataclass(frozen=True)
class Snippet:
    doc: Path
    line: int  # of the opening fence, 1-based
    text: str
    invalid_on_purpose: bool

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def yaml_blocks(doc: Path) -> list[Snippet]:
    """The ```yaml / ```yml blocks of a Markdown file, each with whether the last non-blank line
    before its fence is INVALID_MARK."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    out: list[Snippet] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m["fence"], m["info"].strip().split(" ")[0].lower()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)
                    and not lines[j].strip().strip(fence[0])), len(lines))
        if lang in ("yaml", "yml"):
            before = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
            out.append(Snippet(doc, i + 1, "\n".join(lines[i + 1:end]) + "\n", before == INVALID_MARK))
        i = end + 1
    return out


def is_workflow(text: str) -> bool:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return False  # not a workflow we can read: judged as a config (and refused)
    return isinstance(data, dict) and bool(WORKFLOW_KEYS & set(data))


def config_snippets() -> list[Snippet]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [s for doc in docs for s in yaml_blocks(doc) if not is_workflow(s.text)]


SNIPPETS = config_snippets()


def is_dismissals_file(text: str) -> bool:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and set(data) == {"dismissals"} and isinstance(data["dismissals"], list)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.where for s in SNIPPETS])
def test_each_config_snippet_in_the_docs_is_what_it_says(snippet: Snippet) -> None:
    if is_dismissals_file(snippet.text):
        error = parse_dismissals(snippet.text, name=snippet.where).error
    else:
        error = parse_config(snippet.text, Tools(), name=snippet.where).error
    if snippet.invalid_on_purpose:
        assert error is not None, f"{snippet.where} is marked {INVALID_MARK} but is valid"
    else:
        assert error is None, error


def test_the_docs_snippets_are_found() -> None:
    """The finder is not vacuous: the App's sample config (docs/github-app.md §5, with `feedback:
    on` and `suggestions:`), qualify.md's, and the marked invalid example are among them; the
    Action's workflow pieces are not."""
    where = {s.where: s for s in SNIPPETS}
    app = [s for w, s in where.items() if w.startswith("docs/github-app.md") and not s.invalid_on_purpose]
    assert any("feedback: on" in s.text and "suggestions:" in s.text for s in app), sorted(where)
    assert any(w.startswith("docs/qualify.md") for w in where)
    assert any(w.startswith("docs/action.md") and is_dismissals_file(s.text) for w, s in where.items())
    assert any(s.invalid_on_purpose for s in SNIPPETS)
    assert not any("llm-base-url" in s.text for s in SNIPPETS)  # docs/action.md's `with:` is a workflow


def test_the_finder_reads_fences_and_the_mark(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("text\n\n```yaml\ndrafts: on\n```\n\n" + INVALID_MARK + "\n\n```yml\ndrafts: maybe\n```\n"
                   "````md\n```yaml\nnot: a block of this file\n```\n````\n"
                   "```yaml\njobs: {a: {runs-on: ubuntu-latest}}\n```\n", encoding="utf-8")
    blocks = yaml_blocks(doc)
    assert [(b.line, b.text, b.invalid_on_purpose) for b in blocks] == [
        (3, "drafts: on\n", False), (9, "drafts: maybe\n", True),
        (17, "jobs: {a: {runs-on: ubuntu-latest}}\n", False)]
    assert [is_workflow(b.text) for b in blocks] == [False, False, True]
    assert parse_config(blocks[0].text).error is None and parse_config(blocks[1].text).error is not None
