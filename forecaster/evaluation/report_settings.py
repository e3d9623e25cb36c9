"""The report's last sections: the model's settings, and the settings and method of the backtest (data, folds, how
the forecast and its intervals were made, run time and the versions of the code that ran)."""

from __future__ import annotations

import importlib.metadata
import platform

import numpy as np

from .._version import __version__
from ..partners.blend import PARTNERS
from .analysis import MODEL, reference_model
from .baselines import baseline_notes
from .metrics import interval_shares
from .report_tables import code_span, duration, label, markdown_table, settings_table

# The last paragraph of the report: how a backtest scores.
METHOD = (
    "Method: rolling-origin backtest. Each fold trains on every row up to its cutoff and forecasts the horizon after "
    "it; the baselines are fitted on the same rows. MASE divides each fold's mean absolute error by the mean absolute "
    "seasonal difference of its training data (zero scales are excluded and counted). The verdict compares mean MASE "
    "on the series and folds both models scored."
)


def versions() -> dict[str, str]:
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


def settings_lines(result) -> list[str]:
    """The Settings and method section's bullets: columns, data, folds, what the verdict leaves out, the model, the
    blend and the intervals, the baselines, run time and versions."""
    s = result.settings
    params = s["model_params"]
    names = [params.get(k) or d for k, d in (("id_col", "unique_id"), ("time_col", "ds"), ("target_col", "y"))]
    lines = [
        f"- columns: series id {code_span(names[0])}, time {code_span(names[1])}, target {code_span(names[2])} "
        "(the CSVs name them `unique_id`, `ds` and `y`)",
        f"- data: {s.get('data', 'user frame')}: {s['n_series']} series, {s['n_rows']} rows, "
        f"freq `{s['freq']}`, season {s['season_length']}",
        f"- folds: {s['n_windows']} origin{'s' if s['n_windows'] != 1 else ''}, {s['step_size']} periods apart, "
        f"horizon {s['horizon']}, "
        f"{s['window']} window, refit={s['refit']}; cutoffs: {', '.join(s['cutoffs'])}",
        f"- left out of the verdict: {len(result.skipped)} series-fold windows of {result.skipped['unique_id'].nunique()} "
        "series, each with its reason in skipped.csv (a history too short for the fold, no observed target in the "
        "horizon, or no MASE scale)",
        "- missing targets: each series is read from its first to its last observed target; a gap inside it is "
        "masked for the network, carried forward from the last observation for the statistical fits (the baselines "
        "and the model's partners), and not scored",
        "- model: seq2seq; its settings, as fitted, are listed under *Model settings*",
        f"- seed (random_state): {params.get('random_state')}",
        blend_line(s["blend_weights"], [n for n in s["blend_weights"] if params.get(n) is None]),
        *calibration_line(result),
        f"- baselines: {', '.join(s['baselines']) or 'none'} (statsforecast), fitted on each fold's data"
        + "".join(f"; {note}" for note in baseline_notes(s["baselines"], s["season_length"])),
        *floor_line(result),
        *(f"- closed periods: {note}" for note in [closure_note(result)] if note),
        f"- run time: {duration(s['seconds'])}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()),
    ]
    return lines


def floor_line(result) -> list[str]:
    """Where the model's forecasts are floored at zero and the baselines' are not: the comparison is then not like for
    like, in the model's favour on series that are never negative (their actuals are not either)."""
    rule = getattr(result.last_model, "nonnegative_", None)
    if rule is None or rule == "none" or not result.settings.get("baselines"):
        return []
    floored = "each series never negative up to its origin" if rule == "series never negative" else "every series"
    return [
        f"- zero floor: seq2seq's median and quantiles are floored at zero for {floored} (`nonnegative`); the "
        "baselines' are statsforecast's as they come, below zero included. On a series never negative the floor can "
        "only lower an error, so it favours seq2seq there; `nonnegative=False` compares like for like"
    ]


