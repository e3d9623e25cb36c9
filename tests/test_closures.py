"""Closed periods forecast at zero (``closed_when``): a future-known covariate value on which the target was always
zero closes the forecast steps that carry it, at every level, with an account that adds up; learnt from the fit's
history only, declared, or off; saved with the model."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

from forecaster import Seq2SeqForecaster, backtest
from forecaster.model.closures import learn_closures

QUANTILE_COLUMNS = ["y_hat", *(f"y_hat_q{q}" for q in range(10, 100, 10))]
HORIZON = 7


def _shops(n_series: int = 6, days: int = 140, seed: int = 0) -> pd.DataFrame:
    """Daily sales of shops shut on Sundays (``open`` 0, sales 0), with a random ``promo`` flag that closes nothing."""
    rng = np.random.default_rng(seed)
    ds = pd.date_range("2024-01-01", periods=days + HORIZON, freq="D")
    frames = []
    for i in range(n_series):
        is_open = (ds.dayofweek != 6).astype(float)
        sales = is_open * np.maximum(0, 50 + 10 * i + rng.normal(0, 5, len(ds))).round()
        promo = rng.integers(0, 2, len(ds)).astype(float)
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": ds, "y": sales, "open": is_open, "promo": promo}))
    return pd.concat(frames, ignore_index=True)


def _model(**params) -> Seq2SeqForecaster:
    return fast_model(horizon=HORIZON, future_covariates=["open", "promo"], **params)


@pytest.fixture(scope="module")
def panel():
    df = _shops()
    last = df["ds"].max() - pd.Timedelta(days=HORIZON)
    return df[df["ds"] <= last].reset_index(drop=True), df[df["ds"] > last].drop(columns="y").reset_index(drop=True)


@pytest.fixture(scope="module")
def fits(panel):
    history, future = panel
    return _model().fit(history), _model(closed_when=None).fit(history)


def test_a_value_on_which_the_target_was_always_zero_closes_its_steps_at_every_level(panel, fits):
    history, future = panel
    learnt, off = fits
    assert learnt.closed_when_ == {"open": [0.0]} and off.closed_when_ == {}
    forecast = learnt.predict(future_df=future)
    shut = forecast.merge(future, on=["unique_id", "ds"])["open"].to_numpy() == 0
    assert shut.any() and not shut.all()
    free = off.predict(future_df=future)
    assert (free.loc[shut, "y_hat_q90"] > 0).any()  # without the rule the closed days get sales
    assert (forecast.loc[shut, QUANTILE_COLUMNS].to_numpy() == 0).all()
    np.testing.assert_array_equal(forecast.loc[~shut, QUANTILE_COLUMNS], free.loc[~shut, QUANTILE_COLUMNS])


def test_the_account_of_a_closed_step_is_zero_and_still_adds_up(panel, fits):
    history, future = panel
    learnt, _ = fits
    steps = learnt.explain(future_df=future, by="step")
    parts = list(steps.attrs["parts"])
    forecast = learnt.predict(future_df=future)
    merged = steps.merge(forecast[["unique_id", "ds", "y_hat"]], on=["unique_id", "ds"], suffixes=("", "_forecast"))
    np.testing.assert_allclose(merged[parts].sum(axis=1), merged["y_hat_forecast"], atol=1e-4)
    shut = merged.merge(future, on=["unique_id", "ds"])["open"].to_numpy() == 0
    assert (merged.loc[shut, parts].to_numpy() == 0).all()
    assert not np.signbit(merged.loc[shut, parts].to_numpy()).any()  # 0, not -0.0 (a negative part times False)
    # A zero the closure made is told from parts that happen to be zero, in both frames.
    np.testing.assert_array_equal(merged["closed_step"].to_numpy(), shut)
    points = learnt.explain(future_df=future).merge(future, on=["unique_id", "ds"])
    np.testing.assert_array_equal(points["closed_step"].to_numpy(), points["open"].to_numpy() == 0)
    _, off = fits
    assert not off.explain(future_df=future, by="step")["closed_step"].any()


def test_the_attention_plot_marks_the_closed_steps_and_says_how_many(panel, fits):
    """The map drew full attention rows for closed steps, as if the network had read for them, and nothing said that
    their forecast came from the closure."""
    from forecaster.plots import plot_attention

    _, future = panel
    learnt, _ = fits
    closed = future[(future["unique_id"] == "s0") & (future["open"] == 0)]
    assert len(closed)
    fig = plot_attention(learnt, unique_id="s0", future_df=future)
    heatmap, shares = fig.axes[1], fig.axes[2]
    labels = [text.get_text() for text in heatmap.get_legend().get_texts()]
    assert "closed step: forecast at zero, not read" in labels
    assert len(heatmap.collections) >= 1 + len(closed)  # the map's mesh and one hatched band per closed step
    title = " ".join(shares.get_title(loc="left").split())
    assert f"{len(closed)} of {HORIZON} steps closed" in title


def test_a_log_target_model_says_which_steps_a_closure_made_zero(panel):
    """With ``log_target`` there is no account, and ``explain`` had no ``closed_step`` column: its attention rows for
    closed steps read as if the forecast had used them."""
    history, future = panel
    model = _model(log_target=True).fit(history)
    assert model.closed_when_ == {"open": [0.0]}
    points = model.explain(future_df=future).merge(future, on=["unique_id", "ds"])
    assert "contribution" not in points  # no account: the closed steps are still named
    np.testing.assert_array_equal(points["closed_step"].to_numpy(), points["open"].to_numpy() == 0)


def test_the_attention_diagnostics_and_profile_leave_out_the_closed_steps(panel, fits):
    """Entropy, last-season share and the profile by lag averaged in the attention of closed steps, which the forecast
    never read."""
    from forecaster.plots import attention_diagnostics, attention_profile

    _, future = panel
    learnt, _ = fits
    frame = learnt.explain(future_df=future, include_padding=True)
    assert frame["closed_step"].any()
    read = frame[~frame["closed_step"]]
    whole, kept = attention_diagnostics(frame, season_length=7), attention_diagnostics(read, season_length=7)
    assert (whole.mean_entropy, whole.last_season_share) == (kept.mean_entropy, kept.last_season_share)
    pd.testing.assert_frame_equal(whole.by_step, kept.by_step)
    pd.testing.assert_frame_equal(attention_profile(frame), attention_profile(read))
    open_only = attention_diagnostics(frame.assign(closed_step=False), season_length=7)
    assert open_only.mean_entropy != whole.mean_entropy  # the closed steps' rows would move it


def test_a_flag_with_sales_on_both_values_and_rare_zeros_close_nothing():
    df = _shops()
    assert learn_closures(df, "y", ["promo"]) == {}
    sparse = df.assign(y=np.where(np.random.default_rng(1).random(len(df)) < 0.5, 0.0, df["y"]), rare=0.0)
    sparse.loc[sparse.index[:4], ["rare", "y"]] = [1.0, 0.0]  # four zeros where half the rows are zero: chance
    assert "rare" not in learn_closures(sparse, "y", ["rare"])
    many = sparse.copy()
    many.loc[many.index[:40], ["rare", "y"]] = [1.0, 0.0]  # forty in a row are not
    assert learn_closures(many, "y", ["rare"]) == {"rare": [1.0]}


def test_declared_closures_are_taken_and_a_non_future_column_is_refused(panel):
    history, future = panel
    declared = _model(closed_when={"promo": 1}).fit(history)
    assert declared.closed_when_ == {"promo": [1.0]}
    forecast = declared.predict(future_df=future)
    promo = forecast.merge(future, on=["unique_id", "ds"])["promo"].to_numpy() == 1
    assert (forecast.loc[promo, "y_hat_q90"] == 0).all() and (forecast.loc[~promo, "y_hat_q90"] > 0).any()
    with pytest.raises(ValueError, match="'price'.*not a future-known covariate"):
        _model(closed_when={"price": 0}).fit(history)
    with pytest.raises(ValueError, match="closed_when"):
        _model(closed_when="sometimes").fit(history)


def test_the_closures_are_saved_with_the_model(panel, fits, tmp_path):
    history, future = panel
    learnt, _ = fits
    learnt.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.closed_when_ == {"open": [0.0]}
    pd.testing.assert_frame_equal(loaded.predict(future_df=future), learnt.predict(future_df=future))


def test_a_backtest_learns_the_closures_from_data_up_to_each_origin():
    df = _shops(n_series=3, days=120)
    kwargs = dict(n_windows=2, refit=True, baselines=(), progress=False)
    plain = backtest(_model(), df, **kwargs).forecasts
    last_origin = plain["cutoff"].max()
    # Sales on the Sundays after the last origin: a rule learnt from them would close nothing.
    reopened = df.assign(y=np.where((df["ds"] > last_origin) & (df["open"] == 0), 5.0, df["y"]))
    forecasts = backtest(_model(), reopened, **kwargs).forecasts
    columns = ["seq2seq", *(f"seq2seq_q{q}" for q in range(10, 100, 10))]
    shut = forecasts.merge(df[["unique_id", "ds", "open"]], on=["unique_id", "ds"])["open"].to_numpy() == 0
    assert shut.any() and (forecasts.loc[shut, columns].to_numpy() == 0).all()
    np.testing.assert_array_equal(forecasts[columns], plain[columns])  # nothing after a cutoff moved its fold


def test_a_closure_kept_from_closing_by_a_few_stray_counts_is_named_in_a_warning():
    """Two late transactions logged on closed evenings (2 of about 900 closed hours): the closure was not learnt, the
    closed hours were forecast as open, and nothing said so."""
    rng = np.random.default_rng(0)
    hours = pd.date_range("2024-03-04", periods=22 * 24, freq="h")
    open_ = ((hours.hour >= 8) & (hours.hour < 20) & (hours.dayofweek < 6)).astype(float)
    df = pd.concat(
        [
            pd.DataFrame({"unique_id": s, "ds": hours, "open": open_, "y": rng.poisson(open_ * (6 + 4 * k)).astype(float)})
            for k, s in enumerate("abc")
        ],
        ignore_index=True,
    )
    stray = (df["unique_id"] == "a") & df["ds"].isin(pd.to_datetime(["2024-03-12 20:00", "2024-03-19 20:00"]))
    model = Seq2SeqForecaster(horizon=24, future_covariates=["open"], max_steps=3, progress=False, num_threads=1)
    with pytest.warns(UserWarning, match=r"open=0 looks like a closure but is not learnt as one: 2 of its \d+ observed"):
        model.fit(df.assign(y=df["y"].where(~stray, 1.0)))
    assert model.closed_when_ == {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the clean history learns the closure and says nothing
        model.fit(df)
    assert model.closed_when_ == {"open": [0.0]}


def test_a_measurement_is_never_learnt_as_a_closure():
    """A call centre closed at night, with a temperature known ahead: cold readings fell only in closed hours, so each
    was learnt as a closure, and open hours on a cold day were forecast at exactly zero (with a warning per value)."""
    from forecaster.model.closures import learn_closures, near_misses

    rng = np.random.default_rng(0)
    hours = pd.date_range("2024-01-01", periods=24 * 56, freq="h")
    open_ = ((hours.hour >= 7) & (hours.dayofweek < 6)).astype(float)
    night = hours.hour < 7  # the cold hours: readings of -0.5 to 0.5 degrees only then, every night closed
    temperature = np.where(night, rng.integers(-5, 6, len(hours)) / 10, np.round(rng.uniform(3, 20, len(hours)), 1))
    calls = np.where(open_ == 1, rng.poisson(20, len(hours)), 0).astype(float)
    frame = pd.DataFrame({"unique_id": "q", "ds": hours, "y": calls, "open": open_, "temperature": temperature})
    assert learn_closures(frame, "y", ["open", "temperature"]) == {"open": [0.0]}
    assert not [note for note in near_misses(frame, "y", ["open", "temperature"], "unique_id", "ds") if "temperature" in note]


def test_a_near_miss_is_named_at_the_time_the_users_data_has():
    """A zoned hourly fit works in UTC: the note named the stray open hour two hours before the user's row."""
    from forecaster.model.closures import near_misses

    hours = pd.date_range("2024-06-03", periods=24 * 28, freq="h")  # UTC, as the fit holds Helsinki's hours
    open_ = (hours.hour >= 6).astype(float)
    calls = np.where(open_ == 1, 10.0, 0.0)
    calls[30] = 4.0  # 2024-06-04 06:00 UTC, a closed hour with calls: 09:00 in Helsinki (+03:00)
    open_[30] = 0.0
    frame = pd.DataFrame({"unique_id": "q", "ds": hours, "y": calls, "open": open_})
    (note,) = near_misses(frame, "y", ["open"], "unique_id", "ds", "utc:Europe/Helsinki")
    assert "series 'q' at 2024-06-04 09:00:00+03:00, 4)" in note


