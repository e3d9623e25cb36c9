"""A forecast that reads a future-known covariate at a value the fit never saw (a flag given as 2, a holiday flag
that was 0 over the whole history, a temperature past any the fit saw) says where, and what the fit saw; values it
saw, a float32 copy of them included, say nothing; the record is saved with the model, widened by a warm start, and
absent (nothing checked) in files written before fits kept one."""

from __future__ import annotations

import hashlib
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel

HORIZON = 7


def _shops(days: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    ds = pd.date_range("2024-01-01", periods=days, freq="D")
    frames = [
        pd.DataFrame(
            {
                "unique_id": f"s{k}",
                "ds": ds,
                "open": (ds.dayofweek < 6).astype(float),
                "temp": rng.normal(15, 5, days).round(1),
                "holiday": 0.0,
            }
        )
        for k in range(3)
    ]
    df = pd.concat(frames, ignore_index=True)
    df["y"] = np.where(df["open"] == 1, rng.poisson(20, len(df)), 0).astype(float)
    return df


def _future(df: pd.DataFrame, **values) -> pd.DataFrame:
    ds = pd.date_range(df["ds"].max() + pd.Timedelta(days=1), periods=HORIZON, freq="D")
    rows = [pd.DataFrame({"unique_id": uid, "ds": ds}) for uid in df["unique_id"].unique()]
    return pd.concat(rows, ignore_index=True).assign(**{"open": 1.0, "temp": 15.0, "holiday": 0.0, **values})


@pytest.fixture(scope="module")
def fitted():
    df = _shops()
    return df, fast_model(horizon=HORIZON, future_covariates=["open", "temp", "holiday"]).fit(df)


def _messages(model, future) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.predict(future_df=future)
    return [str(w.message) for w in caught if "never saw" in str(w.message)]


def test_a_flag_value_the_fit_never_saw_is_named_with_the_values_it_saw(fitted):
    df, model = fitted
    (message,) = _messages(model, _future(df, open=2.0))
    assert "`open` takes values the fit never saw on 21 of the 21 horizon rows (2; first for series 's0'" in message
    assert "the fit saw only 0, 1" in message


def test_a_holiday_flag_that_never_occurred_in_the_history_is_named(fitted):
    df, model = fitted
    future = _future(df)
    holiday = future["ds"] == future["ds"].min() + pd.Timedelta(days=2)
    (message,) = _messages(model, future.assign(holiday=np.where(holiday, 1.0, 0.0)))
    assert "`holiday` takes values the fit never saw on 3 of the 21 horizon rows (1; first for series 's0' at" in message
    assert "the fit saw only 0." in message


def test_a_measurement_past_the_range_the_fit_saw_is_named(fitted):
    df, model = fitted
    low, high = df["temp"].min(), df["temp"].max()
    (message,) = _messages(model, _future(df, temp=np.r_[high + 10, [15.0] * (3 * HORIZON - 1)]))
    assert f"`temp` takes values the fit never saw on 1 of the 21 horizon rows ({high + 10:g};" in message
    assert f"the fit saw values from {low:g} to {high:g}" in message


def test_values_the_fit_saw_say_nothing_even_as_float32(fitted):
    df, model = fitted
    future = _future(df, temp=np.resize(df["temp"].to_numpy()[:50], 3 * HORIZON))
    future = future.astype({"open": np.float32, "temp": np.float32})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(future_df=future)


def test_the_record_is_saved_and_a_file_without_it_checks_nothing(fitted, tmp_path):
    df, model = fitted
    model.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.state_.features.numeric == model.state_.features.numeric
    assert len(_messages(loaded, _future(df, open=2.0))) == 1
    # A file written before fits recorded the values seen: only each column's mean and deviation.
    folder = tmp_path / "model"
    config = json.loads((folder / "config.json").read_text())
    numeric = config["fitted"]["features"]["numeric"]
    config["fitted"]["features"]["numeric"] = {k: {"mean": v["mean"], "std": v["std"]} for k, v in numeric.items()}
    (folder / "config.json").write_text(json.dumps(config))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["sha256"]["config.json"] = hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    older = Seq2SeqForecaster.load(folder)
    assert older.state_.features.numeric["open"].codes is None
    assert _messages(older, _future(df, open=2.0)) == []


def test_a_warm_start_adds_the_values_its_new_history_holds():
    df = _shops()
    model = fast_model(horizon=HORIZON, future_covariates=["open", "temp", "holiday"]).fit(df[df["ds"] < "2024-04-01"])
    later = df.assign(holiday=np.where(df["ds"] == pd.Timestamp("2024-04-10"), 1.0, 0.0))
    model.set_params(warm_start=True, max_steps=2).fit(later)
    assert model.state_.features.numeric["holiday"].codes == (0.0, 1.0)
    assert _messages(model, _future(later, holiday=1.0)) == []


def test_a_measurement_of_few_readings_is_checked_by_its_range_only():
    """Temperatures in whole degrees (29 readings) were kept as codes: 15.5, inside the range, was called a value the
    fit never saw, and a -0.0 among them read "-0"."""
    df = _shops().assign(temp=lambda d: d["temp"].round(0))
    model = fast_model(horizon=HORIZON, future_covariates=["open", "temp", "holiday"]).fit(df)
    assert _messages(model, _future(df, temp=15.5)) == []
    (message,) = _messages(model, _future(df, temp=df["temp"].max() + 3))
    assert "the fit saw values from" in message and "-0 " not in message


def test_a_backtest_says_nothing_in_either_mode():
    """Refitted folds warned once per covariate per fold (their horizons hold the data's own values), and a one-pass
    backtest did not: the docs say a backtest does not warn."""
    from forecaster import backtest

    df = _shops(100)
    df["holiday"] = np.where(df["ds"] == df["ds"].max() - pd.Timedelta(days=2), 1.0, 0.0)  # first after every cutoff
    for refit in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = fast_model(horizon=HORIZON, future_covariates=["open", "holiday"])
            backtest(model, df, n_windows=2, refit=refit, baselines=(), progress=False)
        assert not [w for w in caught if "never saw" in str(w.message)], refit


def test_a_static_category_the_fit_never_saw_is_named():
    """A new series of a new kind was read as no category (all zeros) without a word; numeric values warn."""
    from forecaster.data.seen_values import UnseenValueWarning

    df, _ = make_panel(n_series=4, length=30, seed=0, static=False)
    df = df[["unique_id", "ds", "y"]].assign(kind=np.where(df["unique_id"].isin(["S000", "S001"]), "a", "b"))
    model = fast_model(horizon=4, max_steps=2, static_covariates=["kind"]).fit(df)
    new = df[df["unique_id"] == "S003"].assign(unique_id="S099", kind="zzz")
    with pytest.warns(
        UnseenValueWarning, match=r"`kind` holds categories the fit never saw \(\['zzz'\] for 1 series such as \['S099'\]\)"
    ):
        model.predict(df=new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(df=df[df["unique_id"] == "S003"].assign(unique_id="S098"))  # a new series of a known kind
