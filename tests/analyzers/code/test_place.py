"""A finding's place (analyzers/code/place.py): the definition around it and its occurrence there."""

from __future__ import annotations

from analyzers.code.place import place_findings, places
from analyzers.report import Finding, Place

PY = '''import os

os.system(cmd)


class Jobs:
    @staticmethod
    def clean():
        os.system(cmd)
        os.system(cmd)

    def run(self):
        def inner():
            os.system(cmd)
        os.system(cmd)


os.system(cmd)
'''


def test_python_places_name_the_innermost_definition_and_count_identical_lines_from_its_start() -> None:
    got = places(PY, "python", [(3, 3), (9, 9), (10, 10), (14, 14), (15, 15), (18, 18), (99, 99)])
    assert got == [Place("", 0, count=6), Place("method Jobs.clean", 0, count=2),
                   Place("method Jobs.clean", 1, count=2), Place("function Jobs.run.inner", 0),
                   Place("method Jobs.run", 1, count=2), Place("", 5, count=6), None]


def test_a_file_that_does_not_parse_counts_in_the_whole_file() -> None:
    broken = "def f(:\n    os.system(cmd)\n\ndef g():\n    os.system(cmd)\n"
    assert places(broken, "python", [(2, 2), (5, 5)]) == [Place("", 0, count=2), Place("", 1, count=2)]
    assert places(broken, "ruby", [(5, 5)]) == [Place("", 1, count=2)]


def test_findings_get_their_place_once_and_keep_it_through_to_dict() -> None:
    a = Finding("autofix", "t", path="a.py", start_line=9, end_line=9, rule_id="r", key="k")
    b = Finding("autofix", "t", path="a.py", start_line=10, end_line=10, rule_id="r", key="k", place=Place("x", 3))
    c = Finding("autofix", "t", path="gone.py", start_line=1, rule_id="r", key="k")
    placed = place_findings([a, b, c], lambda p: PY if p == "a.py" else None)
    assert [f.place for f in placed] == [Place("method Jobs.clean", 0, count=2), Place("x", 3), None]
    assert Finding.from_dict(placed[0].to_dict()) == placed[0]
    assert placed[0].fingerprint() != placed[1].fingerprint()
    assert placed[0].legacy_fingerprint() == placed[1].legacy_fingerprint()  # content only: the twins shared it
    assert c.fingerprint() == c.legacy_fingerprint()  # no place: the old fingerprint


CLEAN = "def clean(cmd):\n    cmd = 'ls'\n    os.system(cmd)\n"


def test_a_copy_anywhere_in_the_definition_changes_every_fingerprint_there() -> None:
    """The count of identical lines is part of the place (issue #51): a copy added above the
    dismissed line cannot take over its fingerprint, nor can one below."""
    def prints(text: str, lines: list[int]) -> list[str]:
        found = [Finding("autofix", "t", path="a.py", start_line=n, end_line=n, rule_id="r", key="os.system(cmd)")
                 for n in lines]
        return [f.fingerprint() for f in place_findings(found, lambda _: text)]

    (alone,) = prints(CLEAN, [3])
    above = CLEAN.replace("    cmd = 'ls'\n", "    cmd = input()\n    os.system(cmd)\n    cmd = 'ls'\n")
    below = CLEAN + "    os.system(cmd)\n"
    assert alone not in prints(above, [3, 5]) and alone not in prints(below, [3, 4])
    assert places(above, "python", [(3, 3), (5, 5)]) == [Place("function clean", 0, count=2),
                                                         Place("function clean", 1, count=2)]
    # one line alone in its definition, a name alone in its scope: the fingerprint of before
    assert alone == Finding("autofix", "t", path="a.py", rule_id="r", key="os.system(cmd)").fingerprint_at(
        Place("function clean", 0))


def test_same_named_definitions_have_places_of_their_own() -> None:
    text = ("import os\n\nif os.name == 'nt':\n    def run(cmd):\n        os.system(cmd)\n"
            "else:\n    def run(cmd):\n        os.system(cmd)\n")
    nt, other = places(text, "python", [(5, 5), (8, 8)])
    assert nt is not None and other is not None and nt.definition == other.definition == "function run"
    assert (nt.path, other.path) == ("if os.name == 'nt' > function run #1/2",
                                     "else of if os.name == 'nt' > function run #2/2")
