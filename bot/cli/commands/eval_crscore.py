"""`rtcbot eval crscore DATASET`: CRScore's validity against human ratings.

Reads the format of the bundled `crscore-dev` dataset (one line per diff × reviewing system,
with `review`, `human` {con, comp, rel} and `pseudo_refs`), scores every review whose `system`
is not `msg` and prints Spearman and Kendall of Rel, Con and Comp against the human
ratings. `--calibrate` prints τ by the paper's recipe on the `msg` (human reference) rows.
`--recipe` picks how similarities become scores (analyzers/crscore/recipe.py: rtcbot, soft,
paper); `--cv K` fits the recipe on K − 1 folds of the diffs and reports Spearman / Kendall on
each held-out fold with their spread (analyzers/crscore/cv.py), never the figure of the fit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from analyzers.crscore import cv
from analyzers.crscore import score as crs
from analyzers.crscore.recipe import DEFAULT_RECIPE, RECIPES, Recipe
from analyzers.crscore.sts import DEFAULT_MODEL, POOLINGS, Embedder, EmbeddingError
from analyzers.llm.client import LLMError, LLMSettings
from bot.cli.commands._common import bar, plot_option, read_jsonl, save_plot
from bot.cli.commands._crscore_cv import Fitted, fitted_label, folds_of, print_folds, rel_fitter
from bot.cli.commands._datasets import DatasetArgument
from bot.cli.progress import live
from bot.core.llm import llm_factory
from bot.core.settings import llm_settings
from bot.shell.commands import options
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
    from analyzers.code.diff import DiffError, parse_github_files
    from analyzers.crscore.claims import generate_claims
    from analyzers.crscore.smells import detect_in_hunk

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


def embed_all(embedder: Embedder, items: list[tuple[str, list[str]]], label: str) -> list[crs.Similarities]:
    """Every pair's similarity matrix, one embedding pass, with a progress bar."""
    with bar(label) as progress_bar:
        task = progress_bar.add_task("sentences", total=None)

        def progress(done: int, total: int) -> None:
            progress_bar.update(task, completed=done, total=total)

        return crs.similarities(embedder, items, progress)


def threshold(tau_opt: str, soft: bool | None, recipe: str | None = None) -> tuple[float | None, Recipe]:
    """(the τ given, the recipe): a number or --hard means the paper's recipe; else --recipe
    (default rtcbot)."""
    if recipe == "paper" and soft:
        raise click.UsageError("--soft and --recipe paper contradict each other (the paper's scores use τ)")
    if tau_opt == "auto":
        hard = soft is False or recipe == "paper"
        if hard and recipe not in (None, "paper"):
            raise click.UsageError(f"--hard is the paper's recipe, not {recipe!r}")
        return None, RECIPES["paper" if hard else recipe or DEFAULT_RECIPE]
    try:
        explicit = float(tau_opt)
    except ValueError:
        raise click.BadParameter(f"expected 'auto' or a number, got {tau_opt!r}", param_hint="--tau") from None
    if soft or recipe not in (None, "paper"):
        raise click.UsageError("a threshold (--tau) is the paper's recipe: drop --tau, or --soft / --recipe")
    return explicit, RECIPES["paper"]


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


def print_calibration(tau: float, embedder: Embedder, pooling: str, source: str, references: int) -> None:
    entry = {crs.tau_key(embedder.model_name, pooling): {"tau": round(tau, 4)}}
    click.echo(json.dumps({"tau": round(tau, 4), "model": embedder.model_name, "pooling": pooling,
                           "pseudo_refs": source, "reference_reviews": references, "tau.json entry": entry}))


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
                 help="Threshold-free scores (the default; --recipe says which) or the paper's thresholded ones "
                      "(= --recipe paper)."),
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
@click.option("--recipe", "recipe_name", type=click.Choice(tuple(RECIPES)), default=None,
              help=f"How similarities become scores (default {DEFAULT_RECIPE}; paper: the paper's, with τ).")
@click.option("--cv", "cv_k", type=click.IntRange(min=2), default=None, metavar="K",
              help="Fit the recipe on K−1 folds of the diffs, report each held-out fold and the spread.")
@click.option("--seed", type=int, default=0, show_default=True, help="How --cv deals the diffs into folds.")
@plot_option
def command(data: Path, source: str, model: str, pooling: str, tau_opt: str, soft: bool | None,
            calibrate: bool, as_json: bool, limit: int | None, llm_base_url: str | None,
            llm_model: str | None, recipe_name: str | None, cv_k: int | None, seed: int,
            plot: Path | None) -> None:
    """Spearman / Kendall of CRScore against the human ratings in DATASET (rows with system != msg).

    DATASET: a JSON-lines file, or the bundled `crscore-dev` (see `rtcbot eval --list`)."""
    explicit_tau, recipe = threshold(tau_opt, soft, recipe_name)
    rows = load_rows(data)[:limit] if limit else load_rows(data)
    generated = generated_or_none(rows, source, llm_base_url, llm_model)
    embedder = Embedder(model, pooling=pooling)  # type: ignore[arg-type]
    msg = [r for r in rows if r["system"] == "msg"]
    scored = [r for r in rows if r["system"] != "msg"]
    calibrating = calibrate or (recipe.thresholded and explicit_tau is None
                                and (cv_k is not None or crs.tau_for(embedder.model_name, pooling) is None))
    check_rows(data.name, msg, scored, calibrating, calibrate, cv_k, seed)
    sims, ref = embed_rows(embedder, [] if calibrate else scored, msg if calibrating else [],
                           lambda r: pseudo_refs_of(r, source, generated), "calibrating" if calibrate else "scoring")
    if calibrate:
        print_calibration(crs.calibrate_tau([b for s in ref for b in s.sentence_best]), embedder, pooling,
                          source, len(msg))
        return
    about = {"recipe": recipe.name, "soft": not recipe.thresholded, "model": embedder.model_name,
             "pooling": pooling, "pseudo_refs": source}
    if cv_k is not None:
        cross_validated(sims, scored, recipe, explicit_tau, list(zip(msg, ref, strict=True)) if ref else [], cv_k, seed,
                        about, data.name, as_json)
        return
    tau = tau_of(recipe, explicit_tau, embedder.model_name, pooling, ref)
    report(crs.score_all(sims, tau, recipe), scored, {"tau": None if tau is None else round(tau, 4), **about},
           data.name, plot, as_json)


