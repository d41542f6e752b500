"""A hunk is named by the definition its change is in at the head, not git's header context
(which names the definition above the hunk)."""

from __future__ import annotations

from analyzers.code.diff import parse_diff
from analyzers.code.enclosing import enclosing, enclosing_many, first_changed_line, hunk_label, hunk_labels

PY = '''\
import math


def running_mean(xs, k):
    return [sum(xs[i:i + k]) / k for i in range(len(xs) - k + 1)]


def _windowed_running_min(xs, k):
    out = []
    for i in range(len(xs) - k + 1):
        out.append(min(xs[i:i + k]))
    return out


class Stats:
    """Running figures."""

    size = 3

    @property
    def window(self):
        def inner():
            return self.size
        return inner()
'''

PY_DIFF = '''\
--- a/stats.py
+++ b/stats.py
@@ -8,6 +8,7 @@ def running_mean(xs, k):
 def _windowed_running_min(xs, k):
     out = []
     for i in range(len(xs) - k + 1):
+        # the window's minimum
         out.append(min(xs[i:i + k]))
     return out
''' + " \n"  # the hunk's last context line: a blank one


def test_python_hunk_is_named_by_the_function_it_changes_not_gits_header() -> None:
    [fc] = parse_diff(PY_DIFF).files
    [hunk] = fc.hunks
    assert hunk.section == "def running_mean(xs, k):"  # what git says: the function above
    assert first_changed_line(hunk) == 11
    assert hunk_label(hunk, PY, "python") == "function _windowed_running_min"


def test_python_nesting_classes_methods_decorators_and_module_level() -> None:
    assert enclosing(PY, "python", 23) == "function Stats.window.inner"
    assert enclosing(PY, "python", 20) == "method Stats.window"  # the decorator line
    assert enclosing(PY, "python", 18) == "class Stats"
    assert enclosing(PY, "python", 1) == ""


def test_gits_header_when_no_definition_is_found_at_the_head() -> None:
    [fc] = parse_diff(PY_DIFF).files
    [hunk] = fc.hunks
    assert hunk_label(hunk, None, "python") == "def running_mean(xs, k):"
    assert hunk_label(hunk, "def broken(:\n", "python") == "def running_mean(xs, k):"
    # parsed, no definition around it: git's context line all the same, so that the label does
    # not depend on whether the head's file was read (a patch file, or --git)
    assert hunk_label(hunk, "x = 1\n" * 20, "python") == "def running_mean(xs, k):"


JAVA = '''\
package shop;

/* a class { with braces in a comment */
public class Cart {
    private final String open = "{";

    @Override
    public String toString() {
        return "Cart}";
    }

    public int total(List<Item> items) throws IOException {
        int sum = 0;
        for (Item item : items) {
            sum += item.price();
        }
        Runnable r = new Runnable() {
            public void run() { }
        };
        items.forEach(i -> {
            log(i);
        });
        return sum;
    }

    static class Line {
        void add() {
            count++;
        }
    }
}
'''


def test_java_braces_skip_strings_and_comments_and_name_methods_in_classes() -> None:
    assert enclosing(JAVA, "java", 15) == "method Cart.total"  # inside a for loop
    assert enclosing(JAVA, "java", 21) == "method Cart.total"  # inside a lambda
    assert enclosing(JAVA, "java", 18) == "method Cart.total"  # an anonymous class
    assert enclosing(JAVA, "java", 9) == "method Cart.toString"
    assert enclosing(JAVA, "java", 5) == "class Cart"
    assert enclosing(JAVA, "java", 28) == "method Cart.Line.add"
    assert enclosing(JAVA, "java", 1) == ""
    assert enclosing("}\n}\nclass A {\n}\n", "java", 3) is None  # unbalanced: not readable


def test_many_lines_of_a_file_in_one_reading_say_what_each_line_alone_says() -> None:
    lines = [28, 1, 9, 15, 21, 5, 18, 9]
    assert enclosing_many(JAVA, "java", lines) == {line: enclosing(JAVA, "java", line) for line in lines}
    assert enclosing_many(JS, "javascript", [21, 11]) == {11: "method View.load", 21: ""}
    assert enclosing_many(PY, "python", [23, 18]) == {18: "class Stats", 23: "function Stats.window.inner"}
    # the braces stop balancing at line 5: the lines before it are still read, those after are not
    broken = "class A {\n  void f() {\n  }\n}\n}\nclass B {\n"
    assert enclosing_many(broken, "java", [2, 4, 5, 6]) == {2: "method A.f", 4: "class A", 5: None, 6: None}
    assert enclosing_many("x", "go", [1, 2]) == {1: None, 2: None}


def test_the_hunks_of_one_file_are_each_named_from_one_reading() -> None:
    diff = ("--- a/Cart.java\n+++ b/Cart.java\n"
            "@@ -8,2 +8,3 @@ public class Cart {\n     public String toString() {\n+        log();\n"
            "         return \"Cart}\";\n"
            "@@ -27,2 +28,3 @@ public class Cart {\n         void add() {\n+            count--;\n"
            "             count++;\n")
    hunks = parse_diff(diff).files[0].hunks
    assert hunk_labels(hunks, JAVA, "java") == ["method Cart.toString", "method Cart.Line.add"]
    assert hunk_labels(hunks, None, "java") == ["public class Cart {"] * 2  # no file: git's header


JS = '''\
const API = `https://example.org/{x}`;

function render(items) {
  return items.map((it) => {
    return `<li>${it}</li>`;
  });
}

class View extends Base {
  async load(url) {
    const data = await fetch(url);
  }
}

const handler = async (event) => {
  console.log(event);
};

describe('view', function () {
  it('renders', () => {
    render([]);
  });
});
'''


def test_javascript_functions_methods_arrows_and_anonymous_callbacks() -> None:
    assert enclosing(JS, "javascript", 5) == "function render"
    assert enclosing(JS, "javascript", 11) == "method View.load"
    assert enclosing(JS, "javascript", 16) == "function handler"
    assert enclosing(JS, "javascript", 21) == ""  # anonymous callbacks have no name to give
    assert enclosing(JS, "go", 5) is None  # a language we do not read: git's header applies


def test_a_removal_only_hunk_is_named_where_its_lines_were_removed() -> None:
    diff = ("--- a/stats.py\n+++ b/stats.py\n@@ -9,4 +9,3 @@ def running_mean(xs, k):\n"
            "     out = []\n-    # old\n     for i in range(len(xs) - k + 1):\n"
            "         out.append(min(xs[i:i + k]))\n")
    [hunk] = parse_diff(diff).files[0].hunks
    assert first_changed_line(hunk) == 10
    assert hunk_label(hunk, PY, "python") == "function _windowed_running_min"
