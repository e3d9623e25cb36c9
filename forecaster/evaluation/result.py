"""What a backtest returns: forecasts, per-window metrics, skipped series, timings, and the summary table."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..model.outputs import BASELINES
from .metrics import fold_numbers, hit_rates, weighted_quantile_loss


@dataclass
class BacktestResult:
    """Everything a backtest produced.

    Attributes:
        forecasts: ``unique_id``, ``cutoff``, ``ds``, ``y`` and one column per model
            (plus ``seq2seq_q..`` quantiles and baseline ``_lo``/``_hi`` bounds); a lazy Dask DataFrame
            when the backtest ran on one.
        metrics: per (series, cutoff, model): ``mase``, ``smape``, ``coverage``, the MASE
            ``scale`` and ``zero_scale`` (MASE undefined, excluded from means).
        skipped: series left out of a fold, with the reason.
        timings: seconds spent fitting and predicting, per model.
        settings: the backtest's settings, for the report.
        attention: attention of the last fold's model from the last fold's origins, as
            ``explain(include_padding=True)`` returns it (from the same forward pass as the forecasts).
        data: the validated input frame (for plots).
        quantile_metrics: per (series, cutoff, model, level): pinball loss summed over the horizon,
            hits (actuals at or below the quantile), scored periods and the sum of ``|y|``
            (``metrics.score_quantiles``); the baselines are scored at the model's levels. A backtest of a
            Dask DataFrame pools them per (model, level) (no ``unique_id`` or ``cutoff``).
    """

    forecasts: pd.DataFrame
    metrics: pd.DataFrame
    skipped: pd.DataFrame
    timings: pd.DataFrame
    settings: dict
    attention: pd.DataFrame | None = None
    data: pd.DataFrame | None = field(default=None, repr=False)
    last_model: object | None = field(default=None, repr=False)
    quantile_metrics: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.metrics["model"]))

    def summary(self) -> pd.DataFrame:
        """Per model: mean/median MASE, MASE relative to each baseline, win rate, coverage, WQL, sMAPE, seconds."""
        table = summarise(self.metrics, self.timings, self.models)
        if self.quantile_metrics is not None and len(self.quantile_metrics):
            wql = weighted_quantile_loss(self.quantile_metrics)
            table.insert(table.columns.get_loc("coverage") + 1 if "coverage" in table else len(table.columns), "wql", wql)
        return table

    def calibration(self, by: str | None = None) -> pd.DataFrame:
        """Model x level: the share of actuals at or below each quantile forecast (calibrated: the level itself).

        ``by="fold"`` gives one row per (model, fold), fold 1 the earliest origin. Every series shares
        a fold's periods, so a shock common to them (demand falling everywhere after the origin) moves
        all of that fold's hit rates together, and data up to the origin does not show it: the folds show
        how far one origin's rates stray, and so how far the pooled rates of a few folds can.

        Raises:
            ValueError: ``by`` is not None or ``"fold"``, or ``by="fold"`` on the backtest of a Dask
                DataFrame (its quantile scores are pooled on the workers, without folds).
        """
        if by not in (None, "fold"):
            raise ValueError(f"`by` must be None or 'fold', got {by!r}.")
        pooled = self.quantile_metrics is not None and "cutoff" not in self.quantile_metrics
        if by == "fold" and (pooled or not isinstance(self.forecasts, pd.DataFrame)):
            raise ValueError(
                "This backtest ran on a Dask DataFrame, whose quantile scores are pooled over folds: "
                "`calibration(by='fold')` needs a backtest of a pandas frame."
            )
        if self.quantile_metrics is None or not len(self.quantile_metrics):
            return pd.DataFrame()
        if by is None:
            return hit_rates(self.quantile_metrics).reindex(self.models).dropna(how="all")
        scores = self.quantile_metrics
        # A series scored in the first fold is scored in every fold, so the most cutoffs a series has is the fold count.
        scores = scores.assign(fold=fold_numbers(scores, int(scores.groupby("unique_id")["cutoff"].nunique().max())))
        rates = hit_rates(scores, by=["fold"])
        order = {m: i for i, m in enumerate(self.models)}
        keys = sorted(rates.index, key=lambda key: (key[1], order.get(key[0], len(order))))
        return rates.reindex(keys).dropna(how="all")

    def to_report(self, path: str | Path, title: str | None = None) -> Path:
        """Write Markdown, self-contained HTML, CSVs and PNG plots to directory ``path``.

        Raises:
            TypeError: the backtest ran on a Dask DataFrame: its forecasts stay on the workers (a report's
                plots and ``forecasts.csv`` would gather them); use ``summary()``, ``calibration()`` and
                ``metrics``, and write ``forecasts`` with ``to_parquet``.
        """
        from .report import write_report

        if not isinstance(self.forecasts, pd.DataFrame):
            raise TypeError(
                "A backtest of a Dask DataFrame keeps its forecasts on the workers, so it writes no report: use "
                "`summary()`, `calibration()` and `metrics`, and `forecasts.to_parquet(...)`; or backtest a pandas frame."
            )

        return write_report(self, Path(path), title=title)


def summarise(metrics: pd.DataFrame, timings: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """The summary table of :meth:`BacktestResult.summary`."""
    wide = metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase", dropna=False)
    scored = wide.dropna()
    lowest = scored.eq(scored.min(axis=1), axis=0)  # a tie (two models at MASE 0 on a closed season) shares the win
    wins = lowest.div(lowest.sum(axis=1), axis=0)
    rows = []
    for model in models:
        part = metrics[metrics["model"] == model]
        row = {
            "model": model,
            "mean_mase": part["mase"].mean(),
            "median_mase": part["mase"].median(),
            "mean_smape": part["smape"].mean(),
            "n_scored": int(part["mase"].notna().sum()),
            "n_zero_scale": int(part["zero_scale"].sum()),
            "win_rate": float(wins[model].mean()) if len(wins) and model in wins else np.nan,
        }
        for baseline in BASELINES:
            if baseline in scored.columns and model in scored.columns:
                row[f"rel_mase_vs_{baseline}"] = scored[model].mean() / scored[baseline].mean()
        if "coverage" in part:
            row["coverage"] = part["coverage"].mean()
        rows.append(row)
    table = pd.DataFrame(rows).set_index("model")
    return table.join(timings.set_index("model"), how="left")
