"""Sentence splitting, scoring and τ: pure functions, no model."""

from __future__ import annotations

import numpy as np
import pytest

from analyzers.crscore import score as crs
from analyzers.crscore.sts import STOP_WORDS, keep_mask


def test_split_on_newlines_then_period_and_question_mark() -> None:
    review = "Why is this needed? It duplicates foo. Rename it\n\n- also add a test.\n"
    assert crs.split_sentences(review) == ["Why is this needed", "It duplicates foo", "Rename it",
                                           "- also add a test."]


def test_split_keeps_dotted_names_and_drops_empty_pieces() -> None:
    assert crs.split_sentences("Use `os.path.join` here.") == ["Use `os.path.join` here."]
    assert crs.split_sentences("") == []
    assert crs.split_sentences("  \n \n") == []
    assert crs.split_sentences("LGTM") == ["LGTM"]


def test_hard_scores_count_strictly_above_tau() -> None:
    sim = np.array([[0.9, 0.1, 0.2],   # sentence 0 matches ref 0
                    [0.5, 0.5, 0.5]])  # sentence 1: exactly τ → not above
    s = crs.score_matrix(sim, ["a", "b"], ["p", "q", "r"], tau=0.5)
    assert s.con == pytest.approx(0.5)
    assert s.comp == pytest.approx(1 / 3)
    assert s.rel == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    assert [m.pseudo_ref for m in s.matched] == ["p"]
    assert [m.pseudo_ref for m in s.missed] == ["q", "r"]
    assert s.matched[0].sentence == "a"


def test_rel_is_zero_when_nothing_matches() -> None:
    s = crs.score_matrix(np.full((2, 2), 0.1), ["a", "b"], ["p", "q"], tau=0.5)
    assert (s.con, s.comp, s.rel) == (0.0, 0.0, 0.0)
    assert len(s.missed) == 2


def test_soft_scores_are_mean_best_similarities() -> None:
    sim = np.array([[0.8, -0.3], [0.2, 0.4]])
    s = crs.score_matrix(sim, ["a", "b"], ["p", "q"], tau=None)
    assert s.con == pytest.approx((0.8 + 0.4) / 2)
    assert s.comp == pytest.approx((0.8 + 0.4) / 2)
    assert s.tau is None
    neg = crs.score_matrix(np.array([[-0.5]]), ["a"], ["p"], tau=None)
    assert neg.rel == 0.0  # negative similarity counts as no coverage


@pytest.mark.parametrize("sentences,refs,note", [([], ["p"], "empty review"),
                                                 (["a"], [], "no pseudo-references for this change"),
                                                 ([], [], "empty review")])
def test_empty_inputs_score_zero_with_a_note(sentences: list[str], refs: list[str], note: str) -> None:
    for tau in (0.3, None):
        s = crs.score_matrix(np.zeros((len(sentences), len(refs))), sentences, refs, tau)
        assert (s.con, s.comp, s.rel) == (0.0, 0.0, 0.0)
        assert s.note == note
        assert [m.pseudo_ref for m in s.missed] == refs


def test_matrix_shape_must_fit() -> None:
    with pytest.raises(ValueError):
        crs.score_matrix(np.zeros((2, 2)), ["a"], ["p", "q"], 0.5)


def test_calibrate_tau_is_the_mean_of_best_similarities() -> None:
    assert crs.calibrate_tau([0.2, 0.4, 0.6]) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        crs.calibrate_tau([])


def test_shipped_tau_for_the_default_model() -> None:
    tau = crs.tau_for("all-MiniLM-L6-v2", "tokens")
    assert tau is not None and 0.2 < tau < 0.5
    assert crs.tau_for("mixedbread-ai/mxbai-embed-large-v1", "tokens") == pytest.approx(0.7314)
    assert crs.tau_for("no-such-model", "tokens") is None


def test_stop_words_are_nltk_179() -> None:
    assert len(STOP_WORDS) == 179
    assert {"the", "don't", "wouldn't", "y", "ma"} <= STOP_WORDS
    assert "code" not in STOP_WORDS


def test_keep_mask_is_decided_per_sentence() -> None:
    special = {"[CLS]", "[SEP]"}
    assert keep_mask(["[CLS]", "the", "bug", ".", "[SEP]"], special) == [False, False, True, False, False]
    # only stop words: fall back to the non-special tokens, never an empty pool
    assert keep_mask(["[CLS]", "why", "this", "[SEP]"], special) == [False, True, True, False]
    assert keep_mask(["[CLS]", "[SEP]"], special) == [True, True]
    # BPE / SentencePiece word markers are stripped before the stop-word check
    assert keep_mask(["Ġthe", "▁cache"], special) == [False, True]
