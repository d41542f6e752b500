"""A file's language from its name's allowlist and, where the name says no code language, from
its content (analyzers/code/languages.py)."""

from __future__ import annotations

import pytest

from analyzers.code.languages import (
    CODE_LANGUAGES,
    SCAN_SUFFIX,
    detect_language,
    language_of,
    looks_like_python,
    mode_language,
    shebang_language,
)

EVAL_PY = 'def handle(request):\n    return eval(request.args["q"])\n'


@pytest.mark.parametrize(("path", "lang"), [
    ("app.py", "python"), ("src/auth.mts", "typescript"), ("src/auth.cts", "typescript"),
    ("lib/util.min.js", "javascript"), ("static/app.bundle.js", "javascript"), ("A.JAVA", "java"),
    ("auth_pb2.py", "python"), ("README.md", "markdown"), ("bin/deploy", None), ("notes.txt", None),
])
def test_the_name_says_a_language_from_an_allowlist(path: str, lang: str | None) -> None:
    assert language_of(path) == lang
    assert detect_language(path) == lang  # no content: the name alone


@pytest.mark.parametrize(("line", "lang"), [
    ("#!/usr/bin/env python3", "python"), ("#!/usr/bin/python3.12 -u", "python"),
    ("#!/usr/bin/env -S python3 -X dev", "python"), ("#! /usr/bin/env PYTHONUTF8=1 pypy3", "python"),
    ("#!/usr/bin/env node", "javascript"), ("#!/bin/bash -e", "shell"), ("#!/usr/bin/env deno", "typescript"),
    ("#!/usr/bin/perl", None), ("# not a shebang", None), ("#!", None),
])
def test_a_shebang_names_its_interpreters_language(line: str, lang: str | None) -> None:
    assert shebang_language(line + "\nrest\n") == lang


def test_a_mode_line_names_a_language_in_the_first_or_last_lines() -> None:
    assert mode_language("# -*- mode: python; coding: utf-8 -*-\nx\n") == "python"
    assert mode_language("x = 1\n" * 20 + "// vim: set ft=javascript :\n") == "javascript"
    assert mode_language("# -*- coding: utf-8 -*-\n") is None
    assert mode_language("x\n" * 20 + "# vim: ft=python\n" + "y\n" * 20) is None  # in the middle: not read


def test_python_is_recognised_by_a_parse_that_does_something() -> None:
    assert looks_like_python(EVAL_PY) and looks_like_python("import os\n") and looks_like_python("run(x)\n")
    assert not looks_like_python("Just some prose, nothing more.\n")
    assert not looks_like_python('{"key": "value"}\n')  # JSON parses, and does nothing
    assert not looks_like_python("requests==2.31\nflask\n")  # a requirements file
    assert not looks_like_python("(" * 200_000)  # too deep for the parser: not a crash


@pytest.mark.parametrize(("path", "text", "lang"), [
    ("bin/deploy", "#!/usr/bin/env python3\n" + EVAL_PY, "python"),
    ("bin/deploy", "#!/usr/bin/env node\neval(process.argv[2]);\n", "javascript"),
    ("bin/deploy", EVAL_PY, "python"),  # no shebang: the parse says it
    ("notes.txt", EVAL_PY, "python"),  # a misleading extension
    ("README.md", "#!/usr/bin/env python3\n" + EVAL_PY, "python"),
    ("README.md", "# Title\n\nSome words about the project.\n", "markdown"),
    ("data.json", '{"a": 1}\n', "json"),
    ("app.js", "#!/usr/bin/env python3\n", "javascript"),  # a code name keeps its language
    ("bin/run", "plain words\n", None),
])
def test_the_content_decides_where_the_name_says_no_code(path: str, text: str, lang: str | None) -> None:
    assert detect_language(path, text) == lang


def test_every_scanned_language_has_a_suffix_semgrep_knows() -> None:
    for lang in ("python", "javascript", "typescript", "java"):
        assert lang in CODE_LANGUAGES and language_of("x" + SCAN_SUFFIX[lang]) == lang
