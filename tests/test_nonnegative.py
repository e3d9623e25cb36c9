"""Counts and other non-negative series get no negative median or quantile (``nonnegative``, on by default).

A series whose observed history up to the origin is never negative is floored at zero; a series that has been
negative is not; the lift is its own part of the account; the rule is saved with the model; old files floor nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

from forecaster import Seq2SeqForecaster, backtest

QUANTILE_COLUMNS = ["y_hat", *(f"y_hat_q{q}" for q in range(10, 100, 10))]


def _declining(n_series: int = 6, length: int = 48, seed: int = 0) -> pd.DataFrame:
    """Counts falling steadily to about zero: a trend carried on goes below zero."""
    rng = np.random.default_rng(seed)
    t = np.arange(length)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "unique_id": f"s{i}",
                    "ds": pd.date_range("2015-01-01", periods=length, freq="MS"),
                    "y": np.maximum(0, length - t + rng.normal(0, 1, length)).round(),
                }
            )
            for i in range(n_series)
        ],
        ignore_index=True,
    )


@pytest.fixture(scope="module")
def fits():
    df = _declining()
    return df, fast_model().fit(df), fast_model(nonnegative=False).fit(df)


def test_a_never_negative_history_gets_no_negative_median_or_quantile(fits):
    df, floored, free = fits
    unfloored = free.predict()
    assert (unfloored["y_hat"] < 0).any() and (unfloored["y_hat_q10"] < 0).any()  # the case exists
    forecast = floored.predict()
    values = forecast[QUANTILE_COLUMNS].to_numpy()
    assert (values >= 0).all()
    assert (np.diff(forecast[[f"y_hat_q{q}" for q in range(10, 100, 10)]].to_numpy(), axis=1) >= 0).all()  # ordered
    np.testing.assert_array_equal(values, np.maximum(unfloored[QUANTILE_COLUMNS].to_numpy(), 0.0))  # only the floor moved
    assert floored.nonnegative_ == "series never negative" and free.nonnegative_ == "none"


def test_the_lift_to_zero_is_its_own_part_and_the_parts_add_up(fits):
    _, floored, _ = fits
    steps = floored.explain(by="step")
    parts = list(steps.attrs["parts"])
    assert parts[-1] == "floor_at_zero"
    np.testing.assert_allclose(steps[parts].sum(axis=1), steps["y_hat"], atol=1e-9)
    lifted = steps["floor_at_zero"] > 0
    assert lifted.any() and (steps.loc[lifted, "y_hat"].abs() < 1e-9).all()  # a lifted median sits at zero
    assert (steps.loc[~lifted, "floor_at_zero"] == 0).all()
    forecast = floored.predict()
    merged = forecast.merge(steps, on=["unique_id", "ds"], suffixes=("", "_account"))
    np.testing.assert_allclose(merged["y_hat"], merged["y_hat_account"], atol=1e-9)


def test_a_series_with_a_negative_past_is_not_floored_and_true_floors_it():
    df = _declining()
    first = df["unique_id"] == "s0"
    df.loc[df.index[first][5], "y"] = -3.0  # one negative observation: a balance, not a count
    auto = fast_model().fit(df).predict()
    free = fast_model(nonnegative=False).fit(df).predict()
    always = fast_model(nonnegative=True).fit(df).predict()
    mine = auto["unique_id"] == "s0"
    np.testing.assert_array_equal(auto.loc[mine, QUANTILE_COLUMNS].to_numpy(), free.loc[mine, QUANTILE_COLUMNS].to_numpy())
    assert (free.loc[mine, "y_hat_q10"] < 0).any()
    assert (auto.loc[~mine, QUANTILE_COLUMNS].to_numpy() >= 0).all()
    assert (always[QUANTILE_COLUMNS].to_numpy() >= 0).all()


def test_the_rule_reads_only_the_history_up_to_each_origin():
    """One forward pass for every fold: a series turning negative after the first cutoff is floored in that fold."""
    df = _declining(length=60)
    mine = df.index[df["unique_id"] == "s0"]
    df.loc[mine[-8:], "y"] = -1.0  # after the first cutoff (60 - 6 - 6 = 48), before the second (54)
    result = backtest(fast_model(), df, n_windows=2, refit=False, baselines=(), progress=False)
    own = result.forecasts[result.forecasts["unique_id"] == "s0"]
    first, second = sorted(own["cutoff"].unique())
    assert (own.loc[own["cutoff"] == first, "seq2seq_q10"] >= 0).all()
    free = backtest(fast_model(nonnegative=False), df, n_windows=2, refit=False, baselines=(), progress=False)
    theirs = free.forecasts[free.forecasts["unique_id"] == "s0"]
    np.testing.assert_array_equal(
        own.loc[own["cutoff"] == second, "seq2seq_q10"].to_numpy(), theirs.loc[theirs["cutoff"] == second, "seq2seq_q10"]
    )


def test_flooring_never_costs_wql_or_mase_on_non_negative_actuals():
    df = _declining(length=60)
    kwargs = dict(n_windows=2, baselines=(), progress=False)
    floored = backtest(fast_model(), df, **kwargs).summary().loc["seq2seq"]
    free = backtest(fast_model(nonnegative=False), df, **kwargs).summary().loc["seq2seq"]
    assert floored["wql"] < free["wql"] and floored["mean_mase"] <= free["mean_mase"]


def test_the_rule_is_saved_and_a_file_without_it_floors_nothing(fits, tmp_path):
    _, floored, _ = fits
    floored.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.nonnegative_ == "series never negative" and loaded.nonnegative is None
    pd.testing.assert_frame_equal(loaded.predict(), floored.predict())
    from pathlib import Path

    old = Seq2SeqForecaster.load(Path(__file__).parent / "data" / "model_0_3_0")
    assert old.nonnegative_ == "none" and old.nonnegative is False


@pytest.mark.parametrize("value", ["yes", 1, 0.5])
def test_nonnegative_takes_true_false_or_none_only(value):
    with pytest.raises(ValueError, match=r"`nonnegative` must be True, False or None"):
        fast_model(nonnegative=value).fit(_declining(2, 30))


def test_a_series_that_loses_the_floor_to_one_negative_target_is_named():
    """One return booked as a sale of -1 in a year of counts: the series was no longer floored, its quantiles went
    below zero on every day, and nothing said why."""
    import warnings

    rng = np.random.default_rng(0)
    days = pd.date_range("2021-01-01", periods=200, freq="D")
    df = pd.concat(
        [pd.DataFrame({"unique_id": f"p{i}", "ds": days, "y": rng.poisson(0.3 + 3 * i, 200).astype(float)}) for i in range(3)],
        ignore_index=True,
    )
    df.loc[(df["unique_id"] == "p0") & (df["ds"] == "2021-05-03"), "y"] = -1.0
    with pytest.warns(UserWarning, match=r"1 series have a few negative `y` values \('p0'; the first: 'p0' at 2021-05-03"):
        fast_model(horizon=7, input_size=14, max_steps=3).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fast_model(horizon=7, input_size=14, max_steps=3, nonnegative=False).fit(df)  # no floor asked for: no note


def _helsinki_counts_with_a_return(at: str) -> pd.DataFrame:
    """Two hourly count series in Helsinki's zone over two weeks of March 2021; ``p0`` holds -1 at local time ``at``."""
    rng = np.random.default_rng(0)
    hours = pd.date_range("2021-03-01", periods=24 * 14, freq="h", tz="Europe/Helsinki")
    df = pd.concat(
        [pd.DataFrame({"unique_id": f"p{i}", "ds": hours, "y": rng.poisson(2 + i, len(hours)).astype(float)}) for i in range(2)],
        ignore_index=True,
    )
    df.loc[(df["unique_id"] == "p0") & (df["ds"] == pd.Timestamp(at, tz="Europe/Helsinki")), "y"] = -1.0
    return df


