"""Backtest reports: Markdown, self-contained HTML (rendered from the Markdown, images embedded), CSVs and PNG plots."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import platform
import secrets
import shutil
from pathlib import Path

import pandas as pd

from .._version import __version__
from ..partners.blend import PARTNERS
from ..plots import (
    account_caption,
    attention_diagnostics,
    literal,
    plot_attention,
    plot_attention_profile,
    plot_forecast,
    readable,
)
from .report_html import render_html
from .report_plots import (
    mase_by_step,
    plot_calibration,
    plot_mase_by_step,
    plot_overview,
    plot_per_series,
    plot_relative,
    save,
)
from .report_tables import (
    COVERAGE_TOLERANCE,
    MODEL,
    calibration_by_fold,
    code_span,
    coverage_warning,
    duration,
    hit_rate_warning,
    label,
    leaderboard,
    markdown_table,
    occlusion_warning,
    paired,
    per_fold,
    pick_folds,
    plain_text,
    readable_summary,
    reference_model,
    representative_series,
    settings_table,
    spreadsheet_safe,
)
from .report_text import FOLDED, by_step_table, figure, glossary, pick_sentence, second_line, verdict_sentence

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


def _canonical(result):
    """The result with its data and attention in ``unique_id``, ``ds``, ``y`` (the forecasts' names), whatever the
    model called them; returns it and the user's (id, time, target) names."""
    params = result.settings.get("model_params", {})
    names = tuple(params.get(k) or d for k, d in (("id_col", "unique_id"), ("time_col", "ds"), ("target_col", "y")))
    renames = dict(zip(names, ("unique_id", "ds", "y"), strict=True))
    data, attention = result.data, result.attention
    if data is not None:
        data = data.rename(columns=renames)
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
    figures, notes, picks, folds = _figures(result, folder, rates, names[2])
    attention_md = _attention_section(result, picks, folder, figures, names) if result.attention is not None else ""
    text = _markdown(result, summary, attention_md, figures, notes, picks, title)
    (folder / "report.md").write_text(text, encoding="utf-8")
    page = render_html(text, folder, list(figures.values()), title or "Backtest report", folded=FOLDED)
    (folder / "report.html").write_text(page, encoding="utf-8")
    return [*tables, "summary.csv", "settings.csv", *figures.values(), "report.md", "report.html"]


def _figures(result, folder: Path, rates, target: str) -> tuple[dict, dict, dict, dict]:
    """Draw the report's figures; returns them (key -> file name), each pick's sentence, the picks and their folds."""
    models, figures, notes = result.models, {}, {}
    picks = _once(representative_series(result.metrics), notes)
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
    shown = attention[attention["unique_id"].isin(list(picks.values()))]
    shown = shown[~shown["padded"]] if "padded" in shown else shown
    vmax = float(shown["weight"].max()) if len(shown) else None  # one colour scale for the maps of a report
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
        + f"- attention mass on padded positions (must be 0): {readable(diagnostics.padded_mass)}\n"
        f"- mean attention entropy: {readable(diagnostics.mean_entropy)} nats "
        f"({diagnostics.normalised_entropy:.2f} of uniform)\n"
        f"- share of attention on the last season ({season} periods) before the origin: "
        f"{readable(diagnostics.last_season_share)}\n\n"
        + markdown_table(diagnostics.by_step)
        + f"\n\n> {account_caption(result.attention)}\n\n"
        + "\n".join(lines)
        + "\n\n### Attention profile (lag from the target period)\n\n"
        + f"![Attention profile]({figures['attention_profile']})\n"
    )


