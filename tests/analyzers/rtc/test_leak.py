"""The leak check (analyzers/rtc/leak.py): a description that carries the code it should describe
is caught however it is spaced; an honest description, however precise, is not."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from analyzers.editing_rtc.prompts import EXAMPLES
from analyzers.report import fence_for
from analyzers.rtc.leak import (
    check_descriptions,
    code_tokens,
    covered,
    data_shaped,
    leak_note,
    leak_rate,
    leak_reason,
    named_identifiers,
    quoted_line,
    tokens,
)
from analyzers.rtc.round_trip import round_trip
from analyzers.rtc.visible_text import fold, look_alikes, respace, unseparate
from bot.cli.datasets import lookup

OLD = (
    "def load(user, token):\n"
    "    if token is None:\n"
    "        return None\n"
    "    return get_user(user)\n"
)
NEW = (
    "def load(user, token):\n"
    "    if token is None or not validate_token(token, max_age_s=SESSION_MAX_AGE):\n"
    "        return None\n"
    "    return fetch_user_by_id(user.id, include_roles=True)\n"
)


@pytest.mark.parametrize("honest", [
    "Rename the helper and check the token before use.",
    "Rename get_user to fetch_user_by_id and call validate_token before use.",
    "Reject a token that validate_token refuses (at most SESSION_MAX_AGE old), and fetch the user by "
    "id with the roles included.",
    "Return None unless the token is valid; look the user up by id.",
])
def test_an_honest_description_passes(honest: str) -> None:
    assert leak_reason(honest, NEW, OLD) is None


def test_our_few_shot_descriptions_pass_on_their_own_examples() -> None:
    for old, new, desc in EXAMPLES:
        assert leak_reason(desc, new, old) is None, desc


def test_an_added_line_quoted_whole_is_caught_however_it_is_spaced() -> None:
    line = "return fetch_user_by_id(user.id, include_roles=True)"
    assert leak_reason(f"Make it {line}.", NEW, OLD) == "description quotes the new code: its line 4, verbatim"
    spaced = "return   fetch_user_by_id( user . id ,\ninclude_roles = True )"
    assert leak_reason(f"End with {spaced}", NEW, OLD) == "description quotes the new code: its line 4, verbatim"


def test_most_of_the_new_code_in_pieces_is_caught() -> None:
    desc = ("Check `not validate_token(token, max_age_s=SESSION_MAX_AGE)` and return "
            "`fetch_user_by_id(user.id, include_roles=True)`.")
    assert leak_reason(desc, NEW, OLD) == "description carries 73% of the new code"
    # one expression of it is a description naming what it calls
    assert leak_reason("Add `validate_token(token, max_age_s=SESSION_MAX_AGE)` to the check.", NEW, OLD) is None
    assert covered("Add `validate_token(token, max_age_s=SESSION_MAX_AGE)`.", NEW, OLD) == (8, 26)


def test_the_new_code_in_a_code_block_is_caught() -> None:
    block = ("Like this:\n```\nif token is None or not validate_token(token, max_age_s=SESSION_MAX_AGE)\n"
             "    return None\nfetch_user_by_id(user.id, include_roles=True)\n```")
    assert leak_reason(block, NEW, OLD) == "description carries 92% of the new code in a code block"
    # whitespace collapsed to one line, as the backward step gets it
    assert leak_reason(" ".join(block.split()), NEW, OLD) == "description carries 92% of the new code in a code block"
    assert check_descriptions([block, "Check it."], NEW, OLD) == [
        "description carries 92% of the new code in a code block", None]


def test_a_code_block_of_other_code_reveals_nothing() -> None:
    """A small model's guess or an example in a block: a bad description, judged by the round
    trip itself; an idiom it shares with the new code is not the answer, nor is old code."""
    assert leak_reason("Like this: ```python\nx = compute(a, b)\nprint(x)\n```", NEW, OLD) is None
    assert leak_reason("Keep ```if token is None:``` as it is.", NEW, OLD) is None
    new = "def prefixes(s):\n    out = []\n    for i in range(len(s)):\n        out.append(s[:i+1])\n    return out\n"
    guess = "```python\nreturn [x for x in range(len(s)) if s == x]\n```"
    hit, total = covered(guess, new, "def prefixes(s):\n")
    assert hit == 8 and hit < total / 2 and leak_reason(guess, new, "def prefixes(s):\n") is None


def test_a_short_added_line_quoted_is_a_leak_once_it_has_two_code_words() -> None:
    """A one-line authentication bypass is short: quoting it whole is quoting the answer. A line
    with fewer than two code words (`}`, `else:`, `i++`) is no quote of anything."""
    old, new = "def allowed(user):\n    x = 1\n", "def allowed(user):\n    x = 1\n    return True\n}\n"
    assert leak_reason("Add `return True` first.", new, old) == "description quotes the new code: its line 3, verbatim"
    assert leak_reason("Return True when the user is allowed.", new, old) is None  # prose: `Return`, not `return`
    assert leak_reason("Close it: } else: i++", old + "}\nelse:\ni++\n", old) is None


def test_short_lines_count_when_they_are_most_of_the_new_code() -> None:
    """`return False` quoted from a function of several lines ("return False if it is empty") is
    a description of one branch; the short lines quoted count once they are half its code."""
    body = ("def is_sorted(xs):\n    if not xs:\n        return False\n    for a, b in zip(xs, xs[1:]):\n"
            "        if a > b:\n            return False\n    return True\n")
    assert quoted_line("Return False for an empty list, return False at the first pair out of order, "
                       "else return True.", body, "def is_sorted(xs):\n") is None
    assert quoted_line("x = 1 then return x", "x = 1\nreturn x\n") == 1  # the whole of it


def test_lines_the_old_code_has_are_not_leaks() -> None:
    # the unchanged line `if token is None:` ... and `return None` are the old code's
    assert leak_reason("Keep `if token is None:` and `return None` as they are.", NEW, OLD) is None
    assert leak_reason("Keep the first line, def load(user, token):, unchanged.", NEW, OLD) is None


def test_a_quoted_comment_or_string_is_not_code() -> None:
    old = 'log.info("start")\n'
    new = 'log.info("start")\n// retry once: the server drops the first request after a restart\n'
    desc = "Add the comment 'retry once: the server drops the first request after a restart'."
    assert leak_reason(desc, new, old) is None
    assert [t for t, is_code in code_tokens('f("a b c") // d e') if is_code] == ["f", "(", ")"]
    # a line that only names what it imports: a description of the edit has to name it
    assert leak_reason("Include <sys/wait.h> and network/NetworkUtils.h.",
                       '#include <stdio.h>\n#include <sys/wait.h>\n#include "network/NetworkUtils.h"\n',
                       "#include <stdio.h>\n") is None
    assert [t for t, is_code in code_tokens("from os.path import join as j") if is_code] == []
    assert [t for t, c in code_tokens("import_all = load(x)") if c] == ["import_all", "=", "load", "(", "x", ")"]
    # code around a string still counts
    new2 = 'log.info("start")\nlog.warn("retrying after " + delay_ms + " ms");\n'
    assert leak_reason('Add log.warn("retrying after " + delay_ms + " ms");', new2, old) is not None


BYPASS_OLD = "def allowed(user, token):\n    return verify(user, token)\n"
BYPASS_NEW = ('def allowed(user, token):\n    if not token: return True  # legacy clients\n'
              '    if user.name == "svc-deploy": return True\n    return verify(user, token)\n')


@pytest.mark.parametrize(("quote", "line"), [
    ("if not token: return True", 2),  # the comment left off
    ("if user.name == 'svc-deploy': return True", 3),  # other quotes around the string
    ("if user.name == \"someone\": return True", 3),  # another string
    ("if user.name == `x`: return True  # the deploy account", 3),  # another string and a comment
])
def test_a_line_quoted_without_its_comment_or_with_other_strings_is_a_leak(quote: str, line: int) -> None:
    assert leak_reason(f"Let them in: {quote}", BYPASS_NEW, BYPASS_OLD) == (
        f"description quotes the new code: its line {line}, verbatim")


def test_a_line_whose_new_part_is_its_comment_or_a_string_is_not_new_code_without_it() -> None:
    old = '    self.close()\n    log.error("failed")\n'
    new = '    self.close()  # without this, it is called twice\n    log.error("it failed again")\n'
    assert leak_reason("Calls self.close() as before and logs log.error('…') as before.", new, old) is None
    assert leak_reason("Comment self.close()  # without this, it is called twice", new, old) is not None


@pytest.mark.parametrize("sep", ["\u00b7", "\u2022", ".", "-", "_", " "])
def test_letters_joined_by_one_separator_read_as_the_word(sep: str) -> None:
    quote = re.sub(r"\w+", lambda m: sep.join(m.group()), "if not token: return True")  # i·f n·o·t t·o·k·e·n: …
    assert leak_reason(f"Let them in: {quote}", BYPASS_NEW, BYPASS_OLD) == (
        "description quotes the new code: its line 2, verbatim")
    assert unseparate(sep.join("return")) == "r e t u r n"


def test_separators_inside_names_and_numbers_stay() -> None:
    for text in ("foo_a_b_c", "v1.2.3", "10.0.0.1", "user.id", "max-age", "e.g."):
        assert unseparate(text) == text
    assert unseparate("if\u00b7not\u2022token") == "if not token"
    # three or more letters spelt apart by - or _ beside a dot: a dotted name spelt apart
    assert unseparate("u-s-e-r.n-a-m-e") == "u s e r.n a m e"
    assert unseparate("t_o_k_e_n.s_t_a_r_t") == "t o k e n.s t a r t"


def test_naming_most_of_the_new_identifiers_is_a_leak() -> None:
    old = "def f(a):\n    return a\n"
    new = ("def f(a):\n    cfg_path = resolve_path(a)\n    raw_cfg = read_yaml(cfg_path)\n"
           "    merged_cfg = merge_defaults(raw_cfg)\n    return merged_cfg\n")
    assert named_identifiers("x", new, old) == (0, 6)
    prose = ("Set cfg_path with resolve_path on a, raw_cfg by read_yaml of it, merged_cfg by "
             "merge_defaults, and return it.")
    assert leak_reason(prose, new, old) == (
        "description names 6 of the 6 identifiers and literals that only the new code has")
    assert leak_reason("Resolve the path, read the YAML with read_yaml, merge the defaults and return "
                       "merged_cfg.", new, old) is None  # two of six: a description needs some names


def test_notes_and_rates() -> None:
    assert leak_note([None, None]) == ""
    assert leak_note([None, "description carries a code block", None]) == (
        " 1 of 3 descriptions leaked the code (description carries a code block): it counts as a "
        "failed round trip.")
    assert leak_rate([1.0, 0.0, 2.0], [3.0, 3.0, 3.0]) == pytest.approx(1 / 3)
    assert leak_rate([], []) == 0.0


def test_a_fence_is_longer_than_any_backtick_run_inside() -> None:
    assert fence_for("x = 1") == "```"
    assert fence_for("s = '````'") == "`````"


def test_a_leaking_description_is_a_failed_round_trip() -> None:
    """rtc.round_trip with a leak check: the leaking sample's regenerations score 0 under every
    sim (although its regeneration is right), the baseline is not checked, the count is a score."""
    target = "return fetch_user_by_id(user.id, include_roles=True)"
    sims = {"exact": lambda a, b: float(a == b), "loose": lambda a, b: 0.5}
    trip = round_trip(
        forward=lambda: ["Look the user up by id, with roles.", f"Write {target}"],
        backward=lambda d: [target],  # a model that gets it right from either
        target=target, sims=sims, baseline_description="Edit.",
        leak=lambda d: leak_reason(d, target),
    )
    assert trip.leaks == [None, "description quotes the new code: its line 1, verbatim"]
    assert trip.sims["exact"] == [[1.0], [0.0]] and trip.sims["loose"] == [[0.5], [0.0]]
    assert trip.baseline_sims["exact"] == [1.0]
    s = trip.scores("exact")
    assert s["rtc"] == 0.5 and s["rtc@2"] == 1.0 and s["leaks"] == 1.0 and s["rtc_loose"] == 0.25
    assert trip.backward[1] == [target]  # regenerated all the same: requests do not depend on it


@pytest.mark.slow  # every bundled hunk through the check: seconds of CPU
def test_few_gpt4_change_summaries_of_the_bundled_hunks_trip_the_check() -> None:
    """The bundled CodeReviewer hunks come with GPT-4's change summaries: detailed, honest prose
    that quotes code now and then. The thresholds keep them (nearly) clear; docs/integrity.md."""
    rows = [json.loads(line) for line in lookup("codereviewer-validation").file().read_text("utf-8").splitlines()]
    flagged = 0
    for r in rows:
        old, new = [], []
        for ln in r["code_change"].splitlines():
            if ln.startswith("@@"):
                continue
            if not ln.startswith("+"):
                old.append(ln[1:])
            if not ln.startswith("-"):
                new.append(ln[1:])
        summary = r["change_summary"].split("Implications")[0]
        flagged += leak_reason(summary, "\n".join(new), "\n".join(old)) is not None
    # ≤ 5 %: 11 when written, 16 since short lines and literals count; each a quote or a walk through the code
    assert len(rows) == 500 and flagged <= 25


# -- what a reader sees (analyzers/rtc/visible_text.py) --------------------------------------------

LINE = "return fetch_user_by_id(user.id, include_roles=True)"


def test_ascii_text_is_read_as_it_is() -> None:
    text = "return fetch_user_by_id(user.id)  # spaced   out"
    assert fold(text) is text


@pytest.mark.parametrize(("shown", "read"), [
    ("re\u200bturn Tr\u200bue", "return True"),  # zero-width space
    ("re\u00adturn Tr\u00adue", "return True"),  # soft hyphen
    ("ret\u2060urn\ufeff Tr\u200d\u200cue", "return True"),  # word joiner, BOM, zero-width (non-)joiner
    ("\u202ereturn\u202c True", "return True"),  # a direction override
    ("r\ufe0fe\ufe00turn T\u034frue", "return True"),  # variation selectors, the combining grapheme joiner
    ("re\u3164turn", "return"),  # a Hangul filler
    ("r\u0435turn Tru\u0435", "return True"),  # Cyrillic е
    ("\u0440ass \u0430nd \u0455kip", "pass and skip"),  # Cyrillic р, а, ѕ
    ("\u0406f \u041e\u0445 \u03bf", "If Ox o"),  # Cyrillic І (as I, not l), О, х; Greek ο
    ("\u0456s_\u0455\u0435t", "is_set"),  # Ukrainian і, Cyrillic ѕ and е
    ("\uff52\uff45\uff54\uff55\uff52\uff4e\u3000\U0001d413rue", "return True"),  # full-width, mathematical
    ("re\u0301tu\u0308rn", "return"),  # combining marks
    ("x \u2215 y", "x / y"),  # division slash
])
def test_text_is_read_as_a_reader_sees_it(shown: str, read: str) -> None:
    assert fold(shown) == read


def test_look_alikes_come_from_unicode_confusables() -> None:
    table = look_alikes()
    assert table["\u0430"] == "a" and table["\u0440"] == "p" and table["\u03bf"] == "o"
    assert all(v.isascii() and len(v) == 1 for v in table.values()) and len(table) > 1000


def test_spaced_letters_read_as_the_code_words_they_spell() -> None:
    words = {"return", "True", "fetch_user_by_id"}
    assert respace(tokens("r e t u r n T r u e"), words) == ["return", "True"]
    assert respace(tokens("f e t c h _ u s e r _ b y _ i d ( x )"), words) == ["fetch_user_by_id", "(", "x", ")"]
    assert respace(tokens("Set x = 1 and a b c"), words) == ["Set", "x", "=", "1", "and", "a", "b", "c"]
    assert respace(tokens("a b"), {"ab"}) == ["a", "b"]  # two letters are not a run


@pytest.mark.parametrize("disguise", [
    lambda s: "\u200b".join(s),  # a zero-width space between every character
    lambda s: s.replace("e", "\u00ade"),  # soft hyphens
    lambda s: s.replace("e", "\u0435").replace("o", "\u043e").replace("a", "\u0430"),  # Cyrillic look-alikes
    lambda s: "  ".join(" ".join(w) for w in s.split()),  # letters spaced apart
    lambda s: " ".join(" ".join(w) for w in s.split()),  # ... and the word spaces collapsed
    lambda s: s.replace("u", "u\u0308").replace("r", "\uff52"),  # combining marks, full-width letters
])
def test_a_quoted_line_in_disguise_is_caught(disguise: Callable[[str], str]) -> None:
    assert leak_reason(f"Finish with {disguise(LINE)}.", NEW, OLD) == (
        "description quotes the new code: its line 4, verbatim")
    short = "def f(user):\n    return True\n"
    assert quoted_line(f"Just {disguise('return True')}", short, "def f(user):\n") == 2


def test_distinctive_literals_count_with_the_identifiers() -> None:
    """Literals shaped like data count as the new code's own, with its code-shaped identifiers;
    words and messages do not (a description may have to name them)."""
    assert [data_shaped(t) for t in ("svc-deploy", "tmp-", "_blank", "k8s.io/api/v1", "xmlLang", "/2.0/")] == [True] * 6
    assert [data_shaped(t) for t in ("daily", "Running", "Failed to connect", "id", "  ", "----")] == [False] * 6
    old = "def route(app):\n    pass\n"
    new = ('def route(app):\n    bp = Blueprint("api_v2", url_prefix="/api/v2")\n'
           '    bp.add("/v2/user/<user_id>", view=load_user)\n    bp.add("/v2/ping", view=ping)\n'
           '    app.register(bp, name="daily")\n')
    assert named_identifiers("x", new, old) == (0, 6)
    walk = "Make a Blueprint api_v2 at /api/v2 with /v2/user/<user_id> served by load_user and /v2/ping by ping."
    assert leak_reason(walk, new, old) == (
        "description names 5 of the 6 identifiers and literals that only the new code has")
    assert leak_reason("Add a v2 blueprint with a user route and a ping route, registered as daily.", new, old) is None
