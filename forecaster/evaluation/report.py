"""Backtest reports: Markdown, self-contained HTML (rendered from the Markdown, images embedded), CSVs and PNG plots."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import secrets
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from .._version import __version__
from ..partners.blend import PARTNERS
from ..plots import account_caption, attention_diagnostics, literal, plot_attention, plot_attention_profile, plot_forecast
from .report_html import render_html
from .report_plots import mase_by_step, plot_calibration, plot_mase_by_step, plot_relative, save
from .report_tables import (
    COVERAGE_TOLERANCE,
    MODEL,
    calibration_by_fold,
    code_span,
    coverage_warning,
    headline,
    hit_rate_warning,
    label,
    leaderboard,
    markdown_table,
    occlusion_warning,
    paired,
    per_fold,
    plain_text,
    readable_summary,
    reference_model,
    representative_series,
    settings_table,
    spreadsheet_safe,
)

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
    "calibration.png",
    "calibration.csv",
    "calibration_by_fold.csv",
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
        spreadsheet_safe(table).to_csv(folder / name, index=False)
    summary.to_csv(folder / "summary.csv")
    every = settings_table(result, everything=True)
    every.assign(**{c: every[c].str.replace("`", "", regex=False).str.strip() for c in every.columns}).to_csv(
        folder / "settings.csv", index=False
    )
    reference = reference_model(models)
    images: list[tuple[str, object, str]] = []  # caption, series id (None if none), file name
    by_step = mase_by_step(result.forecasts, result.metrics, models)
    images.append(("MASE by horizon step", None, plot_mase_by_step(by_step, folder)))
    relative = plot_relative(result.metrics, models, folder)
    if relative:
        images.append(("Per-series MASE relative to AutoETS", None, relative))
    rates = result.calibration()
    if len(rates):
        spreadsheet_safe(rates).to_csv(folder / "calibration.csv")
        tables["calibration.csv"] = rates
        if "cutoff" in result.quantile_metrics:
            by_fold = result.calibration(by="fold")
            spreadsheet_safe(by_fold).to_csv(folder / "calibration_by_fold.csv")
            tables["calibration_by_fold.csv"] = by_fold
        images.append(("Calibration: hit rate against nominal level", None, plot_calibration(rates, folder)))
    picks = representative_series(result.metrics, reference=reference)
    notes = _pick_notes(result.metrics, picks, reference)
    picks = _once(picks, notes)
    last_cutoff = result.forecasts["cutoff"].max()
    last = result.forecasts[result.forecasts["cutoff"] == last_cutoff]
    data = result.data
    for name, uid in picks.items():
        if data is not None:
            fig = plot_forecast(result.forecasts[result.forecasts["unique_id"] == uid], data, unique_ids=[uid], model=MODEL)
            literal(fig.axes[0].set_title(f"{uid} ({name} seq2seq MASE), last fold", loc="left", fontsize=10))
            literal(fig.axes[0].set_title(notes[name][0], loc="right", fontsize=8, color="0.35"))
            images.append((f"Forecast: {name} series", uid, save(fig, folder, f"forecast_{name}.png")))
    attention_md = _attention_section(result, picks, last, folder, images) if result.attention is not None else ""
    text = _markdown(result, summary, by_step, attention_md, images, notes, reference, title)
    (folder / "report.md").write_text(text, encoding="utf-8")
    page = render_html(text, folder, [name for _, _, name in images], title or "Backtest report")
    (folder / "report.html").write_text(page, encoding="utf-8")
    return [*tables, "summary.csv", "settings.csv", *(name for _, _, name in images), "report.md", "report.html"]


def _attention_section(result, picks: dict, last, folder: Path, images: list) -> str:
    """The attention section's Markdown; the maps of the picked series and the profile join ``images``."""
    data = result.data
    season = result.settings["season_length"]
    diagnostics = attention_diagnostics(result.attention, season)
    shown = result.attention[result.attention["unique_id"].isin(list(picks.values()))]
    shown = shown[~shown["padded"]] if "padded" in shown else shown
    vmax = float(shown["weight"].max()) if len(shown) else None  # one colour scale for the maps of a report
    for name, uid in picks.items():
        if uid in set(result.attention["unique_id"]) and uid in set(last["unique_id"]):
            fig = plot_attention(result.attention, df=data, unique_id=uid, forecasts=last, vmax=vmax)
            images.append((f"Attention: {name} series", uid, save(fig, folder, f"attention_{name}.png")))
    fig = plot_attention_profile(result.attention, season, relative_to="target")
    images.append(("Attention profile (lag from the target period)", None, save(fig, folder, "attention_profile.png")))
    check = result.settings.get("occlusion")
    faithful = (
        f"- occlusion ratio: {check['ratio']:.2f} (the last fold, {check['n_series']} series): replacing each series' "
        "3 most attended history points by its mean moves the forecast that many times as much as replacing the 3 "
        "least attended. Above 1, the map points at what drives the forecast; below 1, away from it.\n"
        if check
        else ""
    )
    if check and "share_ratio" in check:
        faithful += (
            f"- the shares' occlusion ratio: {check['share_ratio']:.2f}: the same check with the 3 points of the "
            "largest and the 3 of the smallest share of the forecast (the bars under each map).\n"
        )
    warning = occlusion_warning(check["ratio"] if check else None)
    return (
        (f"{warning}\n\n" if warning else "")
        + faithful
        + f"- attention mass on padded positions (must be 0): {diagnostics.padded_mass:.2e}\n"
        f"- mean attention entropy: {diagnostics.mean_entropy:.3f} nats "
        f"({diagnostics.normalised_entropy:.2f} of uniform)\n"
        f"- share of attention on the last season ({season} periods) before the origin: "
        f"{diagnostics.last_season_share:.3f}\n\n"
        + markdown_table(diagnostics.by_step)
        + f"\n\n> {account_caption(result.attention)}\n"
    )


