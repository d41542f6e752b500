"""Review mode's regions: candidates in changed functions, drawn without overlap, replaced, and
the code around them."""

from __future__ import annotations

from analyzers.synthesis_rtc.regions import candidate_regions, context_around, replace_region, sample_regions
from tests.analyzers.synthesis_rtc.test_analyzer import MODULE_NEW


def test_candidate_regions_touch_changed_lines_and_respect_sizes() -> None:
    regions = candidate_regions(MODULE_NEW, "calc.py", {2, 3, 4, 5, 6})
    assert regions and all(32 <= len("".join(MODULE_NEW.splitlines(True)[r.start_line - 1:r.end_line]).strip()) <= 384
                           for r in regions)
    assert {(r.start_line, r.end_line) for r in regions} >= {(3, 5), (2, 6), (4, 5)}
    assert candidate_regions(MODULE_NEW, "calc.py", {99}) == []
    picked = sample_regions(regions, 2, "seed")
    assert picked == sample_regions(regions, 2, "seed")  # deterministic
    assert all(a.end_line < b.start_line for a, b in zip(picked, picked[1:], strict=False))
    r = next(x for x in regions if (x.start_line, x.end_line) == (3, 5))
    assert replace_region(MODULE_NEW, r, "pass") == "def total(xs):\n    result = 0\n    pass\n    return result\n"
    pre, post = context_around(MODULE_NEW, r, budget=40)
    assert pre.endswith("    result = 0\n") and len(pre) + len(post) <= 40
