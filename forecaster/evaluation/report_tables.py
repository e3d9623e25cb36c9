"""The report's tables as Markdown, the summary and settings as a reader sees them, and the warnings a report gives.

Every table of the report is written here as Markdown (one header row, no index-name row) and the HTML
report is rendered from that Markdown, so both show the same rows. The numbers in the tables are computed in
:mod:`forecaster.evaluation.analysis`; its comparisons, rankings and picks stay importable from here.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pandas as pd

from ..plots import readable
from .analysis import (
    MODEL,
    calibration_by_fold,
    leaderboard,
    paired,
    per_fold,
    pick_folds,
    reference_model,
    representative_series,
)

__all__ = [
    "COVERAGE_TOLERANCE",
    "LABELS",
    "MODEL",
    "OCCLUSION_WARNING_BELOW",
    "SHOWN_SETTINGS",
    "SUMMARY_WORDS",
    "calibration_by_fold",
    "code_span",
    "coverage_warning",
    "duration",
    "hit_rate_warning",
    "label",
    "leaderboard",
    "markdown_table",
    "nominal_words",
    "occlusion_warning",
    "paired",
    "per_fold",
    "pick_folds",
    "plain_text",
    "readable_summary",
    "reference_model",
    "representative_series",
    "settings_table",
    "spreadsheet_safe",
]

# Readable names of the baselines, for prose and headings (tables keep the column names).
LABELS = {"auto_ets": "AutoETS", "seasonal_naive": "seasonal naive", "mstl": "MSTL"}
# How far the interval's coverage may stray from its nominal level before the report warns.
COVERAGE_TOLERANCE = 0.03


def label(model: str) -> str:
    return LABELS.get(model, model)


def code_span(value) -> str:
    """``value`` as a Markdown code span: shown as written (no emphasis, links or ``$`` math)."""
    text = " ".join(str(value).splitlines())
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# ASCII punctuation that Markdown may read as syntax; each is backslash-escaped in text shown literally.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")  # the marks Markdown or HTML give a meaning


def plain_text(text: str) -> str:
    """``text`` as literal Markdown on one line: every mark of markup escaped, line breaks as spaces.

    A report title comes from a spec: ``![t](http://...)`` in it must stay words, not become an external
    image in a self-contained page, and a newline must not start a heading.
    """
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(str(text).splitlines()))


# A cell a spreadsheet would run as a formula (OWASP's list: =, +, -, @, tab, carriage return).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that starts like a formula prefixed by ``'``, so a spreadsheet shows it as text.

    The report's CSVs are opened by planners in spreadsheets, where an id such as ``=HYPERLINK(...)`` would run.
    Numbers are left alone (``-5`` is a number, not a formula); the forecasts ``predict`` returns are never changed.
    """
    out = frame
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object or isinstance(values.dtype, (pd.StringDtype, pd.CategoricalDtype)):
            text = values.astype(object)
            risky = text.map(lambda v: isinstance(v, str) and v.startswith(_FORMULA_START))
            if risky.any():
                out = out.copy() if out is frame else out
                out[column] = text.where(~risky, "'" + text.astype(str))
    if frame.index.dtype == object:
        index = frame.index.map(lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v)
        if not index.equals(frame.index):
            out = out.copy() if out is frame else out
            out.index = index
    return out


# What a planner reads for each column of the summary (summary.csv keeps the names), in the order shown: the
# comparison against the baselines next to the MASE, so a narrow screen shows it first.
SUMMARY_WORDS = {
    "mean_mase": "mean MASE",
    "rel_mase_vs_auto_ets": "MASE / AutoETS",
    "rel_mase_vs_seasonal_naive": "MASE / seasonal naive",
    "rel_mase_vs_mstl": "MASE / MSTL",
    "median_mase": "median MASE",
    "win_rate": "wins",
    "wql": "WQL",
    "coverage": "coverage",
    "mean_smape": "sMAPE %",
    "n_scored": "series-folds",
    "n_zero_scale": "zero-scale",
    "fit_seconds": "fit time",
    "predict_seconds": "predict time",
}


def duration(seconds: float) -> str:
    """A duration as the report writes every one: seconds to one decimal (``72.7 s``), minutes from an hour up."""
    seconds = float(seconds)
    if not np.isfinite(seconds):
        return ""
    if seconds >= 3600:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds:,.1f} s"


