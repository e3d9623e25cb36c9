"""The default model learns: it beats seasonal-naive clearly and uses the future-known covariate."""

import numpy as np
import pandas as pd
import pytest

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel
from forecaster.evaluation.metrics import score_forecasts, seasonal_scales

H = 12


@pytest.fixture(scope="module")
def split():
    df, _ = make_panel(n_series=30, length=84, seed=3, noise=0.05, future_effect=0.4, short_share=0.15, missing_share=0.01)
    cutoff = df["ds"].max() - pd.DateOffset(months=H)
    return df[df["ds"] <= cutoff], df[df["ds"] > cutoff]


def _mean_mase(forecast: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame, column: str = "y_hat") -> float:
    """Mean MASE over series, scored as the backtest scores (one MASE implementation)."""
    step = ["unique_id", "step"]  # the k-th forecast of a series against its k-th test period
    actual = test[["unique_id", "y"]].assign(step=test.groupby("unique_id").cumcount())
    predicted = forecast[["unique_id", column]].assign(step=forecast.groupby("unique_id").cumcount())
    rows = actual.merge(predicted, on=step, how="left").rename(columns={column: "model"}).assign(cutoff=0)
    scales = seasonal_scales(train, 12).reset_index().assign(cutoff=0)
    return float(score_forecasts(rows, scales, ["model"], {})["mase"].mean())


def _seasonal_naive(train: pd.DataFrame) -> pd.DataFrame:
    last = train.groupby("unique_id")["y"].apply(lambda s: s.ffill().to_numpy()[-12:])
    return pd.DataFrame({"unique_id": np.repeat(last.index, H), "y_hat": np.concatenate(last.to_numpy())})


def test_default_model_beats_seasonal_naive_and_itself_without_the_covariate(split):
    train, test = split
    future = test[["unique_id", "ds", "promo"]]
    naive = _mean_mase(_seasonal_naive(train), train, test)
    with_cov = Seq2SeqForecaster(horizon=H, future_covariates=["promo"], max_steps=200, progress=False).fit(train)
    without = Seq2SeqForecaster(horizon=H, max_steps=200, progress=False).fit(train)
    ours = _mean_mase(with_cov.predict(future_df=future), train, test)
    blind = _mean_mase(without.predict(), train, test)
    assert ours < 0.7 * naive, (ours, naive)
    assert ours < 0.85 * blind, (ours, blind)


def test_regression_guard_default_model_below_a_bound_seasonal_naive_misses(split):
    """Fast accuracy guard: a bound seasonal-naive cannot meet on this panel."""
    train, test = split
    naive = _mean_mase(_seasonal_naive(train), train, test)
    model = Seq2SeqForecaster(horizon=H, future_covariates=["promo"], max_steps=120, progress=False).fit(train)
    ours = _mean_mase(model.predict(future_df=test[["unique_id", "ds", "promo"]]), train, test)
    assert naive > 0.8 and ours < 0.8, (ours, naive)
