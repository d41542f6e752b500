"""bench/cost.py's counting: the share a prefix cache can serve, the chat as the embedded model's
template lays it out, and the responder's shapes (the row itself runs in `make bench`)."""

from __future__ import annotations

from bench import Row, row
from bench.cost import cost, cost_responder, render, servable


def test_servable_counts_each_prompt_s_longest_prefix_shared_with_an_earlier_one() -> None:
    prompts = [[1, 2, 3, 4], [1, 2, 3, 9], [1, 2, 7], [5, 6], [1, 2, 3, 9, 9]]
    # 0 (nothing before), 3, 2, 0 (no earlier prompt starts with 5), 4 (the second's whole)
    assert servable(prompts) == 9
    c = cost("x", prompts)
    assert (c.requests, c.prompt_tokens, c.servable_tokens) == (5, 18, 9)
    assert round(c.share, 3) == round(9 / 18, 3)


def test_render_lays_a_chat_out_as_chatml_ready_for_the_answer() -> None:
    text = render([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"


def test_forward_descriptions_are_distinct_and_as_long_as_a_model_s() -> None:
    answers = cost_responder({"n": 3, "seed": 5, "messages": [{"role": "user", "content": "[old]\nx\n[new]\ny"}]})
    assert isinstance(answers, list) and len(set(answers)) == 3
    assert all(len(a.split()) >= 20 for a in answers)
    back = cost_responder({"messages": [{"role": "user", "content": "[old]\nx\n[edit description] d"}]})
    assert isinstance(back, str) and back.startswith("```")


def test_a_row_run_alone_replaces_its_own_rows_and_keeps_the_others() -> None:
    from bench import run_all

    old = "\n".join(["# Benchmarks", "", "- Python: 3.11", "", "| benchmark | figure | value | target | met? |",
                     "|---|---|---|---|---|", "| e2e_floor | E2E | 1.08× | ≤ 1.25× | yes |",
                     "| cost | Cost: old | 9 | ≤ 2 | **no** |", "", "## e2e_floor: E2E", "", "timeline", "",
                     "Time each benchmark took (informational): e2e_floor 44 s, cost 3 s.", ""])
    new = run_all.render([("cost", [row_with_details()], 12.0)], run_all.machine(), "now", False)
    out = run_all.merged(old, new, ["cost"], "now")
    assert "| e2e_floor | E2E | 1.08× | ≤ 1.25× | yes |" in out and "Cost: old" not in out
    assert "| cost | Cost: new | 1 | ≤ 2 | yes |" in out and "## cost: Cost: new" in out and "timeline" in out
    assert "e2e_floor 44 s, cost 12 s." in out and "- run alone: cost on now" in out
    assert run_all.merged(out, new, ["cost"], "now") == out


def row_with_details() -> Row:
    r = row("Cost: new", "1", "≤ 2", True)
    r["details"] = "| PR | tokens |\n|---|---|"
    return r