def readable_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary as a report shows it: models and columns in words, the comparison against the baselines first."""
    order = [c for c in SUMMARY_WORDS if c in summary.columns] + [c for c in summary.columns if c not in SUMMARY_WORDS]
    shown = summary[order].copy()
    for column in ("fit_seconds", "predict_seconds"):
        if column in shown:
            shown[column] = shown[column].map(duration)
    shown = shown.rename(columns=SUMMARY_WORDS)
    shown.index = [label(str(m)) for m in shown.index]
    shown.index.name = "model"
    return shown


def _cell(value, digits: int) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (float, np.floating)):
        return readable(value, digits)
    return " ".join(str(value).splitlines())


def markdown_table(frame: pd.DataFrame, digits: int = 4, code: tuple[str, ...] = ()) -> str:
    """``frame`` as a pipe table: a meaningful index becomes the first column; numbers are right-aligned.

    Numbers are written to ``digits`` significant digits in plain decimals (:func:`forecaster.plots.readable`):
    0.09034 beside 0.09312, never ``0.090`` beside ``0.093`` nor ``1.3e+05``.

    Cells of the ``code`` columns are code spans (series ids: shown literally). A ``|`` in a cell is
    escaped, also inside code spans (GitHub and markdown-it read ``\\|`` there as a literal pipe).
    """
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.name is not None:
        frame = frame.reset_index()
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in frame.columns]
    header = "| " + " | ".join(str(c).replace("|", "\\|") for c in frame.columns) + " |"
    rule = "|" + "|".join("---:" if right else "---" for right in numeric) + "|"
    rows = []
    for values in frame.itertuples(index=False):
        cells = [code_span(v) if c in code else _cell(v, digits) for c, v in zip(frame.columns, values, strict=True)]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join([header, rule, *rows])


# Below this occlusion ratio an attention map is not read as an explanation: the points it weighs most move the
# forecast less than twice as much as those it weighs least.
OCCLUSION_WARNING_BELOW = 2.0


def occlusion_warning(ratio: float | None) -> str | None:
    """A Markdown warning when attention maps are not an explanation (occlusion ratio below ``OCCLUSION_WARNING_BELOW``)."""
    if ratio is None or not np.isfinite(ratio) or ratio >= OCCLUSION_WARNING_BELOW:
        return None
    how = (
        "the points it weighs most move the forecast less than those it weighs least"
        if ratio < 1
        else f"the points it weighs most move the forecast only {ratio:.2f} times as much as those it weighs least"
    )
    return (
        f"> **Warning:** these maps show where the network read, not what drove the forecast: {how} (occlusion ratio "
        f"{ratio:.2f}, below {OCCLUSION_WARNING_BELOW:g}). Read the shares instead: `explain()`'s `contribution` and "
        "step parts, drawn under each map."
    )


def nominal_words(settings: dict) -> str:
    """The outermost interval's levels and nominal coverage in words, from the model's quantiles: "10-90%, nominal 80%"."""
    quantiles = settings.get("model_params", {}).get("quantiles")
    levels = sorted(float(q) for q in (() if quantiles is None else quantiles))
    if len(levels) < 2:
        return "no interval"
    return f"{levels[0] * 100:g}-{levels[-1] * 100:g}%, nominal {(levels[-1] - levels[0]) * 100:g}%"


def coverage_warning(coverage: float | None, quantiles) -> str | None:
    """A Markdown warning when the model interval's coverage lies outside its nominal level +- the tolerance."""
    levels = sorted(float(q) for q in (() if quantiles is None else quantiles))
    if len(levels) < 2 or coverage is None or not np.isfinite(coverage):
        return None
    low, high = levels[0], levels[-1]
    nominal = high - low
    if abs(coverage - nominal) <= COVERAGE_TOLERANCE + 1e-12:
        return None
    direction = "too narrow" if coverage < nominal else "too wide"
    return (
        f"> **Warning:** the {low * 100:g}-{high * 100:g}% interval covered {coverage * 100:.1f}% of a series' actuals "
        "on average "
        f"(nominal {nominal * 100:g}%); it is {direction} (flagged outside "
        f"{(nominal - COVERAGE_TOLERANCE) * 100:g}-{(nominal + COVERAGE_TOLERANCE) * 100:g}%)."
    )


