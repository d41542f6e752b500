"""A changed file's language: from an allowlist of known extensions, and from its content where
the extension is unknown or says "not code" (a shebang, an editor's mode line, Python that
parses as a program).

The name is the pull request author's to choose, so it never takes code out of a scan: an
extension-less script with `#!/usr/bin/env python3` is Python, `auth.mts` is TypeScript, and a
`notes.txt` that holds `import os` and a call is Python. Where the content says a language and
the name says another code language, the name is kept (Semgrep parses by it; a file that does not
parse is reported as not scanned, never as clean). One function, `detect_language`, decides;
`language_of` is the name's part alone (for callers that hold no content).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

LANGUAGES: Mapping[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python", ".java": "java", ".js": "javascript",
    ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript",
    ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rb": "ruby", ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
    ".hpp": "cpp", ".cs": "csharp", ".kt": "kotlin", ".scala": "scala", ".php": "php",
    ".swift": "swift", ".sh": "shell", ".bash": "shell", ".md": "markdown", ".yml": "yaml",
    ".yaml": "yaml", ".json": "json", ".html": "html", ".css": "css", ".sql": "sql",
}

# Languages whose hunks are code (EditingRTC and friends skip prose and data files).
DATA_LANGUAGES = frozenset({"markdown", "yaml", "json"})
CODE_LANGUAGES = frozenset(LANGUAGES.values()) - DATA_LANGUAGES

# The extension Semgrep takes a language by: a target whose own name says otherwise (or that
# Semgrep's default ignores would drop, such as `*.min.js`) is scanned under a neutral name with it.
SCAN_SUFFIX: Mapping[str, str] = {
    "python": ".py", "javascript": ".js", "typescript": ".ts", "java": ".java", "go": ".go",
    "ruby": ".rb", "rust": ".rs", "c": ".c", "cpp": ".cpp", "csharp": ".cs", "kotlin": ".kt",
    "scala": ".scala", "php": ".php", "swift": ".swift", "shell": ".sh", "html": ".html",
    "sql": ".sql", "json": ".json", "yaml": ".yaml",
}

# A shebang's interpreter (its name without a version: python3.12 → python) → language.
INTERPRETERS: Mapping[str, str] = {
    "python": "python", "pypy": "python", "node": "javascript", "nodejs": "javascript",
    "deno": "typescript", "bun": "typescript", "ts-node": "typescript", "tsx": "typescript",
    "sh": "shell", "bash": "shell", "dash": "shell", "zsh": "shell", "ksh": "shell",
    "ruby": "ruby", "php": "php", "java": "java", "jshell": "java",
}
# An editor's mode line (Emacs `-*- mode: python -*-`, Vim `vim: ft=python`) → language.
MODES: Mapping[str, str] = {
    "python": "python", "py": "python", "javascript": "javascript", "js": "javascript",
    "typescript": "typescript", "ts": "typescript", "java": "java", "ruby": "ruby", "sh": "shell",
    "shell": "shell", "bash": "shell", "php": "php",
}
_VERSION = re.compile(r"[\d.]+$")
_MODE = re.compile(r"-\*-.*?(?:mode:\s*)?([\w+-]+)\s*(?:;.*)?-\*-|\b(?:vim?|ex):.*?\b(?:ft|filetype|syntax)=([\w+-]+)",
                    re.I)
SNIFF_CHARS = 200_000  # the content read to decide (a program longer than this is judged by its start)
MODE_LINES = 5  # mode lines are read in the first and the last lines


def language_of(path: str) -> str | None:
    """The language the file's name says (its extension, case-insensitive), else None."""
    low = path.lower()
    for ext, lang in LANGUAGES.items():
        if low.endswith(ext):
            return lang
    return None


def shebang_language(text: str) -> str | None:
    """The language of a `#!` line's interpreter (`/usr/bin/env -S python3 -u` → python)."""
    if not text.startswith("#!"):
        return None
    words = text[2:].split("\n", 1)[0].split()
    while words:
        name = words.pop(0).rsplit("/", 1)[-1]
        if name == "env":
            words = [w for w in words if not w.startswith("-") and "=" not in w]
            continue
        return INTERPRETERS.get(_VERSION.sub("", name).lower()) or INTERPRETERS.get(name.lower())
    return None


def mode_language(text: str) -> str | None:
    """The language an editor's mode line names, in the first or last MODE_LINES lines."""
    lines = text.splitlines()
    for line in (*lines[:MODE_LINES], *lines[-MODE_LINES:]):
        m = _MODE.search(line)
        if m and (lang := MODES.get((m.group(1) or m.group(2) or "").lower())):
            return lang
    return None


def looks_like_python(text: str) -> bool:
    """The text parses as Python and does something a program does: a definition, an import,
    or a call (plain prose fails to parse; a bare word or a JSON object parses but does none)."""
    try:
        tree = ast.parse(text[:SNIFF_CHARS])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    program = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Call)
    return any(isinstance(node, program) for node in ast.walk(tree))


def sniff(text: str) -> str | None:
    """The language the content alone says: a shebang, a mode line, else Python by its parse."""
    head = text[:SNIFF_CHARS].lstrip("\ufeff")
    return shebang_language(head) or mode_language(head) or ("python" if looks_like_python(head) else None)


def detect_language(path: str, text: str | None = None) -> str | None:
    """The file's language: the name's where it says a code language; else (no extension, an
    unknown one, or a data or prose one: `.txt`, `.md`, `.json`) what the content says, when
    there is content; else the name's (or None)."""
    by_name = language_of(path)
    if by_name in CODE_LANGUAGES or text is None or not text.strip():
        return by_name
    return sniff(text) or by_name
