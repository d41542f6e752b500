"""How often the leak check (analyzers/rtc/leak.py) flags honest descriptions of the bundled data:
no model is run, so it measures the check alone, the same way on any commit (docs/integrity.md).

    .venv/bin/python scripts/leak_false_positives.py            # counts per set
    .venv/bin/python scripts/leak_false_positives.py --flagged  # and each flagged description's reason

The sets: GPT-4's "summary of changes" of the 500 bundled CodeReviewer hunks; the claims about
each of the 175 CRScore-human changes that Magicoder, GPT-4o and a person wrote (one description
per source and change, its claims joined); HumanEval's problem statements (the prompt's
docstring) against the canonical solution, the prompt being the code shown.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator

from analyzers.rtc.leak import leak_reason
from analyzers.synthesis_rtc.analyzer import load_humaneval
from bot.cli.commands.eval_editing_rtc import edit_of
from bot.cli.datasets import lookup

Item = tuple[str, str, str, str]  # a name, the description, the new code, the old code


def _sides(diff: str) -> tuple[str, str]:
    """(new, old) of a one-file review diff, as `rtcbot eval editing-rtc` reads it."""
    old, new = edit_of({"code_change": diff}) or ("", "")
    return new, old


def gpt4_summaries() -> Iterator[Item]:
    for i, line in enumerate(lookup("codereviewer-validation").file().read_text("utf-8").splitlines()):
        r = json.loads(line)
        yield (f"codereviewer/{i}", r["change_summary"].split("Implications")[0], *_sides(r["code_change"]))


def crscore_claims() -> Iterator[Item]:
    seen: set[int] = set()
    for line in lookup("crscore-dev").file().read_text("utf-8").splitlines():
        r = json.loads(line)
        if r["index"] in seen:
            continue
        seen.add(r["index"])
        for source in ("magicoder", "gpt4o", "human_verified"):
            claims = r["pseudo_refs"].get(source) or []
            if claims:
                yield (f"crscore/{r['index']}/{source}", "\n".join(claims), *_sides(r["diff"]))


def humaneval_statements() -> Iterator[Item]:
    for p in load_humaneval():
        tree = ast.parse(p.prompt + p.canonical_solution)
        fn = next(n for n in tree.body[::-1] if isinstance(n, ast.FunctionDef) and n.name == p.entry_point)
        yield p.task_id, ast.get_docstring(fn) or "", p.canonical_solution, p.prompt


SETS = {"GPT-4 summaries of the 500 CodeReviewer hunks": gpt4_summaries,
        "CRScore-human claims (Magicoder, GPT-4o, human-verified)": crscore_claims,
        "HumanEval problem statements": humaneval_statements}


def main(show: bool) -> None:
    for title, items in SETS.items():
        rows = list(items())
        flagged = [(name, why) for name, desc, new, old in rows if (why := leak_reason(desc, new, old))]
        print(f"{title}: {len(flagged)} of {len(rows)} flagged ({100 * len(flagged) / len(rows):.1f} %)")
        for name, why in flagged if show else ():
            print(f"  {name}: {why}")


if __name__ == "__main__":
    main("--flagged" in sys.argv[1:])
