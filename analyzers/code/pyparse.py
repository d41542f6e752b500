"""Python source → `ast.Module`, safe from many threads at once: the one way analyzers parse
Python.

CPython 3.11's `ast.parse` keeps the AST constructor's recursion counter in state that every
thread shares: two threads turning a tree into Python objects at once (a garbage collection or
a finalizer lets the other run in the middle) end in `SystemError: AST constructor recursion
depth mismatch` for perfectly good source. So every parse here holds one lock (re-entrant: a
finalizer that parses in the middle of a parse on the same thread waits on nothing).

What the parser cannot turn into a tree comes out as `SyntaxError`, whatever CPython raised:
too deep (`RecursionError`, or `MemoryError` from the parser's own stack), a NUL byte
(`ValueError` on 3.11), or that `SystemError` — so each caller's "unparsable" path applies.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.RLock()
_UNPARSABLE = (SystemError, RecursionError, MemoryError, ValueError)


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """The module's tree; SyntaxError for anything the parser cannot make one of."""
    with _LOCK:
        try:
            return ast.parse(source, filename)
        except _UNPARSABLE as e:
            raise SyntaxError(f"cannot parse as Python ({type(e).__name__}: {str(e)[:200] or 'too deep'})",
                              (filename, 1, 1, "")) from e

