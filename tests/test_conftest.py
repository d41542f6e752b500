"""tests/conftest.py: each pytest-xdist worker's numerical thread pools get its share of the cores."""

from __future__ import annotations

import os

import pytest

from tests.conftest import THREAD_POOLS, share_the_cores


def test_two_workers_on_two_cores_get_one_thread_each() -> None:
    env = {"PYTEST_XDIST_WORKER_COUNT": "2"}
    assert share_the_cores(env, 2) == "1"
    assert {name: env[name] for name in THREAD_POOLS} == dict.fromkeys(THREAD_POOLS, "1")
    assert share_the_cores({"PYTEST_XDIST_WORKER_COUNT": "2"}, 8) == "4"
    assert share_the_cores({"PYTEST_XDIST_WORKER_COUNT": "4"}, 2) == "1"  # never none
    assert share_the_cores({"PYTEST_XDIST_WORKER_COUNT": "1"}, None) == "1"


def test_a_pool_already_sized_is_kept_and_one_process_is_left_alone() -> None:
    env = {"PYTEST_XDIST_WORKER_COUNT": "2", "OMP_NUM_THREADS": "3"}
    share_the_cores(env, 2)
    assert env["OMP_NUM_THREADS"] == "3" and env["OPENBLAS_NUM_THREADS"] == "1"
    alone: dict[str, str] = {}
    assert share_the_cores(alone, 2) is None and alone == {}


def test_numpys_blas_in_this_worker_has_the_share() -> None:
    """The variables were set before numpy loaded OpenBLAS (which reads them once, at load)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import numpy  # noqa: F401 - its BLAS is what threadpoolctl reports

    pools = [p for p in threadpoolctl.threadpool_info() if p["internal_api"] == "openblas"]
    share = os.environ.get("OPENBLAS_NUM_THREADS")
    if not pools or share is None:
        pytest.skip("no OpenBLAS under numpy, or no share set (not an xdist worker, nor set by hand)")
    assert {p["num_threads"] for p in pools} == {int(share)}
