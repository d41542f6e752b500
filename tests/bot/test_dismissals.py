"""What a dismissal covers (bot/core/dismissals.py): fingerprints that survive line moves, rules
and analyzers by name, path globs, and the summary's line."""

from __future__ import annotations

from dataclasses import replace

from analyzers.report import Finding, Place
from bot.core.dismiss_target import Named, by_name
from bot.core.dismissals import Dismissal, ambiguity_notes, fingerprint, kind_of, problem, split

AT = 1_795_651_200.0  # 2026-11-26 UTC


def _f(line: int = 5, **kw: object) -> Finding:
    values: dict[str, object] = {"title": "python.sqli: fixed", "path": "app/db.py", "rule_id": "python.sqli",
                                 "key": "k" * 32, **kw}
    return Finding("autofix", start_line=line, end_line=line + 1, **values)  # type: ignore[arg-type]


def test_a_fingerprint_survives_line_moves_and_formatting_not_content() -> None:
    fp = fingerprint(_f())
    assert len(fp) == 16 and int(fp, 16) >= 0
    assert fingerprint(_f(40)) == fp  # the same finding at another line
    assert fingerprint(_f(path="app/other.py")) != fp
    assert fingerprint(_f(rule_id="python.xss")) != fp
    assert fingerprint(_f(key="j" * 32)) != fp
    assert fingerprint(replace(_f(), analyzer="editing_rtc")) != fp
    code = fingerprint(_f(), "x = run(q)\n    y = 1\n")
    assert fingerprint(_f(9), "\n  x  =  run(q)\n\ny = 1") == code  # normalised text, not lines
    assert fingerprint(_f(), "x = run(p)\ny = 1") != code
    no_key = fingerprint(_f(key=""))
    assert fingerprint(_f(12, key="")) == no_key and fingerprint(_f(key="", message="other")) != no_key


def test_split_by_rule_analyzer_fingerprint_and_glob() -> None:
    a, b = _f(), _f(path="tests/test_db.py", key="t" * 32)
    c = _f(rule_id="python.xss", key="x" * 32)
    by_rule = Dismissal("python.sqli", "rule", None, "alice", AT, "not reachable")
    assert split([a, b, c], [by_rule]) == ([c], [(a, by_rule), (b, by_rule)])
    in_tests = Dismissal("python.sqli", "rule", "tests/*", "alice", AT, "")
    assert split([a, b, c], [in_tests]) == ([a, c], [(b, in_tests)])
    by_name = Dismissal("test_db.py", "rule", None, "x", AT, "")  # a rule, not a path
    assert split([a, b], [by_name]) == ([a, b], [])
    by_glob_name = Dismissal("autofix", "rule", "*.py", "bob", AT, "")  # an analyzer; glob on the file name
    assert split([a, replace(a, path=None)], [by_glob_name]) == ([replace(a, path=None)], [(a, by_glob_name)])
    one = Dismissal(fingerprint(c), "finding", None, "carol", AT, "")
    assert split([a, _f(80, rule_id="python.xss", key="x" * 32)], [one]) == (
        [a], [(_f(80, rule_id="python.xss", key="x" * 32), one)])
    assert split([a, c], []) == ([a, c], [])


def test_split_with_code_fingerprints_the_lines_text() -> None:
    a = _f()
    d = Dismissal(fingerprint(a, "q = 1"), "finding", None, "x", AT, "")
    assert split([a], [d]) == ([a], [])  # without the code: the key's fingerprint
    assert split([_f(30)], [d], code=lambda f: " q =  1 ") == ([], [(_f(30), d)])


def test_the_summary_line_names_who_when_where_and_why() -> None:
    d = Dismissal("python.sqli", "rule", None, "alice", AT, "the input is a constant")
    assert d.line() == "dismissed by @alice on 2026-11-26: the input is a constant"
    assert replace(d, reason="", path_glob="tests/*").line() == "dismissed by @alice on 2026-11-26 in tests/*"


def test_kind_of_a_word_and_problems() -> None:
    assert kind_of("0123456789abcdef") == "finding"
    assert kind_of("python.sqli") == kind_of("editing_rtc") == kind_of("0123456789ABCDEF") == "rule"
    ok = Dismissal("python.sqli", "rule", None, "alice", AT, "")
    assert problem(ok) is None
    assert "kind" in (problem(replace(ok, kind="other")) or "")  # type: ignore[arg-type]
    assert "fingerprint" in (problem(replace(ok, kind="finding")) or "")


def test_a_fingerprint_two_findings_share_dismisses_neither_and_says_so() -> None:
    """Issue #51: when two current findings would still share a fingerprint, neither is dismissed."""
    a, twin = _f(5, place=Place("function run", 0)), _f(9, place=Place("function run", 0))
    d = Dismissal(fingerprint(a), "finding", None, "carol", AT, "")
    assert fingerprint(a) == fingerprint(twin)
    assert split([a, twin], [d]) == ([a, twin], [])
    assert ambiguity_notes([a, twin], [d]) == [
        f"The dismissal of {d.target} by @carol names a fingerprint that 2 findings share (app/db.py:5, "
        "app/db.py:9), so it dismisses none of them."]
    refused = by_name([a, twin], d.target, "f" * 40).refusal or ""
    assert refused.startswith(f"`{d.target}` is the fingerprint of 2 findings at the head") and "nothing" in refused
    assert split([a], [d]) == ([], [(a, d)])  # alone, it is the one it names


def test_a_fingerprint_a_finding_had_before_dismisses_nothing_and_names_why() -> None:
    """A copy added in the definition changes the count of identical lines there: the dismissal made
    while the line was alone covers neither occurrence now, and the note says why."""
    alone = _f(5, place=Place("function run", 0))
    d = Dismissal(fingerprint(alone), "finding", None, "carol", AT, "")
    copy, original = _f(5, place=Place("function run", 0, count=2)), _f(6, place=Place("function run", 1, count=2))
    assert split([copy, original], [d]) == ([copy, original], [])
    notes = ambiguity_notes([copy, original], [d])
    assert len(notes) == 2
    assert notes[0].startswith(f"The dismissal of {d.target} by @carol no longer covers app/db.py:5")
    assert "function run held 1 identical line like it when the dismissal was made and holds 2 now" in notes[0]
    refused = by_name([copy, original], d.target, "f" * 40).refusal or ""
    assert refused.startswith(f"`{d.target}` is the fingerprint of no finding at the head") and "holds 2 now" in refused
    nowhere = by_name([copy], "0123456789abcdef", "f" * 40).refusal or ""
    assert "never code still to come" in nowhere and "It was" not in nowhere


def test_a_reply_names_a_findings_path_of_definitions_and_branches() -> None:
    nt = _f(5, place=Place("function run", 0, "if os.name == 'nt' > function run #1/2"))
    assert "in `if os.name == 'nt' > function run #1/2`" in Named.of(nt).words()
    assert "in `function run`" in Named.of(_f(5, place=Place("function run", 0))).words()
