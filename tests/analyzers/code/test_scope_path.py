"""The path of definitions and branches around a line (analyzers/code/scope_path.py), Python and
JavaScript: what tells same-named definitions apart in a fingerprint (issue #51, item 3)."""

from __future__ import annotations

from analyzers.code.scope_path import paths

PY = '''import functools
import os


@functools.singledispatch
def handle(x):
    return x


@handle.register
def _(x: int):
    return run(x)


@handle.register
def _(x: str):
    return run(x)


if os.name == "nt":
    def run(cmd):
        return cmd
elif os.name == "java":
    def run(cmd):
        return cmd
else:
    def run(cmd):
        return cmd


class Box:
    @property
    def size(self):
        return run(self)

    @size.setter
    def size(self, value):
        return run(value)

    def plain(self):
        try:
            return run(self)
        except OSError as e:
            return run(e)
        finally:
            run(None)

    def pick(self, kind):
        match kind:
            case "a":
                return run(kind)
            case _:
                return run(kind)
'''


def test_python_names_same_named_definitions_by_order_branches_and_accessors() -> None:
    got = paths(PY, "python", [7, 12, 17, 22, 25, 28, 34, 38, 42, 44, 46, 51, 53, 99])
    assert got == {
        7: "",  # a definition alone by its name: the path adds nothing
        12: "function _ #1/2", 17: "function _ #2/2",  # singledispatch's overloads, by their order
        22: "if os.name == 'nt' > function run #1/3",
        25: "else of if os.name == 'nt' > if os.name == 'java' > function run #2/3",
        28: "else of if os.name == 'nt' > else of if os.name == 'java' > function run #3/3",
        34: "class Box > method size #1/2 (getter)", 38: "class Box > method size #2/2 (setter)",
        42: "class Box > method plain > try", 44: "class Box > method plain > except OSError",
        46: "class Box > method plain > finally",
        51: "class Box > method pick > case 'a'", 53: "class Box > method pick > case _",
        99: "",
    }


def test_python_that_does_not_parse_or_another_language_has_no_path() -> None:
    assert paths("def f(:\n    pass\n", "python", [2]) == {2: ""}
    assert paths("x = 1\n", None, [1]) == {1: ""}


JS = '''const handlers = {
  admin: {
    run(cmd) {
      return eval(cmd);
    },
  },
  "guest": {
    run(cmd) {
      return eval(cmd);
    },
  },
  'other': {
    run(cmd) {
      return eval(cmd);
    },
  },
};

function decide(a) {
  if (a.admin) {
    return eval(a);
  } else {
    return eval(a);
  }
}

function plain(a) {
  return eval(a);
}
'''


def test_javascript_names_object_literal_keys_and_branches() -> None:
    got = paths(JS, "javascript", [4, 9, 14, 21, 23, 28])
    assert got[4] == "object handlers > key admin > function run"
    assert got[9].startswith("object handlers > key '") and got[9].endswith("' > function run")
    assert len({got[4], got[9], got[14]}) == 3  # quoted keys by a digest of their text: three paths
    assert got[21] == "function decide > if (a.admin)"
    assert got[23] == "function decide > else"
    assert got[28] == ""  # a function alone: nothing more than its name
    moved = paths("// first\n" + JS, "javascript", [5, 10])
    assert (moved[5], moved[10]) == (got[4], got[9])  # the path is the code's, not its lines'
