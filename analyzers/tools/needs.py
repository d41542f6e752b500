"""How each tool an analyzer may need beside the LLM (its `needs`, analyzers/info.py) is found
and checked, in the words `rtcbot doctor` says: the embedding model, the smell tools (PMD on
Java, JSHint on Node, Python's in process), Semgrep. Each check finds the tool as the analyses
find it; none starts one."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from analyzers.context import Tools


@dataclass(frozen=True)
class Check:
    what: str
    says: str
    ok: bool = True

    def line(self) -> str:
        return f"{'ok     ' if self.ok else 'MISSING'} {self.what}: {self.says}"


def embeddings(tools: Tools) -> list[Check]:
    from analyzers.crscore.sts import DEFAULT_MODEL, EmbeddingError, model_path

    if importlib.util.find_spec("sentence_transformers") is None:
        return [Check("embeddings", "sentence-transformers is not installed (pip install 'rtcbot[local]' "
                      "or scripts/install.sh)", ok=False)]
    try:
        return [Check("embeddings", f"{DEFAULT_MODEL} from {model_path(DEFAULT_MODEL)}")]
    except EmbeddingError as e:
        return [Check("embeddings", str(e), ok=False)]


def semgrep(tools: Tools) -> list[Check]:
    from analyzers.semgrep.scan import find_semgrep

    exe = find_semgrep(tools.semgrep)
    return [Check("Semgrep", exe) if exe else Check(
        "Semgrep", "not found (RTCBOT_SEMGREP, or semgrep beside rtcbot: scripts/install.sh)", ok=False)]


def smells(tools: Tools) -> list[Check]:
    from analyzers.crscore.smells import jshint, node_bin, pmd, which

    out = []
    why = pmd.unavailable_reason()
    out.append(Check("PMD (Java smells)", why, ok=False) if why else Check(
        "PMD (Java smells)", f"{pmd.PMD_LIB} on {which('java')} (server: RTCBOT_PMD_SERVER={tools.pmd_server})"))
    why = jshint.unavailable_reason()
    out.append(Check("JSHint (JavaScript smells)", why, ok=False) if why else Check(
        "JSHint (JavaScript smells)", f"{node_bin('jshint')} on {which('node')}"))
    out.append(Check("Python smells", "radon and the design checks, in process"))
    return out


def pmd_ready() -> bool:
    """Whether PMD is installed (Java and its library): a worker warms it at start."""
    from analyzers.crscore.smells.pmd import unavailable_reason

    return unavailable_reason() is None


# each tool an analyzer may need → its check, in the order doctor says them
CHECKS: dict[str, Callable[[Tools], list[Check]]] = {
    "embeddings": embeddings,
    "smells": smells,
    "semgrep": semgrep,
}