def test_the_negative_target_of_a_zoned_hourly_series_is_named_at_its_local_time():
    """Sub-daily data in a zone is fitted in UTC: the note named 2021-03-10 08:00:00, two hours before the row the
    user's frame has at 10:00 (+02:00 in Helsinki)."""
    df = _helsinki_counts_with_a_return("2021-03-10 10:00")
    with pytest.warns(UserWarning, match=r"the first: 'p0' at 2021-03-10 10:00:00\+02:00, -1\)"):
        fast_model(horizon=24, input_size=48, max_steps=2).fit(df)


def test_a_backtest_names_the_negative_target_at_its_local_time_too():
    """A backtest's folds fit naive frames: its note said 08:00:00 where `fit` says 10:00:00+02:00."""
    from forecaster import backtest

    df = _helsinki_counts_with_a_return("2021-03-05 10:00")
    with pytest.warns(UserWarning, match=r"the first: 'p0' at 2021-03-05 10:00:00\+02:00, -1\)"):
        backtest(
            fast_model(horizon=24, input_size=48, max_steps=2), df, n_windows=1, baselines=("seasonal_naive",), progress=False
        )


def test_explain_gives_predicts_own_median_and_no_negative_one(fits):
    """explain's ``y_hat`` was the parts' sum, -1e-16 on a lifted step where ``predict`` says 0."""
    _, floored, _ = fits
    steps, points = floored.explain(by="step"), floored.explain()
    forecast = floored.predict()
    for frame in (steps, points):
        merged = frame.merge(forecast, on=["unique_id", "ds"], suffixes=("", "_predict"))
        assert len(merged) == len(frame)
        np.testing.assert_array_equal(merged["y_hat"], merged["y_hat_predict"])  # exactly, not to rounding
        assert (frame["y_hat"] >= 0).all()


def test_the_attention_plot_counts_the_lift_to_zero_among_the_parts(fits):
    """The plot's title and ``forecast_sources`` left the floor out: their parts missed the forecast they printed."""
    from forecaster.plots import forecast_sources, plot_attention

    _, floored, _ = fits
    explanation = floored.explain(include_padding=True)
    lifted = explanation.groupby("unique_id")["step_floor"].max()
    one = explanation[explanation["unique_id"] == lifted.idxmax()]
    points, parts = forecast_sources(one)
    assert parts["floor"] > 0
    named = ("baseline", "covariates", "partners", "head", "floor")
    assert points.sum() + sum(parts[name] for name in named) == pytest.approx(parts["forecast"], rel=1e-9, abs=1e-9)
    title = " ".join(plot_attention(one).axes[2].get_title(loc="left").split())
    assert "lifted to zero (nonnegative)" in title