def verdict_line(verdict: dict | None, skipped: pd.DataFrame) -> str:
    """What the verdict rests on, in one sentence: series, forecast points and windows scored, and what was left out."""
    left_out = f"{len(skipped)} series-fold windows left out, each listed with its reason in skipped.csv"
    if verdict is None:
        return f"The verdict leaves out {left_out}." if len(skipped) else "Every series-fold window is scored."
    return (
        f"The verdict covers {verdict['series']:,} of {verdict['series_total']:,} series and {verdict['points']:,} of "
        f"{verdict['points_total']:,} forecast points ({verdict['windows']:,} of {verdict['windows_total']:,} "
        f"series-fold windows); " + (left_out if len(skipped) else "nothing is left out") + "."
    )


def _settings_lines(result) -> list[str]:
    s = result.settings
    params = s["model_params"]
    lines = [
        f"- data: {s.get('data', 'user frame')}: {s['n_series']} series, {s['n_rows']} rows, "
        f"freq `{s['freq']}`, season {s['season_length']}",
        f"- folds: {s['n_windows']} origins, {s['step_size']} periods apart, horizon {s['horizon']}, "
        f"{s['window']} window, refit={s['refit']}; cutoffs: {', '.join(s['cutoffs'])}",
        f"- left out of the verdict: {len(result.skipped)} series-fold windows of {result.skipped['unique_id'].nunique()} "
        "series, each with its reason in skipped.csv (a history too short for the fold, no observed target in the "
        "horizon, or no MASE scale)",
        "- missing targets: each series is read from its first to its last observed target; a gap inside it is "
        "masked for the network, carried forward from the last observation for the statistical fits (the baselines "
        "and the model's partners), and not scored",
        "- model: seq2seq; its settings, as fitted, are listed under *Model settings*",
        f"- seed (random_state): {params.get('random_state')}",
        _blend_line(s["blend_weights"], [n for n in s["blend_weights"] if params.get(n) is None]),
        *_calibration_line(result),
        f"- baselines: {', '.join(s['baselines']) or 'none'} (statsforecast), fitted on each fold's data",
        f"- run time: {s['seconds']:.1f} s",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in _versions().items()),
    ]
    return lines


def _blend_line(weights: dict[str, float], chosen: list[str] = ()) -> str:
    """How the reported forecast was made: the network alone, or its blend with the statistical partners.

    ``chosen``: partners whose weight the fit chose on held-out windows (their parameter was None).
    """
    how = (
        f"; {', '.join(f'`{n}`' for n in chosen)} chosen at fit on held-out windows at the end of the training data (last fold)"
        if chosen
        else ""
    )
    used = {name: w for name, w in weights.items() if w > 0.0}
    if not used:
        return f"- seq2seq forecast: the network alone (no statistical blend){how}"
    partners = " + ".join(f"{w:g} x {PARTNERS[name].label}" for name, w in used.items())
    names = ", ".join(f"`{name}`" for name in used)
    return (
        f"- seq2seq forecast: {1 - sum(used.values()):g} x the network + {partners}, fitted per series ({names}); "
        f"attention describes the network's part only{how}"
    )


_TREATMENT_WORDS = {
    "network": "the network's own quantiles, moved with the blended median",
    "factors": "the network's quantiles with each offset from the median scaled, per horizon step, to its held-out hit rate",
    "mixed": "offsets mixing the network's with damped Holt-Winters' own forecast distribution",
    "mixed+factors": "offsets mixing the network's with damped Holt-Winters' distribution, scaled per step to their hit rates",
}


