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
    assert got == [Place("", 0), Place("method Jobs.clean", 0), Place("method Jobs.clean", 1),
                   Place("function Jobs.run.inner", 0), Place("method Jobs.run", 1), Place("", 5), None]


def test_a_file_that_does_not_parse_counts_in_the_whole_file() -> None:
    broken = "def f(:\n    os.system(cmd)\n\ndef g():\n    os.system(cmd)\n"
    assert places(broken, "python", [(2, 2), (5, 5)]) == [Place("", 0), Place("", 1)]
    assert places(broken, "ruby", [(5, 5)]) == [Place("", 1)]


def test_findings_get_their_place_once_and_keep_it_through_to_dict() -> None:
    a = Finding("autofix", "t", path="a.py", start_line=9, end_line=9, rule_id="r", key="k")
    b = Finding("autofix", "t", path="a.py", start_line=10, end_line=10, rule_id="r", key="k", place=Place("x", 3))
    c = Finding("autofix", "t", path="gone.py", start_line=1, rule_id="r", key="k")
    placed = place_findings([a, b, c], lambda p: PY if p == "a.py" else None)
    assert [f.place for f in placed] == [Place("method Jobs.clean", 0), Place("x", 3), None]
    assert Finding.from_dict(placed[0].to_dict()) == placed[0]
    assert placed[0].fingerprint() != placed[1].fingerprint()
    assert placed[0].legacy_fingerprint() == placed[1].legacy_fingerprint()  # content only: the twins shared it
    assert c.fingerprint() == c.legacy_fingerprint()  # no place: the old fingerprint
