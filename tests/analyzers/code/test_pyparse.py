"""analyzers/code/pyparse.py: Python parsed from many threads at once, and the parser's limits.

CPython 3.11 raises `SystemError: AST constructor recursion depth mismatch` when two threads
build AST objects at once and one of them is switched out in the middle (a garbage collection
running a finalizer lets that happen). The workload below provokes it the same way: objects with
finalizers in reference cycles, a tiny switch interval, threads at different stack depths.
"""

from __future__ import annotations

import ast
import hashlib
import sys
import threading
from collections import Counter
from collections.abc import Iterator

import pytest

from analyzers.autofix.text import python_parses
from analyzers.code import pyparse
from analyzers.crscore.smells.python import parseable
from analyzers.execution.repair import trim_to_valid_python
from analyzers.synthesis_rtc.regions import candidate_regions

THREADS = 8
PARSES = 200

# each is too deep or too odd for CPython's parser; how 3.11 says so differs (in brackets)
UNPARSABLE = {
    "5000 nested parentheses": "(" * 5000 + ")" * 5000,  # [SyntaxError: too many nested parentheses]
    "100000 nested lists": "[" * 100_000 + "]" * 100_000,  # [SyntaxError]
    "100000 unary minuses": "-" * 100_000 + "1",  # [MemoryError: the parser's stack]
    "200000 attribute accesses": "a" + ".b" * 200_000,  # [RecursionError during AST construction]
    "200000 additions": "+".join(["1"] * 200_000),  # [RecursionError]
    "a NUL byte": "x = 1\0\n",  # [ValueError]
}

# the same limits, reached sooner (for the threads: thousands of parses)
TOO_DEEP = [
    "(" * 300 + ")" * 300,  # [SyntaxError]
    "-" * 7000 + "1",  # [MemoryError]
    "a" + ".b" * 5000,  # [RecursionError]
    "+".join(["1"] * 5000),  # [RecursionError]
    "x = 1\0\n",  # [ValueError]
]

VALID = [
    "x = 1\n",
    "def f(a, b=2, *c, **d):\n    return [i * a for i in range(b) if i % 2]\n",
    "class C:\n    @property\n    def p(self) -> int:\n        return self._p\n",
    "a" + ".b" * 1500 + "\n",  # deep, yet within the parser's limits
    "+".join(["1"] * 1500) + "\n",
    "def g(x):\n" + "    x = x + 1\n" * 300 + "    return x\n",
    "(" * 150 + "1" + ")" * 150 + "\n",
]
BROKEN = ["def f(:\n    pass\n", "x = = 1\n", "return 1 2\n"]


def shape(tree: ast.AST) -> str:
    """A digest of the tree's nodes in walk order (iterative: ast.dump recurses too deep here)."""
    h = hashlib.sha256()
    for node in ast.walk(tree):
        names = [getattr(node, k, None) for k in ("id", "attr", "name", "arg")]
        value = node.value if isinstance(node, ast.Constant) else None
        h.update(repr((type(node).__name__, names, value)).encode())
    return h.hexdigest()


class Cycle:
    """Garbage that only the cycle collector frees, running Python code as it goes."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(50))


@pytest.fixture
def racy() -> Iterator[None]:
    """Threads switched as often as CPython allows (restored afterwards)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_a_module_parses_to_its_tree() -> None:
    tree = pyparse.parse("def f(x):\n    return x + 1\n")
    assert isinstance(tree, ast.Module)
    [fn] = tree.body
    assert isinstance(fn, ast.FunctionDef) and fn.name == "f"


@pytest.mark.parametrize("source", BROKEN)
def test_broken_source_is_a_syntax_error(source: str) -> None:
    with pytest.raises(SyntaxError):
        pyparse.parse(source)


@pytest.mark.parametrize("name", list(UNPARSABLE))
def test_too_deep_or_odd_source_is_a_syntax_error_not_a_crash(name: str) -> None:
    with pytest.raises(SyntaxError) as e:
        pyparse.parse(UNPARSABLE[name])
    assert type(e.value) is SyntaxError  # not a subclass the callers do not expect
    assert pyparse.parse("y = 2\n").body  # the parser works on afterwards


@pytest.mark.parametrize("name", list(UNPARSABLE))
def test_every_call_site_takes_deep_source_as_unparsable(name: str) -> None:
    source = UNPARSABLE[name]
    assert python_parses(source) is False
    assert parseable(source) is None
    assert candidate_regions(source, "x.py", {1}) == []
    assert trim_to_valid_python("x = 1\n" + source + "\n", max_chars=10**6) == "x = 1\n"  # the deep line goes


@pytest.mark.slow
def test_many_threads_parse_at_once_without_a_system_error(racy: None) -> None:
    sources = [*VALID, *BROKEN, *TOO_DEEP]
    want: dict[int, str | None] = {}
    for i, src in enumerate(sources):  # one thread first: what each source gives
        try:
            want[i] = shape(pyparse.parse(src))
        except SyntaxError:
            want[i] = None
    assert [want[i] is not None for i in range(len(VALID))] == [True] * len(VALID)
    assert all(want[i] is None for i in range(len(VALID), len(sources)))

    got: Counter[str] = Counter()
    wrong: list[str] = []
    lock = threading.Lock()

    def work(depth: int, seed: int) -> None:
        if depth:  # threads parse at different stack depths
            return work(depth - 1, seed)
        for n in range(PARSES):
            for _ in range(5):
                Cycle()
            i = (seed * 7 + n) % len(sources)
            try:
                result: str | None = shape(pyparse.parse(sources[i]))
                outcome = "tree"
            except SyntaxError:
                result, outcome = None, "unparsable"
            except BaseException as e:  # what the helper must never let through
                result, outcome = None, f"{type(e).__name__}: {e}"
            with lock:
                got[outcome] += 1
                if outcome not in ("tree", "unparsable") or result != want[i]:
                    wrong.append(f"source {i}: {outcome}")

    threads = [threading.Thread(target=work, args=(20 * (t % 4), t)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(got.values()) == THREADS * PARSES
    assert got["tree"] > 0 and got["unparsable"] > 0
    assert wrong == [], f"{len(wrong)} wrong results, e.g. {wrong[:5]}"
