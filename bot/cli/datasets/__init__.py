"""The evaluation datasets bundled with rtcbot: their names, what they measure, where they lie.

`rtcbot eval COMMAND DATASET` takes a file or one of these names, and `rtcbot eval --list`
prints them. The files are package data read through importlib.resources, so the names work
from a checkout and from an installed wheel alike, and loading one reads no network. Each
folder's SOURCES.md gives the origin, the commit and the licence.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable


@dataclass(frozen=True)
class Dataset:
    """One bundled dataset: a JSON-lines file inside this package."""

    name: str
    command: str  # the `rtcbot eval` command it is for
    resource: str  # its path inside this package, "/"-separated
    licence: str
    origin: str
    measures: str

    def file(self) -> Traversable:
        """The file, inside the installed package (a plain file for a normal install)."""
        node = files(__name__)
        for part in self.resource.split("/"):
            node = node / part
        return node

    def rows(self) -> int:
        """How many rows (non-empty lines) the file has."""
        with self.file().open("r", encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())


BUNDLED: dict[str, Dataset] = {d.name: d for d in (
    Dataset("crscore-dev", "crscore", "crscore-human/dev.jsonl", "MIT",
            "CRScore human study (atharva-naik/CRScore), dev split",
            "CRScore validity: Spearman/Kendall of Rel, Con, Comp against human ratings; "
            "τ calibration on the human reviews"),
    Dataset("codereviewer-validation", "editing-rtc", "codereviewer/validation-500-gpt4-claims.jsonl",
            "MIT", "CodeReviewer validation hunks with GPT-4 claims (atharva-naik/CRScore)",
            "EditingRTC on real review hunks: RTC, lift over the 'Edit.' baseline"),
    Dataset("quixbugs-dev", "repair", "repair/quixbugs-python-dev.jsonl", "MIT",
            "QuixBugs Python programs with JSON tests (jkoppel/QuixBugs)",
            "program repair by execution: verdicts, pass@k, TCA@k"),
)}


class UnknownDataset(LookupError):
    """A name that is no bundled dataset, or one bundled for another command."""


def lookup(name: str, command: str | None = None) -> Dataset:
    """The bundled dataset called `name`, checked to be for `command` when one is given."""
    ds = BUNDLED.get(name)
    if ds is None:
        raise UnknownDataset(not_found(name))
    if command is not None and ds.command != command:
        raise UnknownDataset(f"{name!r} is a dataset for `rtcbot eval {ds.command}`, "
                             f"not `rtcbot eval {command}`")
    return ds


def not_found(name: str) -> str:
    """The message for a DATASET that is neither a file nor a bundled name."""
    return (f"{name!r} is neither a file nor a bundled dataset "
            f"({', '.join(sorted(BUNDLED))}; see `rtcbot eval --list`)")
