"""`rtcbot eval crscore DATASET`: CRScore's validity against human ratings.

Reads the format of the bundled `crscore-dev` dataset (one line per diff × reviewing system,
with `review`, `human` {con, comp, rel} and `pseudo_refs`), scores every review whose `system`
is not `msg` and prints Spearman and Kendall of Rel, Con and Comp against the human
ratings. `--calibrate` prints τ by the paper's recipe on the `msg` (human reference) rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from analyzers.crscore import score as crs
from analyzers.crscore.sts import DEFAULT_MODEL, POOLINGS, Embedder, EmbeddingError
from analyzers.llm import LLMError, LLMSettings
from bot.cli.commands._common import bar, plot_option, read_jsonl, save_plot
from bot.cli.commands._datasets import DatasetArgument
from bot.cli.progress import live
from bot.core.commands import options
from bot.core.llm import llm_factory
from bot.core.settings import llm_settings
from reporters.eval_plots import crscore_chart

SOURCES = ("magicoder", "gpt4o", "human_verified", "generate")
LANGS = {"py": "python", "java": "java", "js": "javascript"}
EXT = {"python": "py", "java": "java", "javascript": "js"}


def load_rows(data: Path) -> list[dict[str, Any]]:
    rows = []
    for no, obj in read_jsonl(data):
        for key in ("review", "system", "human", "diff"):
            if key not in obj:
                raise click.ClickException(f"{data}:{no}: missing field {key!r}")
        if not isinstance(obj["human"], dict) or "rel" not in obj["human"]:
            raise click.ClickException(f"{data}:{no}: 'human' needs con/comp/rel ratings")
        rows.append(obj)
    if not rows:
        raise click.ClickException(f"{data}: no rows")
    return rows


def generated_refs(rows: list[dict[str, Any]], settings: LLMSettings) -> dict[str, list[str]]:
    """diff → claims from the configured LLM + smells found on the hunk's changed lines."""
    from analyzers.crscore.claims import generate_claims
    from analyzers.crscore.smells import detect_in_hunk
    from analyzers.diff import DiffError, parse_github_files

    diffs = {str(r["diff"]): LANGS.get(str(r.get("lang", "")), str(r.get("lang", ""))) for r in rows}
    llm = llm_factory(settings)()

    def one(item: tuple[str, str]) -> tuple[str, list[str]]:
        diff, lang = item
        try:
            cs = parse_github_files([{"filename": f"snippet.{EXT.get(lang, 'txt')}", "patch": diff}], ignore=())
        except DiffError:
            return diff, []
        refs: list[str] = []
        for _, hunk in cs.hunks():
            refs += generate_claims(llm, hunk.text, hunk.removed_code, hunk.added_code).all
            refs += [s.sentence() for s in detect_in_hunk(lang, hunk).smells]
        return diff, refs

    with live(lambda: llm.usage) as display:
        advance = display.step("claims of diffs", total=len(diffs))

        def tracked(item: tuple[str, str]) -> tuple[str, list[str]]:
            out = one(item)
            advance(1)
            return out

        return dict(llm.map(tracked, list(diffs.items())))


def pseudo_refs_of(row: dict[str, Any], source: str, generated: dict[str, list[str]] | None) -> list[str]:
    if source == "generate":
        assert generated is not None
        return generated.get(str(row["diff"]), [])
    refs = row.get("pseudo_refs") or {}
    if source not in refs:
        raise click.ClickException(f"row {row.get('index')}: no pseudo_refs[{source!r}] (try --pseudo-refs generate)")
    return [*refs[source], *refs.get("smells", [])]


def correlations(pred: list[float], gold: list[float]) -> dict[str, float | int | None]:
    if len(pred) < 3:
        return {"spearman": None, "kendall": None, "n": len(pred)}
    # here, not at the top: scipy.stats costs ~1 s of every `rtcbot` start (rtcbot loads a command when it is called)
    from scipy.stats import kendalltau, spearmanr

    s = spearmanr(pred, gold)[0]
    k = kendalltau(pred, gold)[0]
    return {"spearman": None if s != s else round(float(s), 4),
            "kendall": None if k != k else round(float(k), 4), "n": len(pred)}


def _score_all(embedder: Embedder, items: list[tuple[str, list[str]]], tau: float | None,
               label: str) -> list[crs.Scores]:
    with bar(label) as progress_bar:
        task = progress_bar.add_task("sentences", total=None)

        def progress(done: int, total: int) -> None:
            progress_bar.update(task, completed=done, total=total)

        return crs.score_reviews(embedder, items, tau, progress)


def threshold(tau_opt: str, soft: bool | None) -> tuple[float | None, bool]:
    """(the τ given, soft): a number implies --hard; neither said: soft."""
    if tau_opt == "auto":
        return None, True if soft is None else soft
    try:
        explicit = float(tau_opt)
    except ValueError:
        raise click.BadParameter(f"expected 'auto' or a number, got {tau_opt!r}", param_hint="--tau") from None
    if soft:
        raise click.UsageError("--soft takes no threshold; drop --tau or use --hard")
    return explicit, False


def generated_or_none(rows: list[dict[str, Any]], source: str, llm_base_url: str | None,
                      llm_model: str | None) -> dict[str, list[str]] | None:
    """With --pseudo-refs generate: each diff's claims from the LLM (generated_refs); else None."""
    if source != "generate":
        return None
    try:
        return generated_refs(rows, llm_settings(base_url=llm_base_url, model=llm_model))
    except LLMError as e:
        raise click.ClickException(str(e)) from None


