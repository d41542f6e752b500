"""The constructs a fix is judged by: what a piece of code does, as types (issue #51, item 2).

A `Construct` is one thing the code does — a call by its dotted name, an import, or one form
of dynamic dispatch — read from the AST (Python: analyzers/autofix/delta_py.py) or the tokens
(Java, JavaScript: analyzers/autofix/delta_tokens.py). Its kind (`Added`) is what a refusal
carries, never a sentence matched back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Added(enum.Enum):
    """What a fix added that refuses it (or, for CALL and IMPORT, is checked on the list)."""

    CALL = "call not in the flagged code nor on the rule's list"
    IMPORT = "import of a module the rule's list does not name"
    DYNAMIC = "dynamic dispatch"  # getattr, __import__, importlib, eval/exec, reflection, dunder access
    COMPUTED = "call of something that is not a name"  # a subscript, a call's result, a lambda
    ALIAS = "dangerous callable or imported name handed on without a call"  # run = eval; m = subprocess
    UNPACKED = "unpacked arguments"  # **kwargs, *args, a spread: what they hold is not read
    SHELL = "command through a shell"  # shell= not literal False, shell by position, ["sh", "-c", …]
    UNREADABLE = "code that could not be read"  # nothing unread is verified


# a program that runs its arguments as shell code, as the first item of an argument list
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox", "cmd", "cmd.exe",
                    "powershell", "powershell.exe", "pwsh", "env"})


@dataclass(frozen=True)
class Construct:
    kind: Added
    text: str  # the name (`subprocess.call`, `shlex`) or the code (`shell=bool(1)`), at most ~80 characters

    def words(self) -> str:
        return f"{self.kind.value} `{self.text}`"
