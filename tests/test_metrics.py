import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from utilsforecast.losses import mase as uf_mase

from forecaster.evaluation.metrics import score_forecasts, seasonal_scale, seasonal_scales


def _reference_scale(y, m):
    lag = m if len(y) > m else 1
    return np.mean([abs(y[t] - y[t - lag]) for t in range(lag, len(y))])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=60), st.integers(1, 12))
def test_seasonal_scale_matches_a_plain_loop(values, m):
    y = np.array(values)
    assert np.isclose(seasonal_scale(y, m), _reference_scale(y, m), rtol=1e-9, atol=1e-9)


def test_vectorised_scales_match_per_series_kernel():
    rng = np.random.default_rng(0)
    frames = [pd.DataFrame({"unique_id": uid, "y": rng.normal(size=n)}) for uid, n in (("a", 30), ("b", 10), ("c", 25))]
    train = pd.concat(frames, ignore_index=True)
    scales = seasonal_scales(train, 12)
    for uid, frame in train.groupby("unique_id"):
        assert np.isclose(scales[uid], seasonal_scale(frame["y"].to_numpy(), 12))


def test_mase_agrees_with_utilsforecast():
    rng = np.random.default_rng(1)
    ds = pd.date_range("2000-01-01", periods=40, freq="MS")
    train = pd.concat(
        [pd.DataFrame({"unique_id": u, "ds": ds[:34], "y": rng.normal(10, 3, 34)}) for u in "abc"], ignore_index=True
    )
    test = pd.concat(
        [pd.DataFrame({"unique_id": u, "ds": ds[34:], "y": rng.normal(10, 3, 6), "model": rng.normal(10, 3, 6)}) for u in "abc"],
        ignore_index=True,
    )
    expected = uf_mase(test, ["model"], 12, train).set_index("unique_id")["model"]
    scales = seasonal_scales(train, 12).reset_index().assign(cutoff=ds[33])
    ours = score_forecasts(test.assign(cutoff=ds[33]), scales, ["model"], {}).set_index("unique_id")["mase"]
    pd.testing.assert_series_equal(ours.sort_index(), expected.sort_index(), check_names=False)


def test_mase_agrees_with_utilsforecast_when_histories_hold_between_one_and_two_seasons():
    """The standard scale uses lag m as soon as the history is longer than one season (m < n <= 2m included)."""
    rng = np.random.default_rng(2)
    ds = pd.date_range("2000-01-01", periods=60, freq="MS")
    lengths = {"a": 13, "b": 18, "c": 24, "d": 25, "e": 40}
    train = pd.concat(
        [pd.DataFrame({"unique_id": u, "ds": ds[:n], "y": rng.normal(10, 3, n) + np.arange(n)}) for u, n in lengths.items()],
        ignore_index=True,
    )
    test = pd.concat(
        [
            pd.DataFrame({"unique_id": u, "ds": ds[n : n + 6], "y": rng.normal(10, 3, 6), "model": rng.normal(10, 3, 6)})
            for u, n in lengths.items()
        ],
        ignore_index=True,
    )
    expected = uf_mase(test, ["model"], 12, train).set_index("unique_id")["model"]
    scales = seasonal_scales(train, 12).reset_index().assign(cutoff=0)
    ours = score_forecasts(test.assign(cutoff=0), scales, ["model"], {}).set_index("unique_id")["mase"]
    pd.testing.assert_series_equal(ours.sort_index(), expected.sort_index(), check_names=False, rtol=1e-12)


def _scores(actual, forecast, scale: float = 1.0) -> pd.DataFrame:
    """The backtest's scores of one series and one model."""
    forecasts = pd.DataFrame({"unique_id": "a", "cutoff": 0, "y": actual, "m": forecast})
    return score_forecasts(forecasts, pd.DataFrame({"unique_id": ["a"], "cutoff": [0], "scale": [scale]}), ["m"], {})


def test_perfect_forecast_scores_zero_and_zero_scale_is_reported_not_inf():
    y = np.arange(30.0)
    assert _scores(y[24:], y[24:], seasonal_scale(y[:24], 12))["mase"].iloc[0] == 0.0
    assert np.isnan(_scores(np.ones(6), np.zeros(6), seasonal_scale(np.ones(24), 12))["mase"].iloc[0])
    forecasts = pd.DataFrame({"unique_id": "flat", "cutoff": 0, "y": np.ones(3), "m": np.ones(3)})
    scores = score_forecasts(forecasts, pd.DataFrame({"unique_id": ["flat"], "cutoff": [0], "scale": [0.0]}), ["m"], {})
    assert scores["zero_scale"].all() and scores["mase"].isna().all()


