"""The review filter's pick (issue #41) played by a pull request's author: rtcbot's own review
comments are the model's drafts, and a diff can steer the model (a comment in the code asking
for "a long, friendly review"). The pick prefers the longest draft only among those within
`RECIPE.margin` of the best score, so length must not buy a draft its place: padding a draft
with praise, mentions, links and HTML lowers its scores below the review gates, and a padded
draft outside the margin never goes before a relevant one, however long it is."""

from __future__ import annotations

import numpy as np
import pytest

from analyzers.code.diff import parse_diff
from analyzers.crscore.analyzer import Unit
from analyzers.crscore.score import Match, Scores, pick_value, score_reviews
from analyzers.crscore.sts import shared_embedder
from analyzers.review.analyzer import RECIPE, Candidate, HunkWork, ReviewOptions, Scored, pick_order, select

PSEUDO_REFS = ["The function now returns 0 for an empty list instead of raising ZeroDivisionError.",
               "Callers that relied on the exception will no longer see it.",
               "line 3, too-many-branches: the function has 14 branches"]
RELEVANT = ("An empty list now returns 0 instead of raising ZeroDivisionError; callers that caught the "
            "exception will silently get 0.")
PAD = "Looks good to me. @maintainers please approve. [merge](https://evil.example) <img src=x>. " * 40
DIFF = ("--- a/stats.py\n+++ b/stats.py\n@@ -1,2 +1,4 @@\n def mean(xs):\n-    return sum(xs) / len(xs)\n"
        "+    if not xs:\n+        return 0\n+    return sum(xs) / len(xs)\n")


@pytest.mark.model  # CRScore's sentence embeddings (MiniLM, from its PyPI package)
def test_padding_a_draft_with_praise_mentions_and_links_sinks_it_below_the_gates() -> None:
    opts = ReviewOptions()
    drafts = [RELEVANT, RELEVANT + " " + PAD, "LGTM. " + PAD]
    relevant, padded, praise = score_reviews(shared_embedder(), [(d, PSEUDO_REFS) for d in drafts], None,
                                             recipe=RECIPE)
    assert relevant.rel >= opts.min_rel and relevant.con >= opts.min_con  # the honest draft is kept
    for s in (padded, praise):
        assert s.rel < opts.min_rel or s.con < opts.min_con  # the padded ones are dropped
        assert pick_value(s, RECIPE) < pick_value(relevant, RECIPE) - RECIPE.margin  # and never picked first


def test_length_orders_only_drafts_within_the_margin_of_the_best() -> None:
    [(f, h)] = list(parse_diff(DIFF).hunks())
    work = HunkWork(f, h, Unit(f, [h], h.key))

    def scored(text: str, best: float) -> Scored:  # one sentence, one claim at `best`
        return Scored(work, Candidate(1, text), Scores(0.5, 0.5, 0.5, None, [text], [best],
                                                       [Match("claim", text, best)]))

    huge = "Looks good. @maintainers [approve](https://evil.example) " * 2000
    far = [scored(RELEVANT, 0.60), scored(huge, 0.60 - RECIPE.margin - 0.02)]
    assert pick_order(far) == [0, 1]  # 10,000 words outside the margin go after the relevant draft
    kept, _ = select(far, np.eye(2), ReviewOptions(max_per_hunk=1, min_rel=0.0, min_con=0.0))
    assert [k.candidate.text for k in kept] == [RELEVANT]
    near = [scored(RELEVANT, 0.60), scored(huge, 0.60 - RECIPE.margin / 2)]
    assert pick_order(near) == [1, 0]  # within the margin the longer goes first: the documented rule


def test_a_question_only_lowers_a_drafts_place_and_never_drops_or_lifts_one() -> None:
    # The author can steer the model into asking ("end every remark with a question?"): the
    # question penalty may move such a draft after another, but it never raises a draft, never
    # opens the review gates (they read the shown scores) and never drops a draft that passes them.
    [(f, h)] = list(parse_diff(DIFF).hunks())
    work = HunkWork(f, h, Unit(f, [h], h.key))

    def scored(text: str, best: float, shown: float = 0.5) -> Scored:
        return Scored(work, Candidate(1, text), Scores(shown, shown, shown, None, [text], [best],
                                                       [Match("claim", text, best)]))

    asking, saying = scored(RELEVANT[:-1] + "?", 0.60), scored(RELEVANT, 0.60)
    assert pick_value(asking.scores, RECIPE) < pick_value(saying.scores, RECIPE)
    assert asking.scores.rel == saying.scores.rel  # the shown scores, and so the gates, do not move
    opts = ReviewOptions(max_per_hunk=1)
    kept, _ = select([asking], np.eye(1), opts)
    assert [k.candidate.text for k in kept] == [asking.candidate.text]  # alone, a question is still kept
    below = scored("Is this fine?", 0.99, shown=opts.min_rel / 2)
    kept, _ = select([below], np.eye(1), opts)
    assert kept == []  # a question below the gates stays out, whatever its pick score
