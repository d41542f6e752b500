"""The command lines and launcher settings a sandboxed run starts with (analyzers/sandbox/commands.py)."""

from __future__ import annotations

from pathlib import Path

from analyzers.sandbox.box import Sandbox
from analyzers.sandbox.commands import LAUNCHER_SOURCE, WORK, Commands
from analyzers.sandbox.run import Limits
from tests.support import ROOT

LAUNCHER = ROOT / "analyzers" / "sandbox" / "launcher.py"
LIMITS = Limits(cpu_s=2.5, memory_mb=256, nproc=32, fsize_mb=8, disk_mb=64)


def test_each_run_gets_the_launcher_module_as_it_is_on_disk() -> None:
    """The sandbox runs analyzers/sandbox/launcher.py's source (`python -I -S -c`), so the
    launcher ruff and mypy check is the launcher that runs."""
    assert LAUNCHER_SOURCE == LAUNCHER.read_text(encoding="utf-8")
    box = Sandbox(mode="none")
    cmd = box.commands.launcher(box.mode, Path("/nonexistent/work"), {}, ["true"], Limits())
    assert cmd[cmd.index("-c") + 1] == LAUNCHER.read_text(encoding="utf-8")


def test_bwrap_runs_the_launcher_inside_bubblewrap_with_its_work_folder_and_nothing_else_writable() -> None:
    commands = Commands("/usr/bin/python3", bwrap="/usr/bin/bwrap")
    cmd = commands.launcher("bwrap", Path("/tmp/run/work"), {"info_fd": 7}, ["true"], LIMITS)
    assert cmd[0] == "/usr/bin/bwrap" and "--share-net" not in cmd and "--disable-userns" in cmd
    assert cmd[cmd.index("--bind") + 1:cmd.index("--bind") + 3] == ["/tmp/run/work", WORK]
    assert cmd.index("--remount-ro") < cmd.index("--") < cmd.index("/usr/bin/python3")
    assert cmd[cmd.index("--info-fd") + 1] == "7" and cmd[-1] == "true"
    runner = commands.runner(Path("/tmp/runner"), 5, 6)
    assert "--disable-userns" not in runner and "CAP_SYS_ADMIN" in runner
    assert Commands("/usr/bin/python3", isolate_network=False, bwrap="bwrap").bubblewrap().count("--share-net") == 1


def test_rlimits_count_the_runs_processes_and_bound_its_address_space_where_asked() -> None:
    commands = Commands("/usr/bin/python3")
    limits = dict((name, (soft, hard)) for name, soft, hard in commands.rlimits("bwrap", LIMITS, None, True))
    assert limits["RLIMIT_CPU"] == (3, 4) and limits["RLIMIT_NPROC"] == (34, 34)
    assert limits["RLIMIT_AS"] == (256 << 20, 256 << 20) and limits["RLIMIT_FSIZE"] == (8 << 20, 8 << 20)
    in_runner = {name for name, _, _ in commands.rlimits("bwrap", LIMITS, None, False, others=1)}
    assert "RLIMIT_AS" not in in_runner
    assert dict((n, s) for n, s, _ in commands.rlimits("bwrap", LIMITS, None, False, others=1))["RLIMIT_NPROC"] == 33


def test_a_run_as_its_own_uid_goes_through_setpriv_where_there_is_one() -> None:
    assert Commands("py").as_uid(["true"], None) == (["true"], {})
    assert Commands("py", setpriv="/usr/bin/setpriv").as_uid(["true"], 1234) == (
        ["/usr/bin/setpriv", "--reuid=1234", "--regid=1234", "--clear-groups", "--", "true"], {})
    assert Commands("py").as_uid(["true"], 1234) == (["true"], {"user": 1234, "group": 1234, "extra_groups": []})
    assert Commands("/opt/py").program(["{python}", "-c", "1"])[0] == "/opt/py"
