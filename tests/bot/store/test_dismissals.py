"""The dismissals table (bot/store/dismissals.py) on SQLite and on PostgreSQL: one row per
repository, target and path glob; rows found by the repository's id, or by its name when the id
is not known; removed by target, in one glob or in all."""

from __future__ import annotations

import pytest

from bot.core.dismissals import Dismissal
from bot.store.store import Store

FP = "0123456789abcdef"


def _d(target: str = "python.sqli", glob: str | None = None, **kw: object) -> Dismissal:
    values: dict[str, object] = {"kind": "finding" if target == FP else "rule", "by": "alice",
                                 "at": 1_795_000_000.0, "reason": "a false positive", **kw}
    return Dismissal(target, path_glob=glob, **values)  # type: ignore[arg-type]


def test_a_dismissal_is_recorded_once_listed_and_removed(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.dismissals.add(7, "o/r", _d()) is True
        assert store.dismissals.add(7, "o/r", _d(by="bob", reason="again")) is False  # the first stays
        assert store.dismissals.add(7, "o/r", _d(glob="tests/*")) is True  # another glob, another row
        assert store.dismissals.add(7, "o/r", _d(FP, at=1_795_000_001.0)) is True
        assert store.dismissals.listed(7, "o/r") == [_d(), _d(glob="tests/*"), _d(FP, at=1_795_000_001.0)]
        assert store.dismissals.counts() == [("o/r", 3)]
        assert store.dismissals.remove(7, "o/r", "python.sqli", "tests/*") == 1
        assert store.dismissals.listed(7, "o/r") == [_d(), _d(FP, at=1_795_000_001.0)]
        assert store.dismissals.remove(7, "o/r", "python.sqli") == 1  # any glob
        assert store.dismissals.remove(7, "o/r", "python.sqli") == 0
        assert store.dismissals.listed(7, "o/r") == [_d(FP, at=1_795_000_001.0)]
    finally:
        store.close()


def test_rows_belong_to_the_repository_id_not_a_name(db_url: str) -> None:
    store = Store(db_url)
    try:
        store.dismissals.add(7, "o/r", _d())
        store.dismissals.add(None, "o/legacy", _d("autofix"))
        assert [d.target for d in store.dismissals.listed(7, "o/renamed")] == ["python.sqli"]  # renamed: its id
        assert store.dismissals.listed(8, "o/r") == []  # a new repository under a reused name
        assert store.dismissals.listed(None, "o/r") == []  # no id: only rows recorded by name
        assert [d.target for d in store.dismissals.listed(9, "o/legacy")] == ["autofix"]
        assert [d.target for d in store.dismissals.listed(None, "o/legacy")] == ["autofix"]
        assert store.dismissals.remove(8, "o/r", "python.sqli") == 0  # another repository's row stays
        assert len(store.dismissals.listed(7, "o/r")) == 1
    finally:
        store.close()


@pytest.mark.parametrize(("d", "message"), [
    (_d("two words"), "one word"),
    (_d("x" * 201), "one word"),
    (_d("python.sqli", kind="finding"), "fingerprint"),
    (_d(glob="x" * 301), "path glob"),
    (_d(by=""), "login"),
    (_d(reason="x" * 501), "reason"),
])
def test_a_dismissal_out_of_bounds_is_refused(db_url: str, d: Dismissal, message: str) -> None:
    store = Store(db_url)
    try:
        with pytest.raises(ValueError, match=message):
            store.dismissals.add(7, "o/r", d)
        assert store.dismissals.listed(7, "o/r") == []
    finally:
        store.close()


def test_a_reason_has_one_limit_whether_a_command_or_the_file_writes_it() -> None:
    """`@rtcbot ignore … because` and the dismissals file bound one field by one number (they
    were 300 and 500): a reason a command refuses is one the file refuses."""
    from bot.core import pr_commands
    from bot.core.dismissals import MAX_REASON_CHARS, problem
    from bot.core.verbs.base import Malformed

    longest, over = "y" * MAX_REASON_CHARS, "y" * (MAX_REASON_CHARS + 1)
    assert problem(_d(reason=longest)) is None and not isinstance(pr_commands.parse(f"ignore x because {longest}"),
                                                                  Malformed)
    assert problem(_d(reason=over)) and isinstance(pr_commands.parse(f"ignore x because {over}"), Malformed)