def test_a_flag_value_seen_only_on_rows_without_a_target_is_named_with_what_to_do():
    """A shop export that leaves its closed days empty: `open=0` was never learnt as a closure, the closed days of the
    horizon were forecast as open ones, and nothing said why."""
    from conftest import fast_model

    rng = np.random.default_rng(0)
    days = pd.date_range("2023-01-01", periods=200, freq="D")
    open_ = np.where(days.dayofweek == 6, 0.0, 1.0)  # closed on Sundays
    frames = []
    for i in range(3):
        units = np.where(open_ == 1, rng.poisson(10 + i, len(days)), np.nan)  # nothing recorded on closed days
        frames.append(pd.DataFrame({"sku": f"p{i}", "day": days, "units": units, "open": open_}))
    df = pd.concat(frames, ignore_index=True)
    model = fast_model(
        horizon=7, input_size=14, max_steps=3, future_covariates=["open"], id_col="sku", time_col="day", target_col="units"
    )
    with pytest.warns(UserWarning, match=r"open=0 occurs on 84 rows, none with an observed `units` \(the first: series 'p0' at "):
        model.fit(df)
    assert model.closed_when_ == {}
    recorded = df.assign(units=df["units"].fillna(0.0))  # the closed days recorded as zeros: learnt, and no such note
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(recorded)
    assert model.closed_when_ == {"open": [0.0]}
    assert not [w for w in caught if "none with an observed" in str(w.message)]