def _calibration_line(result) -> list[str]:
    """How the intervals were calibrated, when the model's were (see ``forecaster.model.calibration``)."""
    state = getattr(result.last_model, "state_", None)
    calibration = getattr(state, "calibration", None)
    if calibration is None:
        return []
    if calibration.treatment is not None:
        scores = ", ".join(f"{name} {value:.4f}" for name, value in calibration.held_out_wql.items())
        return [
            f"- intervals: {_TREATMENT_WORDS.get(calibration.treatment, calibration.treatment)}; chosen on "
            f"{calibration.n_windows} held-out windows at the end of the training data, last fold: the network's own "
            f"quantiles unless another treatment's WQL is clearly lower across the held-out series (with one series, lower) "
            f"(cross-fitted where factors are learnt: {scores})"
        ]
    if calibration.factors is None:
        return []
    mixed = (
        f"mixes {1 - calibration.shape:g} x the network's with {calibration.shape:g} x damped Holt-Winters' own forecast "
        "distribution, and "
        if calibration.shape > 0.0
        else ""
    )
    return [
        f"- intervals: each quantile's offset from the median {mixed}is scaled, per horizon step, so that its level "
        f"held its nominal share of actuals in {calibration.n_windows} held-out windows at the end of the "
        "training data (last fold)"
    ]


def _once(picks: dict, notes: dict[str, tuple[str, str]]) -> dict:
    """The picks with each series once: a series that is also a later pick (best and median) is plotted once, and
    its note says what else it is."""
    kept: dict = {}
    for name, uid in picks.items():
        first = next((n for n, u in kept.items() if u == uid), None)
        if first is None:
            kept[name] = uid
        else:
            short, sentence = notes[first]
            notes[first] = (short, f"{sentence} It is also the {name} series.")
    return kept


def _pick_notes(metrics: pd.DataFrame, picks: dict, reference: str | None) -> dict[str, tuple[str, str]]:
    """Per pick: a short reason (for the plot) and a sentence with its numbers (for the report)."""
    own = metrics[metrics["model"] == MODEL].groupby("unique_id")["mase"].mean()
    against = paired(metrics, reference).set_index("unique_id") if reference else pd.DataFrame()
    notes = {}
    for name, uid in picks.items():
        if name != "median" and uid in against.index:
            row, ref = against.loc[uid], label(reference)
            gain = "gain against" if name == "best" else "loss to"
            short = f"picked by the largest MASE {gain} {ref}"
            numbers = (
                f"seq2seq MASE {row[f'{MODEL}_mase']:.3f}, {ref} {row[f'{reference}_mase']:.3f} "
                f"(difference {row['difference']:+.3f}, mean over {int(row['n_folds'])} folds)"
            )
        else:
            short = {"best": "picked by the lowest seq2seq MASE", "worst": "picked by the highest seq2seq MASE"}.get(
                name, "picked by the median seq2seq MASE"
            )
            numbers = f"seq2seq MASE {own.get(uid, np.nan):.3f} (mean over folds)"
        notes[name] = (short, f"{short[0].upper()}{short[1:]}: {numbers}.")
    return notes


def _against(result, reference: str | None) -> list[str]:
    """The leaderboard section: where seq2seq beats the reference most, and where it loses most."""
    if reference is None:
        return ["## Against a baseline", "", "No baseline ran, so there is nothing to compare seq2seq with per series.", ""]
    ref = label(reference)
    table = paired(result.metrics, reference)
    gains, losses = leaderboard(result.metrics, reference)
    intro = ""
    if reference != "auto_ets":
        intro = f"AutoETS is not among the baselines: against {ref} (`{reference}`), the first baseline. "
    parts = [
        f"## Against {ref}",
        "",
        f"{intro}Per series, the mean MASE over the folds where both seq2seq and {ref} are scored; `difference` is "
        f"seq2seq minus {ref} (negative: seq2seq is better) and `ratio` seq2seq over {ref}. seq2seq is better on "
        f"{int((table['difference'] < 0).sum())} of {len(table)} series, worse on {int((table['difference'] > 0).sum())}.",
        "",
    ]
    for heading, rows, none in (
        (f"Where seq2seq beats {ref} most", gains, "on no series"),
        (f"Where seq2seq loses most to {ref}", losses, "on no series"),
    ):
        shown = f" (the {len(rows)} largest differences)" if len(rows) >= 10 else ""
        parts += [f"### {heading}{shown}", ""]
        parts += [markdown_table(rows, code=("unique_id",)) if len(rows) else f"None: seq2seq does so {none}.", ""]
    return parts