def figures(results: list[crs.Scores], scored: list[dict[str, Any]]) -> dict[str, Any]:
    """Spearman and Kendall of Rel (at the top level), Con and Comp against the human ratings."""
    out: dict[str, Any] = {}
    for dim in ("rel", "con", "comp"):
        corr = correlations([getattr(s, dim) for s in results], [float(r["human"][dim]) for r in scored])
        if dim == "rel":
            out.update(corr)
        else:
            out[dim] = corr
    return out


def print_table(out: dict[str, Any], dataset: str) -> None:
    table = Table(title=f"CRScore vs human ratings on {dataset} ({out['n']} reviews)")
    for col in ("measure", "Spearman", "Kendall"):
        table.add_column(col, justify="right" if col != "measure" else "left")
    table.add_row("Rel", str(out["spearman"]), str(out["kendall"]))
    table.add_row("Con", str(out["con"]["spearman"]), str(out["con"]["kendall"]))
    table.add_row("Comp", str(out["comp"]["spearman"]), str(out["comp"]["kendall"]))
    Console().print(table)


crscore_options = options(
    click.option("--pseudo-refs", "source", type=click.Choice(SOURCES), default="magicoder", show_default=True,
                 help="Claims of the dataset (plus its smells), or generate them with the configured LLM."),
    click.option("--model", default=DEFAULT_MODEL, show_default=True,
                 help="sentence-transformers embedding model (installed locally)."),
    click.option("--pooling", type=click.Choice(POOLINGS), default="tokens", show_default=True,
                 help="tokens: the paper's stop-word-free token mean; model: the model's own pooling."),
    click.option("--tau", "tau_opt", default="auto", show_default=True,
                 help="Threshold: 'auto' (the model's calibrated τ) or a number; a number implies --hard."),
    click.option("--soft/--hard", default=None,
                 help="Threshold-free scores (default) or the paper's thresholded ones."),
    click.option("--calibrate", is_flag=True, help="Print τ by the paper's recipe on the msg rows and exit."),
    click.option("--json", "as_json", is_flag=True, help="One JSON object on one line."),
    click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N rows."),
    click.option("--llm-base-url", envvar="RTCBOT_LLM_BASE_URL", default=None, metavar="URL",
                 help="For --pseudo-refs generate: OpenAI-compatible endpoint (default: embedded model)."),
    click.option("--llm-model", envvar="RTCBOT_LLM_MODEL", default=None, help="For --pseudo-refs generate."),
)


@click.command("crscore")
@click.argument("data", type=DatasetArgument("crscore"), metavar="DATASET")
@crscore_options
@plot_option
def command(data: Path, source: str, model: str, pooling: str, tau_opt: str, soft: bool | None,
            calibrate: bool, as_json: bool, limit: int | None, llm_base_url: str | None,
            llm_model: str | None, plot: Path | None) -> None:
    """Spearman / Kendall of CRScore against the human ratings in DATASET (rows with system != msg).

    DATASET: a JSON-lines file, or the bundled `crscore-dev` (see `rtcbot eval --list`)."""
    explicit_tau, soft = threshold(tau_opt, soft)
    rows = load_rows(data)[:limit] if limit else load_rows(data)
    generated = generated_or_none(rows, source, llm_base_url, llm_model)
    embedder = Embedder(model, pooling=pooling)  # type: ignore[arg-type]
    msg = [r for r in rows if r["system"] == "msg"]
    scored = [r for r in rows if r["system"] != "msg"]

    def items(rs: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
        return [(str(r["review"]), pseudo_refs_of(r, source, generated)) for r in rs]

    try:
        if calibrate or (not soft and explicit_tau is None
                         and crs.tau_for(embedder.model_name, pooling) is None):
            if not msg:
                raise click.ClickException(f"{data}: no msg rows to calibrate τ on")
            ref = _score_all(embedder, items(msg), None, "calibrating")
            calibrated = crs.calibrate_tau([b for s in ref for b in s.sentence_best])
            if calibrate:
                entry = {crs.tau_key(embedder.model_name, pooling): {"tau": round(calibrated, 4)}}
                click.echo(json.dumps({"tau": round(calibrated, 4), "model": embedder.model_name,
                                       "pooling": pooling, "pseudo_refs": source,
                                       "reference_reviews": len(msg), "tau.json entry": entry}))
                return
            tau: float | None = calibrated
        else:
            tau = explicit_tau if explicit_tau is not None else crs.tau_for(embedder.model_name, pooling)
        if soft:
            tau = None
        if not scored:
            raise click.ClickException(f"{data}: no rows with system other than msg")
        results = _score_all(embedder, items(scored), tau, "scoring")
    except EmbeddingError as e:
        raise click.ClickException(str(e)) from None
    out = figures(results, scored)
    out.update({"tau": None if tau is None else round(tau, 4), "soft": soft, "model": embedder.model_name,
                "pooling": pooling, "pseudo_refs": source})
    save_plot(plot, lambda: crscore_chart([s.rel for s in results], [float(r["human"]["rel"]) for r in scored],
                                          out["spearman"], out["kendall"], data.name))
    if as_json:
        click.echo(json.dumps(out))
        return
    print_table(out, data.name)
    variant = "soft (threshold-free)" if soft else f"hard, τ = {tau:.4f}"
    click.echo(f"model {embedder.model_name}, pooling {pooling}, {variant}, pseudo-refs {source}")