def check_rows(name: str, msg: list[dict[str, Any]], scored: list[dict[str, Any]], calibrating: bool,
               calibrate: bool, cv_k: int | None, seed: int) -> None:
    """One clear message, before any embedding, when the rows cannot give what was asked."""
    if calibrating and not msg:
        raise click.ClickException(f"{name}: no msg rows to calibrate τ on")
    if not scored and not calibrate:
        raise click.ClickException(f"{name}: no rows with system other than msg")
    if cv_k is not None:
        folds_of(scored, cv_k, seed)  # too many folds for the diffs: say so before the embeddings


def embed_rows(embedder: Embedder, scored: list[dict[str, Any]], msg: list[dict[str, Any]],
               refs: Callable[[dict[str, Any]], list[str]], label: str
               ) -> tuple[list[crs.Similarities], list[crs.Scores]]:
    """(the similarity matrices of `scored`, the paper's scores of `msg` for τ), one pass."""
    items = [(str(r["review"]), refs(r)) for r in (*scored, *msg)]
    try:
        sims = embed_all(embedder, items, label)
    except EmbeddingError as e:
        raise click.ClickException(str(e)) from None
    return sims[:len(scored)], crs.score_all(sims[len(scored):], None)


def tau_of(recipe: Recipe, explicit: float | None, model: str, pooling: str, ref: list[crs.Scores]) -> float | None:
    """The paper's τ: given, else shipped for the model and pooling, else calibrated on the msg
    rows; None for the soft recipes."""
    if not recipe.thresholded:
        return None
    if explicit is not None:
        return explicit
    shipped = crs.tau_for(model, pooling)
    return shipped if shipped is not None else crs.calibrate_tau([b for s in ref for b in s.sentence_best])


def report(results: list[crs.Scores], scored: list[dict[str, Any]], about: dict[str, Any], name: str,
           plot: Path | None, as_json: bool) -> None:
    """The figures over all the rows (no --cv): JSON, or the table; the plot when asked."""
    out = figures(results, scored)
    out.update(about)
    save_plot(plot, lambda: crscore_chart([s.rel for s in results], [float(r["human"]["rel"]) for r in scored],
                                          out["spearman"], out["kendall"], name))
    if as_json:
        click.echo(json.dumps(out))
        return
    print_table(out, name)
    variant = RECIPES[out["recipe"]].describe() if out["tau"] is None else f"paper, τ = {out['tau']:.4f}"
    click.echo(f"model {out['model']}, pooling {out['pooling']}, {variant}, pseudo-refs {out['pseudo_refs']}")


def cross_validated(sims: list[crs.Similarities], scored: list[dict[str, Any]], recipe: Recipe,
                    tau: float | None, msg: list[tuple[dict[str, Any], crs.Scores]], k: int, seed: int,
                    about: dict[str, Any], name: str, as_json: bool) -> None:
    """--cv K: each fold's held-out Spearman / Kendall of Rel, fitted on the other folds."""
    folds = folds_of(scored, k, seed)
    fit, rel_of = rel_fitter(sims, scored, recipe, tau, msg)
    gold = np.asarray([float(r["human"]["rel"]) for r in scored], dtype=np.float64)

    def measure(fitted: Fitted, test: np.ndarray) -> dict[str, float]:
        c = correlations([float(x) for x in rel_of(fitted)[test]], [float(x) for x in gold[test]])
        return {f: float("nan") if c[f] is None else float(c[f] or 0.0) for f in ("spearman", "kendall")}

    result = cv.cross_validate(folds, k, fit, measure)
    summary = result.summary()
    out = {"cv": k, "seed": seed, "n": len(scored), "spearman": summary["spearman"]["mean"],
           "kendall": summary["kendall"]["mean"], "folds": summary,
           "fitted": [fitted_label(f) for f in result.fitted], **about}
    if as_json:
        click.echo(json.dumps(out))
        return
    print_folds(f"CRScore vs human ratings on {name}: {k}-fold cross-validation by diff "
                f"({len(scored)} reviews), held-out figures", result, ("spearman", "kendall"))
    click.echo(f"recipe {recipe.name}, model {about['model']}, pooling {about['pooling']}, "
               f"pseudo-refs {about['pseudo_refs']}; folds dealt with seed {seed}")