def test_smape_runs_from_0_to_200_and_counts_two_zeros_as_exact():
    assert _scores([1.0, 0.0], [1.0, 0.0])["smape"].iloc[0] == 0.0
    assert _scores([1.0], [-1.0])["smape"].iloc[0] == 200.0
    assert _scores([2.0, 0.0], [1.0, 0.0])["smape"].iloc[0] == pytest.approx(100.0 / 3.0)  # (200/3 + 0) / 2


def test_a_missing_forecast_is_not_scored_instead_of_scoring_perfectly():
    assert np.isnan(_scores([1.0], [np.nan])["smape"].iloc[0]) and np.isnan(_scores([1.0], [np.nan])["mase"].iloc[0])
    assert _scores([1.0, 2.0], [np.nan, 2.0])["smape"].iloc[0] == 0.0  # only the forecast present counts
    forecasts = pd.DataFrame(
        {"unique_id": "a", "cutoff": 0, "y": [1.0, 2.0], "m": [np.nan, 3.0], "lo": [np.nan, 0.0], "hi": [np.nan, 5.0]}
    )
    scales = pd.DataFrame({"unique_id": ["a"], "cutoff": [0], "scale": [1.0]})
    scores = score_forecasts(forecasts, scales, ["m"], {"m": ("lo", "hi")})
    assert scores["smape"].iloc[0] == pytest.approx(200.0 / 5.0) and scores["mase"].iloc[0] == pytest.approx(1.0)
    assert scores["coverage"].iloc[0] == 1.0  # the step without an interval is not counted as a miss


def test_an_actual_equal_to_every_quantile_is_covered_as_a_randomized_pit_would_be():
    """A closed hour forecast at zero at every level and zero: coverage counted it a whole hit, so a panel of shops
    closed at night read 0.90 ("too wide") where the open hours held 0.78, while the hit rates counted it a share."""
    from forecaster.evaluation.metrics import hit_shares, quantile_columns, score_forecasts

    levels = [0.1, 0.5, 0.9]
    columns = quantile_columns(["m"], levels)["m"]
    rows = pd.DataFrame(
        {
            "unique_id": ["a"] * 4,
            "cutoff": 0,
            "y": [0.0, 5.0, 0.0, 9.0],
            columns[0.1]: [0.0, 1.0, 0.0, 1.0],
            columns[0.5]: [0.0, 4.0, 0.0, 4.0],
            columns[0.9]: [0.0, 8.0, 1.0, 8.0],
        }
    )
    scales = pd.DataFrame({"unique_id": ["a"], "cutoff": [0], "scale": [1.0]})
    metrics = score_forecasts(rows, scales, ["m"], {"m": (columns[0.1], columns[0.9])}, quantiles={"m": columns})
    shares = hit_shares(rows["y"].to_numpy(), rows[[columns[q] for q in levels]].to_numpy(), np.array(levels))
    expected = (shares[:, 2] - shares[:, 0]).mean()  # the calibration's hit rates at q90 less q10, point by point
    assert metrics["coverage"].iloc[0] == pytest.approx(expected)
    assert expected == pytest.approx((0.8 + 1.0 + (1 - 0.1 / 0.7) + 0.0) / 4)  # closed, inside, tied below, outside


def test_a_tie_for_the_lowest_mase_shares_the_win():
    """An exact tie (seq2seq and seasonal naive both at MASE 0 on a closed season) was credited to the model first in
    alphabetical order: never to seq2seq."""
    from forecaster.evaluation.result import summarise

    metrics = pd.DataFrame(
        {
            "unique_id": ["a"] * 3 + ["b"] * 3,
            "cutoff": pd.Timestamp("2020-01-01"),
            "model": ["seq2seq", "seasonal_naive", "auto_ets"] * 2,
            "mase": [0.0, 0.0, 0.5, 0.4, 0.9, 0.6],
            "smape": 0.1,
            "zero_scale": False,
        }
    )
    timings = pd.DataFrame({"model": ["seq2seq", "seasonal_naive", "auto_ets"], "fit_seconds": 1.0})
    wins = summarise(metrics, timings, ["seq2seq", "seasonal_naive", "auto_ets"])["win_rate"]
    assert wins.to_dict() == {"seq2seq": 0.75, "seasonal_naive": 0.25, "auto_ets": 0.0}