def _distribution(result, summary: pd.DataFrame, rates: pd.DataFrame) -> list[str]:
    """The forecast distribution: WQL and each level's hit rate per model (the baselines at the model's levels)."""
    if not len(rates) or "wql" not in summary:
        return []
    wql = summary["wql"].dropna().rename("WQL").to_frame()
    shown = rates.rename(columns=lambda level: f"q{level * 100:g}")
    by_fold = _calibration_by_fold(result)
    return [
        "## Forecast distribution",
        "",
        "WQL, the weighted quantile loss of the probabilistic benchmarks (Chronos, fev, GIFT-Eval): the mean over "
        "the levels of 2 x the pinball loss summed over every scored period, over the sum of |y| (lower is better). "
        "The statsforecast baselines are scored at the model's levels, from their central prediction intervals. "
        "Below, each level's hit rate: the share of actuals at or below that quantile, which a calibrated forecast "
        f"matches to its level (flagged beyond {COVERAGE_TOLERANCE * 100:g} points; see the calibration plot).",
        "",
        markdown_table(wql, digits=4),
        "",
        markdown_table(shown),
        "",
        *by_fold,
    ]


def _calibration_by_fold(result) -> list[str]:
    """Each fold's coverage and worst level per model: how far one origin's hit rates stray on their own."""
    if result.settings.get("n_windows", 1) < 2 or "cutoff" not in result.quantile_metrics:
        return []
    table = calibration_by_fold(result.calibration(by="fold"))
    return [
        "### Calibration by fold",
        "",
        "Each fold on its own: the outermost interval's coverage and the level whose hit rate lies furthest from "
        "it (`off_points`). Every series shares a fold's periods, so a shock common to them (demand falling "
        "everywhere after the origin) moves all of that fold's hit rates together, and data up to the origin "
        "does not show it. The spread between folds shows how far one origin's hit rates can stray.",
        "",
        markdown_table(table),
        "",
    ]


def _markdown(result, summary, by_step, attention_md, images, notes, reference, title) -> str:
    parts = [f"# {plain_text(title) if title else 'Backtest report'}", "", headline(summary, result.settings), ""]
    parts += [verdict_line(result.settings.get("verdict"), result.skipped), ""]
    parts += [*_settings_lines(result), "", "## Summary", "", markdown_table(readable_summary(summary)), ""]
    coverage = summary["coverage"].get(MODEL) if "coverage" in summary else None
    warning = coverage_warning(coverage, result.settings["model_params"].get("quantiles"))
    if warning:
        parts += [warning, ""]
    rates = result.calibration()
    levels = hit_rate_warning(rates)
    if levels:
        parts += [levels, ""]
    parts += [
        "MASE: mean absolute error over the horizon divided by the mean absolute seasonal difference of each "
        'fold\'s training data; zero scales are excluded and counted (zero-scale). "MASE / X" is the '
        "model's mean MASE over the baseline's on the same series and folds; wins is the share of "
        "series-folds where the model has the lowest MASE; sMAPE is the symmetric MAPE in percent "
        "(0-200); WQL the weighted quantile loss (below); coverage is the share of actuals inside the "
        "outermost interval (nominal 80% by default). Seconds: the model's fit and predict time summed over folds; "
        "for the statsforecast baselines, fit is fit plus forecast. summary.csv keeps the column names "
        "(`mean_mase`, `rel_mase_vs_auto_ets`, `win_rate`, `n_zero_scale`, ...).",
        "",
        "## Per fold",
        "",
        "Each model's mean MASE and interval coverage in each fold (fold 1 has the earliest origin).",
        "",
        markdown_table(per_fold(result.metrics, result.models, result.settings["n_windows"], result.settings.get("cutoffs"))),
        "",
        *_against(result, reference),
        "## MASE by horizon step",
        "",
        markdown_table(by_step),
        "",
        *_distribution(result, summary, rates),
    ]
    if attention_md:
        parts += ["## Attention", "", attention_md, ""]
    parts += [
        "## Model settings",
        "",
        "The seq2seq model's parameters that say what the forecast is, and every one given another value than its "
        "default; where one was left to the model (None), the value fitting inferred from the data or resolved, from "
        "the last fold's model. settings.csv lists all of them.",
        "",
        markdown_table(settings_table(result)),
        "",
        "## Plots",
        "",
    ]
    for caption, uid, name in images:
        heading = caption if uid is None else f"{caption} ({code_span(uid)})"
        pick = caption.split(": ")[-1].removesuffix(" series")
        note = f"{notes[pick][1]}\n\n" if uid is not None and caption.startswith("Forecast") and pick in notes else ""
        parts.append(f"### {heading}\n\n{note}![{caption}]({name})\n")
    return "\n".join(parts)