def hit_rate_warning(rates: pd.DataFrame, model: str = MODEL) -> str | None:
    """A Markdown warning naming each of the model's levels whose hit rate lies more than the tolerance from the level."""
    if model not in rates.index:
        return None
    row = rates.loc[model].dropna()
    off = [(level, rate) for level, rate in row.items() if abs(rate - level) > COVERAGE_TOLERANCE + 1e-12]
    if not off:
        return None
    listed = ", ".join(f"q{level * 100:g} hit {rate * 100:.1f}%" for level, rate in off)
    return (
        f"> **Warning:** {len(off)} of the model's {len(row)} quantile levels are off by more than "
        f"{COVERAGE_TOLERANCE * 100:g} points ({listed}): a level-q forecast should have a share q of actuals at or below it."
    )


def _value(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) if value else "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _defaults() -> dict:
    """The estimator's constructor defaults (``horizon`` has none)."""
    from ..estimator import Seq2SeqForecaster

    signature = inspect.signature(Seq2SeqForecaster.__init__).parameters
    return {name: p.default for name, p in signature.items() if p.default is not inspect.Parameter.empty}


# Settings a report always shows (what the forecast is), whatever their value.
SHOWN_SETTINGS = (
    "horizon",
    "freq",
    "season_length",
    "input_size",
    "quantiles",
    "theta_weight",
    "holt_winters_weight",
    "init",
    "n_models",
)


def _started(plan) -> str:
    """Where the fit started, in words: whether a network was trained from scratch or from the shipped prior."""
    if plan is None:
        return ""
    steps = plan.max_steps
    budget = "" if steps is None else ", no training step" if steps == 0 else f", at most {steps:,} training steps"
    where = {"prior": f"the shipped {plan.prior} prior", "continue": "the previous fit's weights"}.get(plan.start, "scratch")
    return f" (the last fit started from {where}{budget})"


def settings_table(result, everything: bool = False) -> pd.DataFrame:
    """The model's settings, one row each, with the values fitting resolved where the given one was None.

    By default the rows a reader needs: ``SHOWN_SETTINGS`` and every parameter given another value than its default;
    ``everything=True``: all of them (the report writes those to settings.csv).
    """
    params = {k: v for k, v in result.settings["model_params"].items() if k != "progress"}
    state = getattr(result.last_model, "state_", None)
    fitted = {
        "freq": getattr(state, "freq", result.settings.get("freq")),
        "season_length": getattr(state, "season_length", result.settings.get("season_length")),
        "input_size": getattr(state, "input_size", None),
        "trend_line": getattr(state, "trend_line", None),
        "n_models": getattr(state, "n_members", None),  # None: one per member of the prior a fit started from, else 1
        **result.settings.get("blend_weights", {}),
    }
    first = list(SHOWN_SETTINGS)
    defaults = _defaults()
    rows = []
    for name in [*(k for k in first if k in params), *(k for k in params if k not in first)]:
        given, value = params[name], fitted.get(name)
        default = defaults.get(name, inspect.Parameter.empty)
        if not everything and name not in first and _value(given) == _value(default):
            continue
        shown = code_span(_value(given if value is None else value))
        if value is not None and given is None:
            shown += " (inferred)" if name in ("freq", "season_length") else " (resolved)"
        elif value is not None and value != given:
            shown += f" (given {code_span(_value(given))})"
        if name == "init":
            shown += _started(getattr(result.last_model, "fit_plan_", None))
        rows.append({"parameter": code_span(name), "value": shown})
    return pd.DataFrame(rows)
