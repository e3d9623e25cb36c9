"""Backtest reports: Markdown, self-contained HTML (images embedded), CSVs and PNG plots."""

from __future__ import annotations

import base64
import html
import importlib.metadata
import os
import platform
import re
import secrets
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .._version import __version__
from ..partners.blend import PARTNERS
from ..plots import ACCOUNTED, CAUTION, attention_diagnostics, literal, plot_attention, plot_attention_profile, plot_forecast

# Every file a report may write (none is named after a series id); rewriting a report removes those of them
# the new report does not write, and nothing else.
REPORT_FILES = (
    "report.md",
    "report.html",
    "metrics.csv",
    "forecasts.csv",
    "summary.csv",
    "skipped.csv",
    "mase_by_step.png",
    "relative_mase.png",
    "attention_profile.png",
    *(f"{kind}_{label}.png" for kind in ("forecast", "attention") for label in ("best", "median", "worst")),
)


def _versions() -> dict[str, str]:
    """Versions of the code that ran; forecaster's from the package itself (installed metadata can be stale)."""
    names = ["torch", "numpy", "pandas", "scikit-learn", "statsforecast"]
    found = {"forecaster": __version__}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    found["python"] = platform.python_version()
    return found


def _markdown_table(frame: pd.DataFrame, digits: int = 3) -> str:
    frame = frame.reset_index()

    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.{digits}f}"
        return str(value)

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def mase_by_step(forecasts: pd.DataFrame, metrics: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Mean scaled absolute error per horizon step and model (zero-scale series excluded)."""
    scales = metrics.drop_duplicates(["unique_id", "cutoff"])[["unique_id", "cutoff", "scale"]]
    frame = forecasts.merge(scales, on=["unique_id", "cutoff"], how="left")
    frame = frame[frame["scale"] > 0]
    step = frame.groupby(["unique_id", "cutoff"]).cumcount() + 1
    errors = {m: (frame[m] - frame["y"]).abs() / frame["scale"] for m in models}
    return pd.DataFrame(errors).assign(step=step.to_numpy()).groupby("step").mean()


def _save(fig, folder: Path, name: str) -> str:
    fig.savefig(folder / name, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return name


def _plot_mase_by_step(table: pd.DataFrame, folder: Path) -> str:
    fig, ax = plt.subplots(figsize=(8, 3.6))
    for model in table.columns:
        ax.plot(table.index, table[model], marker="o", ms=3, label=model)
    ax.set_xlabel("horizon step")
    ax.set_ylabel("mean scaled |error| (MASE)")
    ax.set_title("MASE by horizon step", loc="left")
    ax.grid(alpha=0.3)
    literal(ax.legend())
    return _save(fig, folder, "mase_by_step.png")


def _plot_relative(metrics: pd.DataFrame, models: list[str], folder: Path) -> str | None:
    wide = metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase")
    if "auto_ets" not in wide:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.6))
    bins = np.linspace(-2, 2, 41)
    for model in [m for m in models if m != "auto_ets"]:
        ratio = np.log2((wide[model] / wide["auto_ets"]).replace([np.inf, 0], np.nan).dropna())
        ax.hist(ratio.clip(-2, 2), bins=bins, alpha=0.5, label=f"{model} (median ratio {2 ** ratio.median():.2f})")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("log2(MASE / AutoETS MASE) per series and fold (left of 0: better than AutoETS)")
    ax.set_ylabel("count")
    ax.set_title("Per-series MASE relative to AutoETS", loc="left")
    literal(ax.legend(fontsize=8))
    return _save(fig, folder, "relative_mase.png")


def representative_series(metrics: pd.DataFrame, model: str = "seq2seq") -> dict[str, object]:
    """Best, median and worst series by the model's mean MASE over folds."""
    scores = metrics[metrics["model"] == model].groupby("unique_id")["mase"].mean().dropna().sort_values()
    if scores.empty:
        return {}
    return {"best": scores.index[0], "median": scores.index[len(scores) // 2], "worst": scores.index[-1]}


def write_report(result, folder: Path, title: str | None = None) -> Path:
    """Write the report of a :class:`BacktestResult` into ``folder``; returns the Markdown path.

    The report is written into a temporary folder beside ``folder`` and moved in only once every file
    is complete, so a failed write leaves no trace: no folder when there was none, and a previous report
    in ``folder`` as it was. A successful write replaces the previous report's files, removes those of
    them it did not write again (:data:`REPORT_FILES`) and leaves any other file in ``folder`` alone.
    """
    folder = Path(folder)
    target = folder.resolve()
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"Cannot write a report into {folder}: it is a file.")
    created = [p for p in (target.parent, *target.parent.parents) if not p.exists()]  # deepest first
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.partial-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        names = _write_files(result, staging, title)
        if not target.exists():
            staging.rename(target)  # a new report appears whole, in one step
        else:
            for name in names:
                os.replace(staging / name, target / name)
            for name in set(REPORT_FILES) - set(names):
                (target / name).unlink(missing_ok=True)
            staging.rmdir()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for parent in created:
            try:
                parent.rmdir()
            except OSError:
                break
        raise
    return folder / "report.md"


def _write_files(result, folder: Path, title: str | None) -> list[str]:
    """Write every file of the report into ``folder``; returns their names."""
    models = result.models
    summary = result.summary()
    tables = {"metrics.csv": result.metrics, "forecasts.csv": result.forecasts, "skipped.csv": result.skipped}
    for name, table in tables.items():
        table.to_csv(folder / name, index=False)
    summary.to_csv(folder / "summary.csv")
    images: list[tuple[str, object, str]] = []  # caption, series id (None if none), file name
    by_step = mase_by_step(result.forecasts, result.metrics, models)
    images.append(("MASE by horizon step", None, _plot_mase_by_step(by_step, folder)))
    relative = _plot_relative(result.metrics, models, folder)
    if relative:
        images.append(("Per-series MASE relative to AutoETS", None, relative))
    picks = representative_series(result.metrics)
    last_cutoff = result.forecasts["cutoff"].max()
    last = result.forecasts[result.forecasts["cutoff"] == last_cutoff]
    data = result.data
    for label, uid in picks.items():
        if data is not None:
            fig = plot_forecast(result.forecasts[result.forecasts["unique_id"] == uid], data, unique_ids=[uid], model="seq2seq")
            literal(fig.axes[0].set_title(f"{uid} ({label} seq2seq MASE), last fold", loc="left", fontsize=10))
            images.append((f"Forecast: {label} series", uid, _save(fig, folder, f"forecast_{label}.png")))
    attention_md = ""
    if result.attention is not None:
        season = result.settings["season_length"]
        diagnostics = attention_diagnostics(result.attention, season)
        for label, uid in picks.items():
            if uid in set(result.attention["unique_id"]) and uid in set(last["unique_id"]):
                fig = plot_attention(result.attention, df=data, unique_id=uid, forecasts=last)
                images.append((f"Attention: {label} series", uid, _save(fig, folder, f"attention_{label}.png")))
        fig = plot_attention_profile(result.attention, season, relative_to="target")
        images.append(("Attention profile (lag from the target period)", None, _save(fig, folder, "attention_profile.png")))
        check = result.settings.get("occlusion")
        faithful = (
            f"- occlusion ratio: {check['ratio']:.2f} (the last fold, {check['n_series']} series): replacing each series' "
            "3 most attended history points by its mean moves the forecast that many times as much as replacing the 3 "
            "least attended. Above 1, the map points at what drives the forecast; below 1, away from it.\n"
            if check
            else ""
        )
        accounted = "contribution" in result.attention
        attention_md = (
            faithful + f"- attention mass on padded positions (must be 0): {diagnostics.padded_mass:.2e}\n"
            f"- mean attention entropy: {diagnostics.mean_entropy:.3f} nats "
            f"({diagnostics.normalised_entropy:.2f} of uniform)\n"
            f"- share of attention on the last season ({season} periods) before the origin: "
            f"{diagnostics.last_season_share:.3f}\n\n"
            + _markdown_table(diagnostics.by_step)
            + f"\n\n> {ACCOUNTED if accounted else CAUTION}\n"
        )
    (folder / "report.md").write_text(_markdown(result, summary, by_step, attention_md, images, title), encoding="utf-8")
    html_text = _html(result, summary, by_step, attention_md, images, folder, title)
    (folder / "report.html").write_text(html_text, encoding="utf-8")
    return [*tables, "summary.csv", *(name for _, _, name in images), "report.md", "report.html"]


def _code_span(value) -> str:
    """``value`` as a Markdown code span: shown as written (no emphasis, links or ``$`` math)."""
    text = " ".join(str(value).splitlines())
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _settings_lines(result) -> list[str]:
    s = result.settings
    params = s["model_params"]
    lines = [
        f"- data: {s.get('data', 'user frame')}: {s['n_series']} series, {s['n_rows']} rows, "
        f"freq `{s['freq']}`, season {s['season_length']}",
        f"- folds: {s['n_windows']} origins, {s['step_size']} periods apart, horizon {s['horizon']}, "
        f"{s['window']} window, refit={s['refit']}; cutoffs: {', '.join(s['cutoffs'])}",
        f"- series skipped in some fold: {result.skipped['unique_id'].nunique()} (see skipped.csv)",
        f"- model: seq2seq with {', '.join(f'{k}={v!r}' for k, v in params.items() if k not in ('progress',))}",
        f"- seed (random_state): {params.get('random_state')}",
        _blend_line(s["blend_weights"]),
        f"- baselines: {', '.join(s['baselines']) or 'none'} (statsforecast), fitted on each fold's data",
        f"- run time: {s['seconds']:.1f} s",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in _versions().items()),
    ]
    return lines


def _blend_line(weights: dict[str, float]) -> str:
    """How the reported forecast was made: the network alone, or its blend with the statistical partners."""
    used = {name: w for name, w in weights.items() if w > 0.0}
    if not used:
        return "- seq2seq forecast: the network alone (no statistical blend)"
    partners = " + ".join(f"{w:g} x {PARTNERS[name].label}" for name, w in used.items())
    names = ", ".join(f"`{name}`" for name in used)
    return (
        f"- seq2seq forecast: {1 - sum(used.values()):g} x the network + {partners}, fitted per series ({names}); "
        "attention describes the network's part only"
    )


def _markdown(result, summary, by_step, attention_md, images, title) -> str:
    parts = [f"# {title or 'Backtest report'}", "", *_settings_lines(result), "", "## Summary", "", _markdown_table(summary), ""]
    parts += [
        "MASE: mean absolute error over the horizon divided by the mean absolute seasonal difference of each "
        "fold's training data; zero scales are excluded and counted (`n_zero_scale`). `rel_mase_vs_X` is the "
        "model's mean MASE over the baseline's on the same series and folds; `win_rate` is the share of "
        "series-folds where the model has the lowest MASE; `coverage` is the share of actuals inside the "
        "outermost interval (nominal 80% by default). Seconds: the model's fit and predict time summed over folds; "
        "for the statsforecast baselines, `fit_seconds` is fit plus forecast.",
        "",
        "## MASE by horizon step",
        "",
        _markdown_table(by_step),
        "",
    ]
    if attention_md:
        parts += ["## Attention", "", attention_md, ""]
    parts += ["## Plots", ""]
    for caption, uid, name in images:
        heading = caption if uid is None else f"{caption} ({_code_span(uid)})"
        parts.append(f"### {heading}\n\n![{caption}]({name})\n")
    return "\n".join(parts)


def _html(result, summary, by_step, attention_md, images, folder: Path, title) -> str:
    def embed(name: str) -> str:
        data = base64.b64encode((folder / name).read_bytes()).decode()
        return f'<img alt="{html.escape(name)}" src="data:image/png;base64,{data}" style="max-width:100%">'

    settings = "".join(f"<li>{html.escape(line[2:])}</li>" for line in _settings_lines(result))
    attention = "".join(f"<p>{html.escape(line)}</p>" for line in attention_md.splitlines() if line and not line.startswith("|"))
    figures = "".join(f"<h3>{html.escape(c if uid is None else f'{c} ({uid})')}</h3>{embed(n)}" for c, uid, n in images)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title or "Backtest report")}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto;}} table{{border-collapse:collapse;font-size:13px}}
td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}</style></head><body>
<h1>{html.escape(title or "Backtest report")}</h1><ul>{settings}</ul>
<h2>Summary</h2>{summary.to_html(float_format=lambda v: f"{v:.3f}")}
<h2>MASE by horizon step</h2>{by_step.to_html(float_format=lambda v: f"{v:.3f}")}
{"<h2>Attention</h2>" + attention if attention_md else ""}
<h2>Plots</h2>{figures}</body></html>"""
