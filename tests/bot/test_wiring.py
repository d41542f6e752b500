"""The App's parts are built in dependency order (bot/app/runtime.py): each from parts already
built, nothing set on a part afterwards, and no part reaching back into the runtime that built
them (the way a callback to a part not yet built would)."""

from __future__ import annotations

import ast
import functools
import inspect
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bot.app import runtime
from bot.app.runtime import Runtime
from tests.bot.app_support import make_settings


def _init() -> ast.FunctionDef:
    tree = ast.parse(inspect.getsource(runtime))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Runtime")
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")


def _self_attrs(node: ast.AST) -> Iterator[ast.Attribute]:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            yield n


def test_each_part_is_built_from_parts_already_built() -> None:
    """In Runtime.__init__, statement by statement: a `self.<part>` read was assigned before; no
    lambda; no method of the runtime handed to a part; nothing assigned on a part."""
    methods = {name for name, _ in inspect.getmembers(Runtime, inspect.isfunction)}
    built: set[str] = set()
    for stmt in _init().body:
        assert not any(isinstance(n, ast.Lambda) for n in ast.walk(stmt)), ast.unparse(stmt)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        for t in targets:
            assert isinstance(t, ast.Name) or (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                               and t.value.id == "self"), f"set on a part: {ast.unparse(stmt)}"
        value = stmt.value if isinstance(stmt, ast.Assign | ast.Expr) else stmt
        for a in _self_attrs(value):
            assert a.attr not in methods, f"the runtime's own method handed on: {ast.unparse(stmt)}"
            assert a.attr in built, f"self.{a.attr} read before it is built: {ast.unparse(stmt)}"
        built |= {t.attr for t in targets if isinstance(t, ast.Attribute)}
    assert {"store", "queue", "claims", "worker", "intake", "pipeline", "sweep"} <= built


def _reachable(roots: list[Any]) -> Iterator[Any]:
    """Objects reachable from `roots` through bot/'s own objects: their attributes, containers,
    bound methods, partials and closures (never into third-party objects' insides)."""
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, dict):
            todo += list(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            todo += list(obj)
        elif isinstance(obj, functools.partial):
            todo += [obj.func, *obj.args, *obj.keywords.values()]
        elif inspect.ismethod(obj):
            todo += [obj.__self__, obj.__func__]
        elif inspect.isfunction(obj):
            todo += [c.cell_contents for c in obj.__closure__ or () if c.cell_contents is not None]
        elif type(obj).__module__.startswith("bot.") and hasattr(obj, "__dict__"):
            todo += list(vars(obj).values())


def test_no_part_reaches_back_into_the_runtime(tmp_path: Path) -> None:
    rt = Runtime(make_settings(tmp_path))
    try:
        parts = [v for k, v in vars(rt).items() if k not in ("settings", "store", "queue")]
        reached = list(_reachable(parts))
        assert all(obj is not rt for obj in reached)
        kinds = {type(o).__name__ for o in reached}
        assert {"Worker", "Pipeline", "Analysis", "FanOut", "CommentCommands", "Outbox"} <= kinds
    finally:
        rt.resender.stop()
        rt.store.close()


def test_a_message_is_one_the_version_before_could_run(tmp_path: Path) -> None:
    """The outbox sends a wake-up per job in the JSON job message the release before this one
    wrote and ran (`bot.app.jobs.rtcbot.run_job`, the job's id), in the place it read them: a
    worker of that release, still running through an upgrade, runs the job it names."""
    rt = Runtime(make_settings(tmp_path))
    try:
        assert rt.outbox.send([41]) is True
        with sqlite3.connect(tmp_path / "data" / "queue.sqlite3") as conn:
            [(queue_name, data)] = conn.execute("select queue, data from task").fetchall()
        msg = json.loads(data)
        assert (queue_name, msg["format"], msg["name"], msg["args"]) == ("rtcbot", "rtcbot-job/1",
                                                                         "bot.app.jobs.rtcbot.run_job", [41])
        assert rt.run_next() is None  # no job 41 in the store: nothing to claim
    finally:
        rt.resender.stop()
        rt.store.close()