def verdict_line(verdict: dict | None, skipped: pd.DataFrame) -> str:
    """What the verdict rests on, in one sentence: series, forecast points and windows scored, and what was left out."""
    windows = "1 series-fold window" if len(skipped) == 1 else f"{len(skipped):,} series-fold windows"
    left_out = f"{windows} left out, each listed with its reason in skipped.csv"
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
    names = [params.get(k) or d for k, d in (("id_col", "unique_id"), ("time_col", "ds"), ("target_col", "y"))]
    lines = [
        f"- columns: series id {code_span(names[0])}, time {code_span(names[1])}, target {code_span(names[2])} "
        "(the CSVs name them `unique_id`, `ds` and `y`)",
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
        f"- run time: {duration(s['seconds'])}",
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


def _once(picks: dict, notes: dict[str, str]) -> dict:
    """The picks with each series once: a series that is also a later pick (best and median) is plotted once, and
    its note says what else it is."""
    kept: dict = {}
    for name, uid in picks.items():
        first = next((n for n, u in kept.items() if u == uid), None)
        if first is None:
            kept[name] = uid
        else:
            notes[first] = notes.get(first, "") + f" It is also the {name} series."
    return kept


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
        f"### Against {ref}",
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
        parts += [f"#### {heading}{shown}", ""]
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
        "### Forecast distribution",
        "",
        "WQL, the weighted quantile loss of the probabilistic benchmarks (Chronos, fev, GIFT-Eval): the mean over "
        "the levels of 2 x the pinball loss summed over every scored period, over the sum of |y| (lower is better). "
        "The statsforecast baselines are scored at the model's levels, from their central prediction intervals. "
        "Below, each level's hit rate: the share of actuals at or below that quantile, which a calibrated forecast "
        f"matches to its level (flagged beyond {COVERAGE_TOLERANCE * 100:g} points; see the calibration plot).",
        "",
        markdown_table(wql),
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
        "#### Calibration by fold",
        "",
        "Each fold on its own: the outermost interval's coverage and the level whose hit rate lies furthest from "
        "it (`off_points`). Every series shares a fold's periods, so a shock common to them (demand falling "
        "everywhere after the origin) moves all of that fold's hit rates together, and data up to the origin "
        "does not show it. The spread between folds shows how far one origin's hit rates can stray.",
        "",
        markdown_table(table),
        "",
    ]


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
        pair = ("mase_per_series", "seq2seq against the baselines, per series"), ("relative_mase", "Relative MASE")
        parts += _side_by_side(figures, *pair)
    parts += _tables(result, summary, reference)
    if attention_md:
        parts += ["## Attention", "", attention_md, ""]
    parts += _model_settings(result)
    return "\n".join(parts + glossary())


def _side_by_side(figures: dict, *shown: tuple[str, str]) -> list[str]:
    """Figures in one paragraph: report.html sets them side by side where the page is wide enough."""
    lines = [f"![{caption}]({figures[key]})" for key, caption in shown if key in figures]
    return [*lines, ""] if lines else []


def _warnings(result, summary) -> list[str]:
    coverage = summary["coverage"].get(MODEL) if "coverage" in summary else None
    found = [coverage_warning(coverage, result.settings["model_params"].get("quantiles")), hit_rate_warning(result.calibration())]
    return [line for warning in found if warning for line in (warning, "")]


def _tables(result, summary, reference) -> list[str]:
    by_step = mase_by_step(result.forecasts, result.metrics, result.models)
    n_windows, cutoffs = result.settings["n_windows"], result.settings.get("cutoffs")
    return [
        "## Tables",
        "",
        "### Summary",
        "",
        markdown_table(readable_summary(summary)),
        "",
        "summary.csv keeps the column names (`mean_mase`, `rel_mase_vs_auto_ets`, `win_rate`, ...); the glossary "
        "at the end says what each column is.",
        "",
        "### Per fold",
        "",
        "Each model's mean MASE and interval coverage in each fold (fold 1 has the earliest origin).",
        "",
        markdown_table(per_fold(result.metrics, result.models, n_windows, cutoffs)),
        "",
        *_against(result, reference),
        *by_step_table(by_step),
        *_distribution(result, summary, result.calibration()),
    ]


def _model_settings(result) -> list[str]:
    return [
        "## Model settings",
        "",
        "The seq2seq model's parameters that say what the forecast is, and every one given another value than its "
        "default; where one was left to the model (None), the value fitting inferred from the data or resolved, from "
        "the last fold's model. settings.csv lists all of them.",
        "",
        markdown_table(settings_table(result)),
        "",
        "## Settings and method",
        "",
        *_settings_lines(result),
        "",
        METHOD,
        "",
    ]


OVERVIEW_NOTE = (
    "The best, median and worst series by seq2seq's own mean MASE over its folds: the best drawn on its best fold, "
    "the worst on its worst, the median on its last. Dashed: what happened; blue: the forecast and its interval."
)
STEP_NOTE = (
    "Left: each model's mean scaled error at each step ahead. Right: each quantile level's share of actuals at or "
    "below the forecast, which for a calibrated forecast lies on the diagonal."
)
PER_SERIES_NOTE = (
    "Left: one point per series, its mean MASE under each baseline (across) and under seq2seq (up), over the folds "
    "both scored; below the dashed line, seq2seq forecast that series better. Right: per series and fold, seq2seq's "
    "MASE over AutoETS's on a log2 scale (left of 0: seq2seq is better)."
)
METHOD = (
    "Method: rolling-origin backtest. Each fold trains on every row up to its cutoff and forecasts the horizon after "
    "it; the baselines are fitted on the same rows. MASE divides each fold's mean absolute error by the mean absolute "
    "seasonal difference of its training data (zero scales are excluded and counted). The verdict compares mean MASE "
    "on the series and folds both models scored."
)
