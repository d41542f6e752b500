"""What an `ignore` or `unignore` command dismisses, resolved against the findings at the head,
and the reply that says so (the App's bot/app/comment_commands.py; the Action's reply names
what its check runs' annotations show). Pure.

- `ignore this` (in a review thread) names the finding that the thread's first comment, one of
  rtcbot's, marks (its marker: reporters/pr_review.py `key_of`) — only that one. When the
  marker matches no finding at the head (the pull request changed those lines) or several,
  nothing is dismissed, and the reply says so: never a finding that merely sits at the
  thread's line now.
- `ignore <fingerprint>` names the one finding at the head with that fingerprint; a fingerprint
  that several findings share, or that no finding has (one a finding had before, an old-style
  one, or that of code not pushed yet, issue #51), is refused, and the reply says why.
- Every reply names what it dismissed: the rule, the path, the line and the fingerprint (the
  path, the rule and the definition are not rtcbot's words: code spans).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzers import registry
from analyzers.report import Finding
from bot.core.dismissals import Dismissal, Prints, fingerprint, kind_of
from bot.core.dismissals_file import DISMISSALS_PATH, entry_yaml
from bot.core.explain import marked
from reporters.check_run import check_name_of
from reporters.untrusted import code, fenced, inert

MAX_NAMED = 10  # findings named in one reply; more are counted


@dataclass(frozen=True)
class Named:
    """One finding a dismissal covers, as a reply names it."""

    rule: str  # its rule id, else its title, else its analyzer
    path: str
    line: int | None
    fingerprint: str
    definition: str = ""  # its place's path of definitions and branches, else its definition

    @classmethod
    def of(cls, f: Finding) -> Named:
        return cls(f.rule_id or f.title or f.analyzer, f.path or "", f.start_line, fingerprint(f),
                   (f.place.path or f.place.definition) if f.place else "")

    def words(self) -> str:
        where = f"{self.path}:{self.line}" if self.path and self.line else self.path
        inside = f" in {code(self.definition)}" if self.definition else ""
        return f"{code(self.rule)} at {code(where or '?')}{inside}, fingerprint {code(self.fingerprint)}"


@dataclass(frozen=True)
class Aim:
    """What a command will dismiss: the target to record and the findings at the head it covers,
    or (`refusal`, rtcbot's Markdown) why nothing is dismissed."""

    target: str = ""
    named: tuple[Named, ...] = ()
    refusal: str | None = None


def in_thread(findings: Sequence[Finding], marker: str | None, verb: str, head: str) -> Aim:
    """`ignore this` / `unignore this`: the finding the thread's own marker names, only it."""
    if marker is None:
        return Aim(refusal=f"`{verb} this` works in the thread of one of rtcbot's comments on a finding; "
                   "elsewhere name the rule, the analyzer or the finding's fingerprint.")
    hits = marked(findings, marker)
    nothing = "nothing is dismissed" if verb == "ignore" else "no dismissal is removed"
    if not hits:
        return Aim(refusal=f"The finding this thread was opened on is not among rtcbot's findings at the head "
                   f"{code(head[:12])} (its lines changed since), so {nothing}. Name the finding's "
                   "fingerprint (the last line of its annotation in the check run) instead.")
    if len(hits) > 1:
        listed = "; ".join(Named.of(f).words() for f in hits[:MAX_NAMED])
        return Aim(refusal=f"This thread's marker names {len(hits)} findings at the head {code(head[:12])} "
                   f"({listed}), so {nothing}. Name the one meant by its fingerprint instead.")
    return Aim(fingerprint(hits[0]), (Named.of(hits[0]),))


def by_name(findings: Sequence[Finding], target: str, head: str) -> Aim:
    """`ignore <rule|analyzer|fingerprint>`: what it covers at the head. A fingerprint must name
    exactly one finding there: one that several share, or none (a fingerprint a finding had
    before, or of code not pushed yet), is refused, and the reply says which and why."""
    if kind_of(target) == "rule":
        return Aim(target, tuple(Named.of(f) for f in findings if target in (f.rule_id, f.analyzer)))
    prints = Prints.of(findings)
    at = code(head[:12])
    if shared := prints.shared(target):
        listed = "; ".join(Named.of(findings[i]).words() for i in shared[:MAX_NAMED])
        return Aim(refusal=f"{code(target)} is the fingerprint of {len(shared)} findings at the head {at} "
                   f"({listed}), so nothing is dismissed: a fingerprint dismisses one finding or none.")
    if hits := prints.named(target):
        return Aim(target, (Named.of(findings[hits[0]]),))
    earlier = prints.earlier().get(target, [])
    was = "".join(f" It was the fingerprint of {Named.of(findings[i]).words()}: {inert(why)}."
                  for i, why in earlier[:MAX_NAMED])
    return Aim(refusal=f"{code(target)} is the fingerprint of no finding at the head {at}, so nothing is dismissed: "
               "rtcbot dismisses a finding only while it shows it, never code still to come." + was)


def reply(d: Dismissal, aim: Aim, head: str, *, added: bool = True) -> str:
    """What a dismissal answers: what it dismissed, by name (rtcbot's Markdown, the rest inert)."""
    lines = [("Dismissed: " if added else "Already dismissed: ") + what(d) + ".", "", *covered(aim.named, head)]
    if d.reason:
        lines += ["", f"Reason: {inert(d.reason)}"]
    return "\n".join(lines)


def proposed(d: Dismissal, aim: Aim, head: str) -> str:
    """What `ignore` answers where the dismissals are a committed file: the entry to commit."""
    return "\n".join([
        f"The Action keeps no dismissals of its own: commit this entry to `{DISMISSALS_PATH}` on the default "
        "branch (add its `- ` item to the `dismissals:` list, or create the file with it). Runs read the "
        "file at a pull request's base commit, so it applies to pull requests based on a commit that has it.",
        "", *fenced(entry_yaml(d).rstrip("\n"), "yaml"), "",
        f"It dismisses {what(d)}.", "", *covered(aim.named, head)])


def to_remove(hits: Sequence[Dismissal], where: str) -> str:
    """What `unignore` answers where the dismissals are a committed file: the entries to remove."""
    lines = [f"Remove {'this entry' if len(hits) == 1 else 'these entries'} from {where}:", ""]
    lines += [f"- {code(d.target)} ({d.kind}): {inert(d.line())}" for d in hits[:100]]
    return "\n".join(lines)


def what(d: Dismissal) -> str:
    """A dismissal's target in words: "every finding of `rule`", "the finding with fingerprint `…`"."""
    inside = f" in {code(d.path_glob)}" if d.path_glob else ""
    if d.kind == "rule":
        return f"every finding of {code(d.target)}{inside}"
    return f"the finding with fingerprint {code(d.target)}{inside}"


def covered(named: Sequence[Named], head: str) -> list[str]:
    """The findings at the head a dismissal covers, one line each (or that it covers none now)."""
    if not named:
        return [f"No finding at the head {code(head[:12])} is covered by it now; it applies wherever it matches "
                "from the next analysis on."]
    lines = [f"At the head {code(head[:12])} that is:", ""]
    lines += [f"- {n.words()}" for n in named[:MAX_NAMED]]
    if len(named) > MAX_NAMED:
        lines.append(f"- … and {len(named) - MAX_NAMED} more")
    return lines


_FINGERPRINT_LINE = re.compile(r"^fingerprint ([0-9a-f]{16})\s*$", re.M)  # reporters/check_run.py's last line


def in_annotations(annotations: Iterable[Mapping[str, Any]], target: str) -> tuple[Named, ...]:
    """The findings rtcbot's check-run annotations show with fingerprint `target` (the Action keeps
    no findings: what it published is what it can name), their title as the rule."""
    out: list[Named] = []
    for a in annotations:
        found = _FINGERPRINT_LINE.findall(str(a.get("message") or ""))
        line = a.get("start_line")
        if found and found[-1] == target:
            out.append(Named(str(a.get("title") or "?"), str(a.get("path") or ""),
                             line if isinstance(line, int) else None, target))
    return tuple(out)


def check_names() -> list[str]:
    """The check runs rtcbot publishes, one per analyzer whose module loads."""
    return [check for name in registry.ANALYZERS if (check := check_name_of(name)) is not None]
