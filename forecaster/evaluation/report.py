"""Backtest reports: Markdown, self-contained HTML (rendered from the Markdown, images embedded), CSVs and PNG plots."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from ..plots import account_caption, attention_diagnostics, literal, plot_attention, plot_attention_profile, plot_forecast
from .analysis import MODEL, attention_scale, distinct_picks, mase_by_step, pick_folds, reference_model, representative_series
from .by_covariate import covariate_breakdown
from .report_html import render_html
from .report_plots import plot_calibration, plot_mase_by_step, plot_overview, plot_per_series, plot_relative, save
from .report_sections import tables
from .report_settings import METHOD, model_settings
from .report_settings import blend_line as _blend_line  # noqa: F401 (the blend's line is read from here too)
from .report_tables import code_span, coverage_warning, hit_rate_warning, plain_text, settings_table, spreadsheet_safe
from .report_text import (
    FOLDED,
    OVERVIEW_NOTE,
    PER_SERIES_NOTE,
    RELATIVE_NOTE,
    STEP_NOTE,
    attention_facts,
    figure,
    glossary,
    pick_sentence,
    second_line,
    verdict_line,
    verdict_sentence,
)
from .staged_folder import staged_folder

# The report's words are written in ``report_text`` and ``report_settings``, the series it picks chosen in ``analysis``;
# these names stay importable from here.
__all__ = [
    "METHOD",
    "OVERVIEW_NOTE",
    "PER_SERIES_NOTE",
    "RELATIVE_NOTE",
    "REPORT_FILES",
    "STEP_NOTE",
    "representative_series",
    "verdict_line",
    "write_report",
]

# Every file a report may write (none is named after a series id); rewriting a report removes those of them
# the new report does not write, and nothing else.
REPORT_FILES = (
    "report.md",
    "report.html",
    "metrics.csv",
    "forecasts.csv",
    "summary.csv",
    "skipped.csv",
    "forecast_overview.png",
    "mase_by_step.png",
    "mase_per_series.png",
    "relative_mase.png",
    "calibration.png",
    "calibration.csv",
    "calibration_by_fold.csv",
    "by_covariate.csv",
    "attention_profile.png",
    *(f"{kind}_{label}.png" for kind in ("forecast", "attention") for label in ("best", "median", "worst")),
)


def write_report(result, folder: Path, title: str | None = None) -> Path:
    """Write the report of a :class:`BacktestResult` into ``folder``; returns the Markdown path.

    The report is written into a temporary folder and moved in only once every file is complete, so a
    failed write leaves no trace: no folder when there was none, and a previous report in ``folder`` as it
    was. A successful write replaces the previous report's files, removes those of them it did not write
    again (:data:`REPORT_FILES`) and leaves any other file in ``folder`` alone. The temporary folder is
    made inside an existing ``folder`` (on its file system: a mount point, a parent that is read-only),
    beside a new one.
    """
    folder = Path(folder)
    with staged_folder(folder, REPORT_FILES) as staging:
        _write_files(result, staging, title)
    return folder / "report.md"


def _canonical(result):
    """The result with its data and attention in ``unique_id``, ``ds``, ``y`` (the forecasts' names), whatever the
    model called them; returns it and the user's (id, time, target) names."""
    params = result.settings.get("model_params", {})
    names = tuple(params.get(k) or d for k, d in (("id_col", "unique_id"), ("time_col", "ds"), ("target_col", "y")))
    renames = dict(zip(names, ("unique_id", "ds", "y"), strict=True))
    data, attention = result.data, result.attention
    # A covariate named as a key column the report uses (``y`` beside a target ``sales``) takes a name of its own.
    clashes = {c: f"{c} (covariate)" for c in renames.values() if c not in renames and data is not None and c in data}
    if clashes:
        roles = ("future_covariates", "past_covariates", "static_covariates")
        params = {**params, **{k: [clashes.get(n, n) for n in params.get(k) or ()] for k in roles}}
        result = dataclasses.replace(result, settings={**result.settings, "model_params": params})
    if data is not None:
        data = data.rename(columns={**clashes, **renames})
    if attention is not None:
        attrs = dict(attention.attrs)
        attention = attention.rename(columns={**renames, f"{names[1]}_history": "ds_history"})
        attention.attrs.update(attrs)
    return dataclasses.replace(result, data=data, attention=attention), names


def _write_files(result, folder: Path, title: str | None) -> list[str]:
    """Write every file of the report into ``folder``; returns their names."""
    tables = {"metrics.csv": result.metrics, "forecasts.csv": result.forecasts, "skipped.csv": result.skipped}
    for name, table in tables.items():
        spreadsheet_safe(table).to_csv(folder / name, index=False)
    summary = result.summary()
    summary.to_csv(folder / "summary.csv")
    every = settings_table(result, everything=True)
    every.assign(**{c: every[c].str.replace("`", "", regex=False).str.strip() for c in every.columns}).to_csv(
        folder / "settings.csv", index=False
    )
    result, names = _canonical(result)
    rates = result.calibration()
    if len(rates):
        spreadsheet_safe(rates).to_csv(folder / "calibration.csv")
        tables["calibration.csv"] = rates
        if "cutoff" in result.quantile_metrics:
            spreadsheet_safe(result.calibration(by="fold")).to_csv(folder / "calibration_by_fold.csv")
            tables["calibration_by_fold.csv"] = result.calibration(by="fold")
    by_covariate = covariate_breakdown(result)
    if len(by_covariate):
        spreadsheet_safe(by_covariate).to_csv(folder / "by_covariate.csv", index=False)
        tables["by_covariate.csv"] = by_covariate
    figures, notes, picks, folds = _figures(result, folder, rates, names[2])
    attention_md = _attention_section(result, picks, folder, figures, names) if result.attention is not None else ""
    text = _markdown(result, summary, attention_md, figures, notes, picks, title)
    (folder / "report.md").write_text(text, encoding="utf-8")
    page = render_html(text, folder, list(figures.values()), title or "Backtest report", folded=FOLDED)
    (folder / "report.html").write_text(page, encoding="utf-8")
    return [*tables, "summary.csv", "settings.csv", *figures.values(), "report.md", "report.html"]


def _figures(result, folder: Path, rates, target: str) -> tuple[dict, dict, dict, dict]:
    """Draw the report's figures; returns them (key -> file name), each pick's sentence, the picks and their folds."""
    models, figures = result.models, {}
    picks, also = distinct_picks(representative_series(result.metrics))
    notes = {first: "".join(f" It is also the {name} series." for name in names) for first, names in also.items()}
    folds = pick_folds(result.metrics, picks)
    reference = reference_model(models)
    for name, uid in picks.items():
        if name in folds:
            notes[name] = pick_sentence(name, uid, folds[name], result.metrics, reference) + notes.get(name, "")
    data = result.data
    if data is not None and folds:
        figures["overview"] = plot_overview(result.forecasts, data, picks, folds, target, folder)
        for name, uid in picks.items():
            if name not in folds:
                continue
            shown = result.forecasts[(result.forecasts["unique_id"] == uid) & (result.forecasts["cutoff"] == folds[name][0])]
            fig = plot_forecast(shown, data, unique_ids=[uid], model=MODEL, ylabel=target)
            cutoff = pd.Timestamp(folds[name][0]).date()
            literal(fig.axes[0].set_title(f"{uid}: {name} series, cutoff {cutoff}", loc="left", fontsize=10))
            figures[f"forecast_{name}"] = save(fig, folder, f"forecast_{name}.png")
    figures["mase_by_step"] = plot_mase_by_step(mase_by_step(result.forecasts, result.metrics, models), folder)
    per_series = plot_per_series(result.metrics, [m for m in ("auto_ets", "seasonal_naive") if m in models], folder)
    if per_series:
        figures["mase_per_series"] = per_series
    relative = plot_relative(result.metrics, models, folder)
    if relative:
        figures["relative_mase"] = relative
    if len(rates):
        figures["calibration"] = plot_calibration(rates, folder)
    return figures, notes, picks, folds


def _attention_section(result, picks: dict, folder: Path, figures: dict, names: tuple) -> str:
    """The attention section's Markdown; the maps of the picked series and the profile join ``figures``.

    The backtest keeps the attention of the last fold only: each pick's map is its own last-fold forecast, whatever
    date its series ends on; a pick without one is named, with the reason.
    """
    data, attention = result.data, result.attention
    season = result.settings["season_length"]
    diagnostics = attention_diagnostics(attention, season)
    vmax = attention_scale(attention, picks.values())  # one colour scale for the maps of a report
    lines, attended = [], set(attention["unique_id"])
    for name, uid in picks.items():
        if uid not in attended:
            lines.append(f"- No attention map for the {name} series ({code_span(uid)}): it was not forecast in the last fold.")
            continue
        own = result.forecasts[result.forecasts["unique_id"] == uid]
        last = own[own["cutoff"] == own["cutoff"].max()]
        fig = plot_attention(attention, df=data, unique_id=uid, forecasts=last, vmax=vmax)
        literal(fig.axes[0].set_ylabel(names[2]))
        figures[f"attention_{name}"] = save(fig, folder, f"attention_{name}.png")
        cutoff = pd.Timestamp(last["cutoff"].iloc[0]).date() if len(last) else "?"
        lines += ["", f"### Attention: {name} series ({code_span(uid)}), last fold (cutoff {cutoff})", ""]
        lines += [f"![Attention: {name} series]({figures[f'attention_{name}']})", ""]
    fig = plot_attention_profile(attention, season, relative_to="target")
    figures["attention_profile"] = save(fig, folder, "attention_profile.png")
    return (
        attention_facts(diagnostics, result.settings.get("occlusion"), season)
        + f"\n\n> {account_caption(result.attention)}\n\n"
        + "\n".join(lines)
        + "\n\n### Attention profile (lag from the target period)\n\n"
        + f"![Attention profile]({figures['attention_profile']})\n"
    )


def _markdown(result, summary, attention_md, figures, notes, picks, title) -> str:
    """report.md, top-down: verdict and a figure, the planner's figures, the tables, then settings, method, glossary."""
    reference = reference_model(result.models)
    verdict = verdict_line(result.settings.get("verdict"), result.skipped)
    parts = [f"# {plain_text(title) if title else 'Backtest report'}", ""]
    parts += [verdict_sentence(summary, result.settings.get("verdict"), result.settings), ""]
    parts += [second_line(summary, result, verdict), ""]
    parts += ["## Forecasts against actuals", ""]
    if "overview" in figures:
        parts += figure("Forecasts against actuals", figures["overview"], OVERVIEW_NOTE)
    else:
        parts += ["No forecast figure: the backtest kept no input data to draw the history from.", ""]
    parts += _warnings(result, summary)
    parts += ["## What a planner looks at", ""]
    for name in ("best", "median", "worst"):
        if f"forecast_{name}" in figures:
            uid = picks[name]
            parts += [f"### Forecast: {name} series ({code_span(uid)})", ""]
            parts += figure(f"Forecast: {name} series", figures[f"forecast_{name}"], notes.get(name, ""))
    parts += ["### Error per horizon step, and calibration", "", STEP_NOTE, ""]
    parts += _side_by_side(figures, ("mase_by_step", "MASE by horizon step"), ("calibration", "Calibration"))
    if "mase_per_series" in figures or "relative_mase" in figures:
        parts += ["### seq2seq against the baselines, per series", "", PER_SERIES_NOTE, ""]
        # The scatter at full width (a panel per baseline: beside the histogram its ticks read at 5 px); the histogram,
        # the same comparison as a distribution, folded beneath it.
        parts += _side_by_side(figures, ("mase_per_series", "seq2seq against the baselines, per series"))
        if "relative_mase" in figures:
            parts += [
                "### Relative MASE, the distribution",
                "",
                RELATIVE_NOTE,
                "",
                *_side_by_side(figures, ("relative_mase", "Relative MASE")),
            ]
    parts += tables(result, summary, reference)
    if attention_md:
        parts += ["## Attention", "", attention_md, ""]
    parts += model_settings(result)
    return "\n".join(parts + glossary())


def _side_by_side(figures: dict, *shown: tuple[str, str]) -> list[str]:
    """Figures in one paragraph: report.html sets them side by side where the page is wide enough."""
    lines = [f"![{caption}]({figures[key]})" for key, caption in shown if key in figures]
    return [*lines, ""] if lines else []


def _warnings(result, summary) -> list[str]:
    coverage = summary["coverage"].get(MODEL) if "coverage" in summary else None
    found = [coverage_warning(coverage, result.settings["model_params"].get("quantiles")), hit_rate_warning(result.calibration())]
    return [line for warning in found if warning for line in (warning, "")]