def closure_note(result) -> str | None:
    """How many forecast points fall on periods the model reads as closed (``closed_when_``), where it forecasts zero
    and the baselines, which cannot see covariates, do not; and the comparison on the other points, which a verdict
    carried by closed periods hides. None where nothing is closed or nothing is compared."""
    closures = getattr(result.last_model, "closed_when_", None) or {}
    columns = [name for name in closures if result.data is not None and name in result.data.columns]
    reference = reference_model(list(result.summary().index))
    if not columns or reference is None or reference not in result.forecasts.columns:
        return None
    keys = ["unique_id", "ds"]
    merged = result.forecasts.merge(result.data[[*keys, *columns]].drop_duplicates(keys), on=keys, how="left")
    closed = np.zeros(len(merged), dtype=bool)
    for name in columns:
        closed |= merged[name].isin(closures[name]).to_numpy()
    scored = merged["y"].notna().to_numpy()
    if not (closed & scored).any():
        return None
    rest = scored & ~closed
    own, other = (float(np.abs(merged["y"] - merged[m]).to_numpy()[rest].mean()) for m in (MODEL, reference))
    words = f"{abs(1 - own / other) * 100:.1f}% {'lower' if own < other else 'higher'}" if other > 0 else "not comparable"
    return (
        f"{int((closed & scored).sum()):,} of {int(scored.sum()):,} scored forecast points fall on periods seq2seq reads "
        f"as closed ({', '.join(_closing(n, closures[n]) for n in columns)}: `closed_when`), forecast at zero there (the "
        f"baselines cannot read covariates); on the other points its mean absolute error was {words} than "
        f"{label(reference)}'s{_open_coverage(merged, rest)}"
    )


def _closing(name: str, values) -> str:
    """A closure in words: "open = 0", "code = 3 or 4"."""
    return f"{name} = {' or '.join(f'{float(v):g}' for v in values)}"


def _open_coverage(merged, rest: np.ndarray) -> str:
    """ ", and its 10-90% interval held N% of their actuals": coverage on the open points only, where closed ones,
    forecast at zero at every level, count a share of a hit whatever the interval does elsewhere; "" without an
    interval."""
    levels = {float(c.rsplit("_q", 1)[1]) / 100: c for c in merged.columns if c.startswith(f"{MODEL}_q")}
    if len(levels) < 2 or not rest.any():
        return ""
    low, high = min(levels), max(levels)
    open_points = merged[rest]
    y = open_points["y"].to_numpy(dtype=float)
    held = float(interval_shares(open_points, y, (levels[low], levels[high]), levels).mean())  # coverage's own rule
    return f", and its {low * 100:g}-{high * 100:g}% interval held {held * 100:.0f}% of their actuals"


def blend_line(weights: dict[str, float], chosen: list[str] = ()) -> str:
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


TREATMENT_WORDS = {
    "network": "the network's own quantiles, moved with the blended median",
    "factors": "the network's quantiles with each offset from the median scaled, per horizon step, to its held-out hit rate",
    "mixed": "offsets mixing the network's with damped Holt-Winters' own forecast distribution",
    "mixed+factors": "offsets mixing the network's with damped Holt-Winters' distribution, scaled per step to their hit rates",
}


def calibration_line(result) -> list[str]:
    """How the intervals were calibrated, when the model's were (see ``forecaster.model.calibration``)."""
    state = getattr(result.last_model, "state_", None)
    calibration = getattr(state, "calibration", None)
    if calibration is None:
        return []
    if calibration.treatment is not None:
        scores = ", ".join(f"{name} {value:.4f}" for name, value in calibration.held_out_wql.items())
        return [
            f"- intervals: {TREATMENT_WORDS.get(calibration.treatment, calibration.treatment)}; chosen on "
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


def model_settings(result) -> list[str]:
    """The report's last two sections: the model's settings (``settings_table``), then the settings and method."""
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
        *settings_lines(result),
        "",
        METHOD,
        "",
    ]
