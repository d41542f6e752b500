"""SynthesisRTC's prompts (our own words) and the parsing of its descriptions
(analyzers/synthesis_rtc/analyzer.py runs the round trips).

HumanEval's prompts are the benchmark's; in review mode the code comes from a pull request and
goes in as data (analyzers/rtc/leak.py: a fence it cannot close, and the instruction that nothing
inside is addressed to the model).
"""

from __future__ import annotations

from analyzers.llm.client import Message
from analyzers.report import fence_for
from analyzers.rtc.leak import DATA_NOTE

BASELINE = "Implement."

SYSTEM = "You are a precise Python programmer. Answer exactly in the format asked for."

FORWARD_ASK = ("In one short sentence (at most 128 characters), say what the body of the "
               "function `{name}` below does, so that another programmer could write it again. "
               "Answer with the sentence only.")
BACKWARD_ASK = ("Write the body of the function `{name}` below, doing what its TODO comment says. "
                "Reply with the complete function in one ```python code block.")
PLAIN_ASK = "Complete the function `{name}` below. Reply with the complete function in one ```python code block."

_EXAMPLE = ("def count_vowels(s: str) -> int:\n", "    return sum(1 for ch in s.lower() if ch in 'aeiou')\n",
            "Counts the characters of s that are vowels, ignoring case.")


def forward_messages(context: str, body: str, name: str) -> list[Message]:
    ex_ctx, ex_body, ex_desc = _EXAMPLE
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": FORWARD_ASK.format(name="count_vowels") + f"\n\n```python\n{ex_ctx}{ex_body}```"},
        {"role": "assistant", "content": ex_desc},
        {"role": "user",
         "content": FORWARD_ASK.format(name=name) + f"\n\n```python\n{context.rstrip()}\n{body.rstrip()}\n```"},
    ]


def backward_messages(context: str, description: str, name: str) -> list[Message]:
    ex_ctx, ex_body, ex_desc = _EXAMPLE
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": BACKWARD_ASK.format(name="count_vowels")
         + f"\n\n```python\n{ex_ctx}    # TODO: {ex_desc}\n```"},
        {"role": "assistant", "content": f"```python\n{ex_ctx}{ex_body}```"},
        {"role": "user", "content": BACKWARD_ASK.format(name=name)
         + f"\n\n```python\n{context.rstrip()}\n    # TODO: {description}\n```"},
    ]


def plain_messages(prompt: str, name: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": PLAIN_ASK.format(name=name) + f"\n\n```python\n{prompt.rstrip()}\n```"}]


def parse_description(text: str, limit: int = 128) -> str:
    text = " ".join(text.strip().strip("`").split())
    return text[:limit].strip() or BASELINE


# -- review mode: a region of a repository's file --------------------------------------------

def region_forward_messages(pre: str, code: str, post: str) -> list[Message]:
    ask = ("In one short sentence (at most 128 characters), say what the code between the "
           "[region] markers does, so that another programmer could write it again. Answer with the sentence "
           f"only, in your own words: do not copy lines of the code. {DATA_NOTE}")
    f = fence_for(pre + code + post)
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{ask}\n\n{f}python\n{pre}# [region]\n{code}# [/region]\n{post}{f}"}]


def region_backward_messages(pre: str, description: str, indent: str, post: str) -> list[Message]:
    ask = ("Replace the TODO comment below with code that does what it says. Reply with only the "
           f"replacement code in one ```python code block. {DATA_NOTE}")
    f = fence_for(pre + description + post)
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{ask}\n\n{f}python\n{pre}{indent}# TODO: {description}\n{post}{f}"}]
