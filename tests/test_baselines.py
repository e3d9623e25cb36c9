"""Baselines: every seasonal-naive forecast row against the value computed by hand from the data."""

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from forecaster.evaluation.baselines import run_baselines


def _panel(freq: str, lengths: dict[str, int], starts: dict[str, str], seed: int = 0) -> pd.DataFrame:
    """Series of different lengths and end dates, with distinct values (so a wrong lag cannot match)."""
    rng = np.random.default_rng(seed)
    frames = [
        pd.DataFrame(
            {"unique_id": uid, "ds": pd.date_range(starts[uid], periods=n, freq=freq), "y": rng.normal(100, 20, n).round(3)}
        )
        for uid, n in lengths.items()
    ]
    return pd.concat(frames, ignore_index=True)


def _expected(train: pd.DataFrame, horizon: int, m: int, freq: str, level: int | None) -> pd.DataFrame:
    """Seasonal naive by hand: the forecast of T + h is y at T + h - m * ceil(h / m), the same position in the last season.

    Rows before the first observed target are dropped and later missing targets carried forward first, as
    the baselines document. The
    interval is the textbook one (Hyndman & Athanasopoulos, FPP 5.5): point +- z * sigma * sqrt(k + 1),
    with k = floor((h - 1) / m) whole seasons behind and sigma the RMS of the in-sample
    seasonal differences y_t - y_(t-m).
    """
    offset = pd.tseries.frequencies.to_offset(freq)
    z = NormalDist().inv_cdf(0.5 + level / 200) if level else None
    rows = []
    for uid, series in train.groupby("unique_id", sort=False):
        series = series.sort_values("ds")
        series = series.loc[series["y"].notna().cummax()]
        y = series["y"].ffill().to_list()
        times = list(series["ds"])
        n, end = len(y), times[-1]
        differences = [y[t] - y[t - m] for t in range(m, n)]
        sigma = math.sqrt(sum(d * d for d in differences) / len(differences))
        for h in range(1, horizon + 1):
            source = n - 1 + h - m * math.ceil(h / m)  # index of T + h - m * ceil(h / m)
            assert times[source] == end + (h - m * math.ceil(h / m)) * offset
            row = {"unique_id": uid, "ds": end + h * offset, "seasonal_naive": y[source]}
            if level:
                half = z * sigma * math.sqrt((h - 1) // m + 1)
                row |= {"seasonal_naive_lo": y[source] - half, "seasonal_naive_hi": y[source] + half}
            rows.append(row)
    return pd.DataFrame(rows)


def _check(out: pd.DataFrame, expected: pd.DataFrame, level: int | None) -> None:
    out = out.sort_values(["unique_id", "ds"]).reset_index(drop=True)
    expected = expected.sort_values(["unique_id", "ds"]).reset_index(drop=True)
    assert len(out) == len(expected)
    pd.testing.assert_series_equal(out["unique_id"].astype(str), expected["unique_id"])
    pd.testing.assert_series_equal(pd.to_datetime(out["ds"]), expected["ds"])
    np.testing.assert_allclose(out["seasonal_naive"], expected["seasonal_naive"], rtol=1e-12)
    if level:
        assert (out["seasonal_naive_lo"] < out["seasonal_naive"]).all()
        assert (out["seasonal_naive"] < out["seasonal_naive_hi"]).all()
        np.testing.assert_allclose(out["seasonal_naive_lo"], expected["seasonal_naive_lo"], rtol=1e-6)
        np.testing.assert_allclose(out["seasonal_naive_hi"], expected["seasonal_naive_hi"], rtol=1e-6)
    else:
        assert not [c for c in out.columns if c.endswith(("_lo", "_hi"))]


@pytest.mark.parametrize("horizon", [18, 30])  # one and a half, and two and a half seasons
@pytest.mark.parametrize("level", [80, 95])
def test_every_seasonal_naive_row_of_monthly_series_of_different_lengths(horizon, level):
    train = _panel(
        "MS", lengths={"a": 13, "b": 29, "c": 40}, starts={"a": "2003-05-01", "b": "2000-02-01", "c": "1999-11-01"}, seed=1
    )
    out = run_baselines(train, horizon, "MS", 12, names=("seasonal_naive",), level=level)
    assert set(out.columns) == {"unique_id", "ds", "seasonal_naive", "seasonal_naive_lo", "seasonal_naive_hi"}
    assert out.groupby("unique_id").size().to_dict() == {"a": horizon, "b": horizon, "c": horizon}
    _check(out, _expected(train, horizon, 12, "MS", level), level)


def test_missing_targets_are_carried_forward_and_rows_before_the_first_observation_dropped():
    train = _panel("MS", lengths={"a": 26, "b": 20}, starts={"a": "2001-01-01", "b": "2001-07-01"}, seed=2)
    a = train.index[train["unique_id"] == "a"]
    b = train.index[train["unique_id"] == "b"]
    train.loc[a[[-3, -7]], "y"] = np.nan  # inside the last season: the forecast repeats the value before each gap
    train.loc[b[:2], "y"] = np.nan  # leading empty rows: not history, dropped (never filled backward)
    out = run_baselines(train, 15, "MS", 12, names=("seasonal_naive",))
    expected = _expected(train, 15, 12, "MS", 80)
    _check(out, expected, 80)
    observed_b = train.loc[b[2:]]
    _check(out[out["unique_id"] == "b"], _expected(observed_b, 15, 12, "MS", 80), 80)
    # the hand computation really used the filled values
    last_a = train.loc[a, "y"].ffill().to_numpy()[-12:]
    np.testing.assert_allclose(out.loc[out["unique_id"] == "a", "seasonal_naive"].to_numpy()[:12], last_a)
    assert np.isfinite(out["seasonal_naive"]).all()


def test_every_seasonal_naive_row_of_daily_series_with_custom_column_names_and_no_interval():
    train = _panel("D", lengths={"x": 9, "y": 23, "z": 31}, starts={"x": "2020-03-01", "y": "2020-02-11", "z": "2020-01-01"})
    renamed = train.rename(columns={"unique_id": "store", "ds": "day", "y": "sales"})
    out = run_baselines(
        renamed, 17, "D", 7, names=("seasonal_naive",), level=None, id_col="store", time_col="day", target_col="sales"
    )
    assert set(out.columns) == {"store", "day", "seasonal_naive"}
    back = out.rename(columns={"store": "unique_id", "day": "ds"})
    _check(back, _expected(train, 17, 7, "D", None), None)


def test_no_baselines_and_unknown_baselines():
    train = _panel("MS", lengths={"a": 24}, starts={"a": "2001-01-01"})
    assert run_baselines(train, 6, "MS", 12, names=()).empty
    with pytest.raises(ValueError, match="Unknown baseline"):
        run_baselines(train, 6, "MS", 12, names=("naive_forever",))


def test_ids_of_mixed_types_are_kept_as_given():
    rng = np.random.default_rng(0)
    ds = pd.date_range("2000-01-01", periods=30, freq="MS")
    named = {1: "one", "b": "b", 2.5: "two and a half"}
    train = pd.concat([pd.DataFrame({"unique_id": uid, "ds": ds, "y": rng.gamma(5.0, size=30)}) for uid in named])
    mixed = run_baselines(train, 6, "MS", 12, ("seasonal_naive",), level=None)
    as_text = run_baselines(train.assign(unique_id=train["unique_id"].map(named)), 6, "MS", 12, ("seasonal_naive",), level=None)
    assert list(pd.unique(mixed["unique_id"])) == [1, "b", 2.5]
    np.testing.assert_array_equal(
        mixed.assign(unique_id=mixed["unique_id"].map(named)).sort_values(["unique_id", "ds"])["seasonal_naive"],
        as_text.sort_values(["unique_id", "ds"])["seasonal_naive"],
    )


def test_baselines_match_statsforecast_fitted_on_the_observed_rows_only():
    """A series first recorded long after the panel starts: AutoETS and seasonal naive are fitted on its observed
    rows, exactly as statsforecast fits them when the empty rows are not in the file (a back-filled constant run
    would change both the fit and the interval)."""
    from statsforecast import StatsForecast
    from statsforecast.models import AutoETS, SeasonalNaive

    rng = np.random.default_rng(5)
    t = np.arange(60)
    observed = pd.DataFrame(
        {
            "unique_id": np.repeat(["late", "full"], [36, 60]),
            "ds": np.concatenate(
                [pd.date_range("2012-01-01", periods=36, freq="MS"), pd.date_range("2009-01-01", periods=60, freq="MS")]
            ),
            "y": np.concatenate([50 + 2 * t[:36] + rng.normal(0, 3, 36), 100 + 10 * np.sin(t / 1.9) + rng.normal(0, 2, 60)]),
        }
    )
    leading = pd.DataFrame({"unique_id": "late", "ds": pd.date_range("2009-01-01", periods=24, freq="MS"), "y": np.nan})
    padded = pd.concat([leading, observed], ignore_index=True).sort_values(["unique_id", "ds"], kind="stable")
    out = run_baselines(padded, 6, "MS", 12, names=("seasonal_naive", "auto_ets"), level=80)
    engine = StatsForecast(models=[SeasonalNaive(season_length=12), AutoETS(season_length=12)], freq="MS", n_jobs=1)
    reference = engine.forecast(df=observed, h=6, level=[80])
    reference = reference.reset_index() if "unique_id" not in reference.columns else reference
    merged = out.merge(reference, on=["unique_id", "ds"], how="inner", validate="one_to_one")
    assert len(merged) == 12
    np.testing.assert_allclose(merged["seasonal_naive"], merged["SeasonalNaive"], rtol=1e-12)
    np.testing.assert_allclose(merged["auto_ets"], merged["AutoETS"], rtol=1e-9)
    np.testing.assert_allclose(merged["auto_ets_lo"], merged["AutoETS-lo-80"], rtol=1e-9)
    np.testing.assert_allclose(merged["auto_ets_hi"], merged["AutoETS-hi-80"], rtol=1e-9)


def test_the_baselines_do_not_depend_on_the_datas_units():
    """statsforecast's ETS fitted a series of values near 1e-10 otherwise than the same series in other units: given in
    units of 10^-12, its forecasts moved 2% and its intervals narrowed 5%; at 10^-30 the intervals had zero width."""
    rng = np.random.default_rng(0)
    t = np.arange(60)
    df = pd.concat(
        [
            pd.DataFrame(
                {
                    "unique_id": k,
                    "ds": pd.date_range("2000-01-01", periods=60, freq="MS"),
                    "y": 100 + np.cumsum(rng.normal(0, 3, 60)) + 10 * np.sin(2 * np.pi * t / 12),
                }
            )
            for k in range(4)
        ],
        ignore_index=True,
    )
    names = ("seasonal_naive", "auto_ets", "mstl")
    out = run_baselines(df, 6, "MS", 12, names=names, level=80, quantiles=(0.1, 0.5, 0.9))
    values = [c for c in out if c not in ("unique_id", "ds")]
    for units in (1e-12, 1e-30):
        small = run_baselines(df.assign(y=df["y"] * units), 6, "MS", 12, names=names, level=80, quantiles=(0.1, 0.5, 0.9))
        np.testing.assert_allclose(small[values].to_numpy() / units, out[values].to_numpy(), rtol=1e-8)


def _daily(lengths: dict[str, int], seed: int = 3) -> pd.DataFrame:
    """Daily series with weekly and yearly cycles, all ending on the same day."""
    rng = np.random.default_rng(seed)
    frames = []
    for uid, n in lengths.items():
        t = np.arange(n)
        y = 100 + 12 * np.sin(2 * np.pi * t / 7) + 8 * np.sin(2 * np.pi * t / 365.25) + rng.normal(0, 1.5, n)
        frames.append(pd.DataFrame({"unique_id": uid, "ds": pd.date_range(end="2023-06-30", periods=n, freq="D"), "y": y}))
    return pd.concat(frames, ignore_index=True)


def test_mstl_takes_each_season_the_history_holds_twice_as_statsforecast_fits_it():
    """Two years of days: the weekly and the yearly season; 200 days: the weekly one; 10 days: no season (the trend
    model, AutoETS without a season, alone). Each as statsforecast's MSTL fits that series by itself."""
    from statsforecast import StatsForecast
    from statsforecast.models import MSTL, AutoETS

    train = _daily({"years": 800, "months": 200, "days": 10})
    out = run_baselines(train, 14, "D", 7, names=("mstl",), level=80, quantiles=(0.1, 0.5, 0.9))
    assert set(out.columns) >= {"mstl", "mstl_lo", "mstl_hi", "mstl_q10", "mstl_q90"}
    expected = {"years": MSTL(season_length=[7, 365]), "months": MSTL(season_length=[7]), "days": AutoETS(model="ZZN")}
    for uid, model in expected.items():
        own = train[train["unique_id"] == uid]
        reference = StatsForecast(models=[model], freq="D", n_jobs=1).forecast(df=own, h=14, level=[80])
        reference = reference.reset_index() if "unique_id" not in reference.columns else reference
        got = out[out["unique_id"] == uid].sort_values("ds")
        name = "MSTL" if uid != "days" else "AutoETS"
        np.testing.assert_allclose(got["mstl"].to_numpy(), reference[name].to_numpy(), rtol=1e-9, err_msg=uid)
        np.testing.assert_allclose(got["mstl_lo"].to_numpy(), reference[f"{name}-lo-80"].to_numpy(), rtol=1e-9)
        np.testing.assert_array_equal(got["mstl_q10"].to_numpy(), got["mstl_lo"].to_numpy())
    years = out[out["unique_id"] == "years"]["mstl"].to_numpy()
    months = out[out["unique_id"] == "months"]["mstl"].to_numpy()
    assert np.ptp(years) > 10 and np.ptp(months) > 10  # the weekly cycle is in both forecasts


def test_a_backtest_scores_mstl_beside_the_other_baselines():
    from conftest import fast_model

    from forecaster import backtest

    train = _daily({"a": 120, "b": 120, "c": 90})
    model = fast_model(horizon=7, input_size=14, freq="D")
    result = backtest(model, train, n_windows=2, baselines=("seasonal_naive", "mstl"), progress=False)
    summary = result.summary()
    assert list(summary.index) == ["seq2seq", "seasonal_naive", "mstl"]
    assert np.isfinite(summary.loc["mstl", ["mean_mase", "wql", "coverage"]].astype(float)).all()
    assert "rel_mase_vs_mstl" in summary.columns
    # on series this smooth, MSTL's weekly cycle beats repeating the last week of noise
    assert summary.loc["mstl", "mean_mase"] < summary.loc["seasonal_naive", "mean_mase"]
