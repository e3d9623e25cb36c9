"""Bad input gets a clear error naming the culprit; valid input never gives NaN; nothing is mutated."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forecaster.model.training as training
from forecaster import LeakageError, TrainingDivergedError, backtest
from forecaster.datasets import make_panel


@pytest.fixture(scope="module")
def clean():
    df, _ = make_panel(n_series=5, length=36, seed=7, short_share=0.0, missing_share=0.0, static=False)
    return df


@pytest.fixture(scope="module")
def plain_model(clean):
    return fast_model().fit(clean)


def _with(df, changes):
    out = df.copy()
    for (row, column), value in changes.items():
        out.loc[row, column] = value
    return out


# ----------------------------------------------------------------------------- the bad-input matrix
def test_missing_column_and_declared_but_absent_covariate(clean):
    with pytest.raises(ValueError, match="missing column.*`y`"):
        fast_model().fit(clean.drop(columns="y"))
    with pytest.raises(ValueError, match="`weather`"):
        fast_model(future_covariates=["weather"]).fit(clean)


def test_duplicate_rows_name_the_series_and_time(clean):
    with pytest.raises(ValueError, match=r"duplicate .*S000.*2000-01-01"):
        fast_model().fit(pd.concat([clean, clean.head(1)]))


def test_unsorted_rows_are_sorted(clean, plain_model):
    shuffled = clean.sample(frac=1.0, random_state=0)
    pd.testing.assert_frame_equal(plain_model.predict(df=shuffled), plain_model.predict(df=clean))


@pytest.mark.parametrize("bad", [True, "text"])
def test_non_numeric_or_boolean_target(clean, bad):
    frame = clean.copy()
    frame["y"] = bad if bad is True else "x"
    with pytest.raises(ValueError, match="`y`"):
        fast_model().fit(frame)


def test_inf_in_target_or_covariate_names_series_and_time(clean):
    with pytest.raises(ValueError, match=r"`y` holds inf at series 'S000' at 2000-04-01"):
        fast_model().fit(_with(clean, {(3, "y"): np.inf}))
    with pytest.raises(ValueError, match="`promo` holds inf"):
        fast_model(future_covariates=["promo"]).fit(_with(clean, {(5, "promo"): -np.inf}))


def test_nan_target_is_masked_but_nan_future_covariate_is_an_error(clean):
    holes = _with(clean, {(4, "y"): np.nan, (40, "y"): np.nan})
    forecast = fast_model().fit(holes).predict()
    assert np.isfinite(forecast["y_hat"]).all()
    with pytest.raises(ValueError, match="`promo` is missing at series 'S000'"):
        fast_model(future_covariates=["promo"]).fit(_with(clean, {(2, "promo"): np.nan}))
    model = fast_model(future_covariates=["promo"]).fit(clean)
    future = future_frame(clean, 6)
    future.loc[0, "promo"] = np.nan
    with pytest.raises(ValueError, match="`future_df` column `promo` is missing"):
        model.predict(future_df=future)


def test_gaps_raise_by_default_and_can_be_filled_and_masked(clean):
    gappy = clean.drop(index=[10, 11])
    with pytest.raises(ValueError, match=r"gaps.*first missing timestamp is 2000-11-01.*fill_gaps=True"):
        fast_model().fit(gappy)
    forecast = fast_model(fill_gaps=True).fit(gappy).predict()
    assert np.isfinite(forecast["y_hat"]).all()


def test_mixed_or_undeterminable_frequency(clean):
    weekly = clean[clean["unique_id"] == "S001"].assign(unique_id="W", ds=pd.date_range("2000-01-02", periods=36, freq="W"))
    with pytest.raises(ValueError, match="Mixed frequencies"):
        fast_model().fit(pd.concat([clean, weekly]))
    odd = clean.copy()
    odd["ds"] = odd["ds"] + pd.to_timedelta(np.random.default_rng(0).integers(0, 5, len(odd)), unit="D")
    with pytest.raises(ValueError, match="frequency"):
        fast_model().fit(odd)


def test_timezone_aware_timestamps_come_back_in_their_zone(clean):
    aware = clean.assign(ds=clean["ds"].dt.tz_localize("Europe/Paris"))
    forecast = fast_model(freq="MS").fit(aware).predict()
    assert str(forecast["ds"].dt.tz) == "Europe/Paris"
    assert forecast["ds"].iloc[0] == pd.Timestamp("2003-01-01", tz="Europe/Paris")


def test_a_midnight_that_occurs_twice_keeps_its_date():
    from forecaster.data.validation import restore_zone

    days = pd.date_range("2023-11-01", periods=8, freq="D")  # Havana's clocks go back at midnight on 2023-11-05
    restored = restore_zone(days, "wall:America/Havana")
    assert not restored.isna().any() and (restored.tz_localize(None) == days).all()


@pytest.mark.parametrize("ids", ["int", "str"])
def test_integer_and_string_ids_survive_fit_predict_and_save(clean, ids, tmp_path):
    codes = clean["unique_id"].str[1:].astype(int) + 100
    frame = clean.assign(unique_id=codes if ids == "int" else "id-" + codes.astype(str))
    model = fast_model().fit(frame)
    forecast = model.predict()
    assert set(forecast["unique_id"]) == set(frame["unique_id"])
    model.save(tmp_path / "m")
    pd.testing.assert_frame_equal(type(model).load(tmp_path / "m").predict(), forecast)


def test_series_shorter_than_one_horizon_is_named(clean):
    short = pd.concat([clean, clean.head(3).assign(unique_id="TINY")])
    with pytest.raises(ValueError, match=r"1 of \d+ series are shorter than one horizon .*\['TINY'\]"):
        fast_model().fit(short)


def test_every_series_shorter_than_one_horizon_is_counted(clean):
    """All 30 series too short: the message listed five ids and no count, as if five were."""
    ids = [f"s{i:02d}" for i in range(30)]
    short = pd.concat([clean.head(3).assign(unique_id=i) for i in ids], ignore_index=True)
    with pytest.raises(ValueError, match=r"30 of 30 series are shorter than one horizon .*'s05', \.\.\.\]"):
        fast_model().fit(short)


def test_all_missing_series_is_named(clean):
    frame = clean.copy()
    frame.loc[frame["unique_id"] == "S002", "y"] = np.nan
    with pytest.raises(ValueError, match="S002.*no observed value"):
        fast_model().fit(frame)


@pytest.mark.parametrize("scale", [1e12, 1e-9, -50.0])
def test_extreme_and_negative_values_give_finite_forecasts_on_their_scale(clean, scale):
    frame = clean.assign(y=clean["y"] * scale)
    forecast = fast_model().fit(frame).predict()
    assert np.isfinite(forecast["y_hat"]).all()
    ratio = forecast["y_hat"].abs().median() / frame["y"].abs().median()
    assert 0.2 < ratio < 5.0


def test_constant_series_give_finite_forecasts(clean):
    frame = clean.assign(y=np.where(clean["unique_id"] == "S000", 5.0, clean["y"]))
    frame.loc[frame["unique_id"] == "S001", "y"] = 0.0
    forecast = fast_model(quantiles=[0.1, 0.5, 0.9]).fit(frame).predict()
    values = forecast.drop(columns=["unique_id", "ds"])
    assert np.isfinite(values.to_numpy()).all()
    for uid, constant in (("S000", 5.0), ("S001", 0.0)):  # nothing in a constant history says it moves
        assert (values[forecast["unique_id"] == uid].to_numpy() == constant).all(), uid


def test_future_df_missing_extra_duplicated_and_leaky(clean):
    model = fast_model(future_covariates=["promo"], past_covariates=["traffic"]).fit(clean)
    future = future_frame(clean, 6)
    with pytest.raises(ValueError, match=r"lacks .*'S000' at 2003-03-01 \(step 3 of 6\)"):
        model.predict(future_df=future.drop(index=2))
    with pytest.raises(ValueError, match="duplicate"):
        model.predict(future_df=pd.concat([future, future.head(1)]))
    off_grid = future.copy()
    off_grid.loc[0, "ds"] = pd.Timestamp("2003-01-15")
    with pytest.raises(ValueError, match="not on the 'MS' grid"):
        model.predict(future_df=off_grid)
    pd.testing.assert_frame_equal(model.predict(future_df=future_frame(clean, 10)), model.predict(future_df=future))
    with pytest.raises(LeakageError):
        model.predict(future_df=future.assign(traffic=0.0))
    # Rows of series not in the history are not read, as rows after the horizon are not: a whole calendar can be passed,
    # and a gap or a repeat in rows nobody reads is no error.
    ghost = pd.concat([future, future.head(6).assign(unique_id="GHOST")])
    pd.testing.assert_frame_equal(model.predict(future_df=ghost), model.predict(future_df=future))
    unread = pd.concat([future_frame(clean, 10), future.head(2).assign(unique_id="GHOST", promo=np.nan)])
    unread = pd.concat([unread, unread.tail(1)])  # a repeated row of the other series
    unread.loc[unread["ds"] == unread["ds"].max(), "promo"] = np.nan  # after every horizon
    pd.testing.assert_frame_equal(model.predict(future_df=unread), model.predict(future_df=future))
    with pytest.raises(ValueError, match=r"`future_df` column `promo` is missing at series 'S000'"):
        model.predict(future_df=future.assign(promo=future["promo"].where(future.index != 0)))
    with pytest.raises(ValueError, match=r"lacks .*'S000'"):  # a history series without its rows is still named
        model.predict(future_df=future.assign(unique_id=future["unique_id"].str.lower()))


# ----------------------------------------------------------------------------- no mutation
def test_callers_frames_are_never_modified(clean):
    df = clean.sample(frac=1.0, random_state=1)
    df.loc[df.index[3], "y"] = np.nan
    future = future_frame(clean, 6)
    df_before, future_before = df.copy(), future.copy()
    model = fast_model(future_covariates=["promo"]).fit(df)
    model.predict(df=df, future_df=future)
    model.explain(df=df, future_df=future)
    backtest(fast_model(future_covariates=["promo"]), df, n_windows=1, baselines=("seasonal_naive",), progress=False)
    pd.testing.assert_frame_equal(df, df_before)
    pd.testing.assert_frame_equal(future, future_before)


# ----------------------------------------------------------------------------- properties
@st.composite
def histories(draw):
    n_series = draw(st.integers(1, 4))
    frames = []
    for i in range(n_series):
        length = draw(st.integers(7, 30))
        level = draw(st.floats(-1e6, 1e6, allow_nan=False))
        spread = draw(st.floats(0.0, 1e4, allow_nan=False))
        seed = draw(st.integers(0, 2**16))
        values = level + spread * np.random.default_rng(seed).standard_normal(length)
        end = pd.Timestamp("2010-01-01") - pd.DateOffset(months=draw(st.integers(0, 5)))
        frames.append(pd.DataFrame({"unique_id": f"P{i}", "ds": pd.date_range(end=end, periods=length, freq="MS"), "y": values}))
    return pd.concat(frames, ignore_index=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(histories())
def test_any_valid_history_gives_finite_forecasts_and_proper_attention(plain_model, history):
    forecast = plain_model.predict(df=history)
    assert np.isfinite(forecast[["y_hat", "y_hat_q10", "y_hat_q90"]].to_numpy()).all()
    explanation = plain_model.explain(df=history, include_padding=True)
    sums = explanation.groupby(["unique_id", "step"])["weight"].sum()
    np.testing.assert_allclose(sums, 1.0, atol=1e-5)
    assert explanation.loc[explanation["padded"], "weight"].abs().max() == 0.0 if explanation["padded"].any() else True
    shuffled = plain_model.predict(df=history.sample(frac=1.0, random_state=0))
    pd.testing.assert_frame_equal(forecast, shuffled)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(histories(), st.integers(1, 12))
def test_appending_rows_to_another_series_leaves_a_forecast_unchanged(plain_model, history, extra):
    first = history["unique_id"].iloc[0]
    other = history[history["unique_id"] == first].tail(1)
    grown = pd.DataFrame(
        {
            "unique_id": "OTHER",
            "ds": pd.date_range(other["ds"].iloc[0], periods=extra + 20, freq="MS"),
            "y": np.linspace(0, 1e5, extra + 20),
        }
    )
    alone = plain_model.predict(df=history)
    together = plain_model.predict(df=pd.concat([history, grown]))
    # Equal up to float32 rounding: a different batch composition may take a different BLAS kernel path.
    pd.testing.assert_frame_equal(
        together[together["unique_id"] != "OTHER"].reset_index(drop=True), alone, check_exact=False, rtol=1e-4, atol=1e-4
    )


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 1000))
def test_fitting_random_panels_never_returns_nan(seed):
    df, _ = make_panel(n_series=4, length=30, seed=seed, missing_share=0.1, short_share=0.5, constant_share=0.3)
    forecast = fast_model(max_steps=5).fit(df).predict(future_df=future_frame(df, 6))
    assert np.isfinite(forecast["y_hat"]).all()
    # Each series' forecast stays within its history's range, widened by that range on both sides: a five-step
    # network and the partners cannot justify more, and a scaling or alignment slip lands far outside.
    history = df.groupby("unique_id")["y"].agg(["min", "max"])
    bounds = history.reindex(forecast["unique_id"]).to_numpy()
    width = np.maximum(bounds[:, 1] - bounds[:, 0], 1e-9)
    assert ((forecast["y_hat"] >= bounds[:, 0] - width) & (forecast["y_hat"] <= bounds[:, 1] + width)).all()
    flat = history.index[history["min"] == history["max"]]  # constant series: forecast as their constant
    got = forecast.set_index("unique_id").loc[lambda f: f.index.isin(flat), "y_hat"]
    np.testing.assert_array_equal(got.to_numpy(), history.loc[got.index, "min"].to_numpy())


# ----------------------------------------------------------------------------- training failures
def test_divergence_stops_with_an_error_and_leaves_the_model_unfitted(clean, monkeypatch):
    real = training.pinball_loss
    calls = {"n": 0}

    def exploding(*args, **kwargs):
        calls["n"] += 1
        loss = real(*args, **kwargs)
        return loss * float("nan") if calls["n"] >= 3 else loss

    monkeypatch.setattr(training, "pinball_loss", exploding)
    model = fast_model()
    with pytest.raises(TrainingDivergedError, match="learning_rate.*scaler"):
        model.fit(clean)
    assert not hasattr(model, "network_")


def _interrupt_after(monkeypatch, n_calls):
    real = training.pinball_loss
    calls = {"n": 0}

    def interrupting(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > n_calls:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "pinball_loss", interrupting)


def test_interrupt_before_any_checkpoint_leaves_the_model_unfitted(clean, monkeypatch):
    _interrupt_after(monkeypatch, 2)
    model = fast_model(max_steps=200)
    with pytest.raises(KeyboardInterrupt):
        model.fit(clean)
    assert not hasattr(model, "network_")


def test_interrupt_after_a_checkpoint_raises_and_keeps_no_partial_model(clean, monkeypatch):
    _interrupt_after(monkeypatch, 60)  # past the first evaluation at step 50: its weights are not kept either
    model = fast_model(max_steps=200)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            model.fit(clean)
    assert not hasattr(model, "network_") and not hasattr(model, "train_results_")
    assert not any("interrupted" in str(w.message) for w in caught)


# ----------------------------------------------------------------------------- reproducibility
def test_same_seed_gives_identical_forecasts_across_processes(clean, tmp_path):
    path = tmp_path / "data.csv"
    clean.to_csv(path, index=False)
    script = textwrap.dedent(f"""
        import sys, pandas as pd
        sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
        from conftest import fast_model
        df = pd.read_csv({str(path)!r}, parse_dates=["ds"])
        print(fast_model().fit(df).predict()["y_hat"].to_numpy().tobytes().hex())
    """)
    outputs = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout for _ in range(2)
    ]
    here = pd.read_csv(path, parse_dates=["ds"])
    assert outputs[0] == outputs[1] == fast_model().fit(here).predict()["y_hat"].to_numpy().tobytes().hex() + "\n"


def test_a_constant_series_is_forecast_as_its_constant_and_its_account_adds_up():
    """A series at 1000 every period among varying ones was forecast 2-4% off with an 80% interval of +-11%."""
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=6, length=48, seed=3, static=False, short_share=0.0, missing_share=0.0)
    df = df[["unique_id", "ds", "y"]].copy()
    df.loc[df["unique_id"] == "S001", "y"] = 1000.0
    model = fast_model().fit(df)
    out = model.predict()
    flat = out[out["unique_id"] == "S001"]
    levels = [c for c in out if c.startswith("y_hat")]
    assert (flat[levels].to_numpy() == 1000.0).all()
    assert (out[out["unique_id"] != "S001"]["y_hat"] != 1000.0).all()
    parts = model.explain()
    per_step = parts.groupby(["unique_id", "step"]).agg(
        contribution=("contribution", "sum"),
        **{c: (c, "first") for c in ("step_baseline", "step_covariates", "step_partners", "step_head")},
    )
    total = per_step.sum(axis=1).rename("total").reset_index()
    merged = total.merge(out.assign(step=out.groupby("unique_id").cumcount() + 1), on=["unique_id", "step"])
    assert np.allclose(merged["total"], merged["y_hat"], rtol=1e-6)


def _flat_series_levels(model, future: pd.DataFrame, df: pd.DataFrame | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """The forecast (warnings of unseen values aside) and series S001's quantile levels, one row per step."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = model.predict(df=df, future_df=future)
    levels = [c for c in out if c.startswith("y_hat")]
    return out, out[out["unique_id"] == "S001"][levels].to_numpy()


def test_a_constant_series_with_covariates_is_its_constant_where_its_history_held_the_horizons_covariates():
    """With a future-known covariate read, a series at 100 throughout was forecast at about 79 with a 10-90% interval
    from 0 to 200 (its scale falls back to its level); a promotion it stayed at 100 under moved it too."""
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=6, length=48, seed=3, static=False, short_share=0.0, missing_share=0.0)
    df = df[["unique_id", "ds", "y", "promo"]].copy()
    flat = df["unique_id"] == "S001"
    df.loc[flat, "y"] = 100.0
    df.loc[flat, "promo"] = np.where(np.arange(flat.sum()) % 5 == 0, 1.0, 0.0)  # promotions it stayed at 100 under
    model = fast_model(future_covariates=["promo"]).fit(df)
    future = future_frame(df, 6)
    future["promo"] = 0.0
    future.loc[future["unique_id"] == "S001", "promo"] = [0.0, 1.0, 0.0, 0.0, 2.0, 0.0]  # 2: never held
    out, constant = _flat_series_levels(model, future)  # the value 2 is named in a warning of its own
    assert (constant[[0, 1, 2, 3, 5]] == 100.0).all()
    assert (constant[4] != 100.0).any()  # a value its history never held: the model's forecast
    steps = model.explain(future_df=future, by="step")
    merged = steps.merge(out[["unique_id", "ds", "y_hat"]], on=["unique_id", "ds"], suffixes=("", "_forecast"))
    np.testing.assert_allclose(merged[list(steps.attrs["parts"])].sum(axis=1), merged["y_hat_forecast"], rtol=1e-6)


def test_a_series_whose_whole_encoder_window_is_missing_is_named_in_a_warning():
    """An outage as long as input_size was forecast from nothing (97 for a level of 340), silently."""
    from forecaster.datasets import make_panel
    from forecaster.model.inference import EmptyWindowWarning

    df, _ = make_panel(n_series=5, length=60, seed=4, static=False, short_share=0.0, missing_share=0.0)
    df = df[["unique_id", "ds", "y"]].copy()
    ends = df.groupby("unique_id")["ds"].transform("max")
    outage = (df["unique_id"] == "S003") & (df["ds"] > ends - pd.DateOffset(months=12))
    df.loc[outage, "y"] = np.nan
    model = fast_model().fit(df[~outage])
    # An outage at the end of the rows ends the series there: it is forecast from its last observation, said once.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        forecast = model.predict(df=df)
    messages = [str(w.message) for w in caught]
    assert any("hold no target in 1 series" in m and "'S003'" in m for m in messages)
    assert not [w for w in caught if issubclass(w.category, EmptyWindowWarning)]
    pd.testing.assert_frame_equal(forecast, model.predict(df=df[~outage]))
    # An outage that a backtest's cutoff falls in leaves that window nothing to read: named in a warning.
    longer, _ = make_panel(n_series=5, length=60, seed=4, static=False, short_share=0.0, missing_share=0.0)
    longer = longer[["unique_id", "ds", "y"]].copy()
    end = longer["ds"].max()
    cutoff = end - pd.DateOffset(months=6)
    inside = (longer["unique_id"] == "S003") & (longer["ds"] > cutoff - pd.DateOffset(months=12)) & (longer["ds"] <= cutoff)
    longer.loc[inside, "y"] = np.nan
    with pytest.warns(EmptyWindowWarning, match=r"1 series have no observed target in the 12 periods.*'S003'"):
        backtest(fast_model(), longer, n_windows=1, progress=False)


def test_predict_reads_a_future_frame_in_the_history_zone_and_refuses_naive_times_against_it():
    """Naive future times were read as UTC: a day-ahead schedule shifted by the zone's offset, silently."""
    rng = np.random.default_rng(0)
    hours = pd.date_range("2024-03-01", periods=24 * 20, freq="h", tz="Europe/Berlin")
    frames = []
    for uid in ("a", "b"):
        promo = (rng.random(len(hours)) < 0.2).astype(float)
        frames.append(
            pd.DataFrame({"unique_id": uid, "ds": hours, "y": 100 + 30 * promo + rng.normal(0, 1, len(hours)), "promo": promo})
        )
    df = pd.concat(frames, ignore_index=True)
    model = fast_model(horizon=6, input_size=24, future_covariates=["promo"]).fit(df)
    ahead = pd.date_range(hours[-1], periods=7, freq="h", tz="Europe/Berlin")[1:]
    future = pd.concat([pd.DataFrame({"unique_id": uid, "ds": ahead, "promo": [1.0, 0, 0, 1, 0, 0]}) for uid in ("a", "b")])
    zoned = model.predict(future_df=future)
    in_utc = model.predict(future_df=future.assign(ds=future["ds"].dt.tz_convert("UTC")))
    pd.testing.assert_frame_equal(zoned, in_utc)
    with pytest.raises(ValueError, match="`df` has time-zone-aware `ds` and `future_df` naive ones"):
        model.predict(future_df=future.assign(ds=future["ds"].dt.tz_localize(None)))


def test_a_static_covariate_retyped_as_a_whole_is_refused_by_name():
    """'A'/'B' read back as 1/2 made every series read the unseen-category input, silently; numbers -> labels
    crashed with "could not convert string to float: 'A'" naming no column."""
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=4, length=40, seed=5, static=False, short_share=0.0, missing_share=0.0)
    df = df[["unique_id", "ds", "y"]].copy()
    df["kind"] = np.where(df["unique_id"].isin(["S000", "S001"]), "A", "B")
    df["size"] = df["unique_id"].map({"S000": 1.0, "S001": 2.0, "S002": 3.0, "S003": 4.0})
    model = fast_model(static_covariates=["kind", "size"]).fit(df)
    numbered = df.assign(kind=np.where(df["kind"] == "A", 1, 2))
    with pytest.raises(ValueError, match=r"Static covariate `kind` was fitted with text labels .*'A'.* holds number values"):
        model.predict(df=numbered)
    with pytest.raises(ValueError, match=r"Static covariate `size` was fitted as a number but holds object values"):
        model.predict(df=df.assign(size=df["size"].map({1.0: "one", 2.0: "two", 3.0: "three", 4.0: "four"})))
    model.set_params(warm_start=True)
    with pytest.raises(ValueError, match=r"Static covariate `kind` was fitted with labels .* now holds numbers"):
        model.fit(numbered)
    # New labels of the same kind are new categories, as before.
    renamed = df.assign(kind=np.where(df["unique_id"] == "S003", "C", df["kind"]))
    assert model.predict(df=renamed)["y_hat"].notna().all()


def test_daily_readings_at_a_local_time_of_day_follow_the_local_calendar_across_a_dst_change():
    """Daily data stamped 17:30 in Europe/Berlin across the March change was refused ('Could not infer the frequency')."""
    rng = np.random.default_rng(1)
    days = pd.date_range("2024-02-01 17:30", periods=70, freq="D", tz="Europe/Berlin")
    df = pd.concat(
        [pd.DataFrame({"unique_id": uid, "ds": days, "y": 50 + rng.normal(0, 1, len(days)).cumsum()}) for uid in ("a", "b")]
    )
    model = fast_model(horizon=5, input_size=14).fit(df)
    out = model.predict()
    assert model.freq_ == "D"
    assert (out["ds"].dt.hour == 17).all() and (out["ds"].dt.minute == 30).all()
    assert list(out["ds"].iloc[:2]) == list(pd.date_range(days[-1], periods=3, freq="D")[1:])


def test_local_times_written_as_text_across_a_daylight_saving_change_are_read_as_instants():
    """Hourly times read from a CSV keep their offsets as text (+01:00 until 31 March, +02:00 after): pandas gave
    objects, and the fit failed with "Can only use .dt accessor with datetimelike values", naming nothing."""
    hours = pd.date_range("2024-03-25", periods=24 * 10, freq="h", tz="Europe/Berlin")
    y = 100 + 10 * np.sin(np.arange(len(hours)) * 2 * np.pi / 24)
    aware = pd.DataFrame({"unique_id": "a", "ds": hours, "y": y})
    text = aware.assign(ds=hours.astype(str))
    assert text["ds"].str[-6:].nunique() == 2
    with pytest.warns(UserWarning, match=r"Column `ds` holds timestamps with 2 UTC offsets \(\+01:00, \+02:00\)"):
        read = fast_model(horizon=6, input_size=24).fit(text).predict()
    expected = fast_model(horizon=6, input_size=24).fit(aware).predict()
    assert str(read["ds"].dt.tz) == "UTC"  # an offset is not a zone: the instants stay in UTC
    pd.testing.assert_series_equal(read["ds"], expected["ds"].dt.tz_convert("UTC"))
    np.testing.assert_array_equal(read["y_hat"].to_numpy(), expected["y_hat"].to_numpy())


def _zone_objects():
    import datetime

    import pytz
    from dateutil import tz as dateutil_tz

    return [
        dateutil_tz.gettz("Europe/London"),
        dateutil_tz.tzutc(),
        pytz.FixedOffset(330),
        datetime.timezone(datetime.timedelta(hours=2), "CEST"),
        datetime.timezone(datetime.timedelta(hours=1), "CET"),  # 'CET' reads back as a zone with daylight saving
    ]


@pytest.mark.parametrize("zone", _zone_objects(), ids=str)
def test_zones_whose_name_pandas_cannot_read_back_forecast_in_their_own_offsets(zone):
    """Zones kept as str(tz) ('tzutc()', 'pytz.FixedOffset(330)', 'CEST'): fit succeeded, then predict and backtest
    failed with UnknownTimeZoneError (and fit itself where a series ended early)."""
    try:
        ds = pd.date_range("2015-01-01", periods=42, freq="MS").tz_localize(zone)  # forecasts in summer: July 2018 on
    except AttributeError:  # pandas 2.3 reads no zone of python-dateutil 4 (its utcoffset is None at pandas' probe)
        import dateutil

        pytest.skip(f"pandas {pd.__version__} cannot localize to python-dateutil {dateutil.__version__}'s zone {zone}")
    df = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": ds, "y": 50.0 + 10 * i + np.arange(42)}) for i in range(3)])
    forecast = fast_model(horizon=3).fit(df).predict()
    later = pd.date_range("2018-07-01", periods=3, freq="MS").tz_localize(zone)
    assert all(stamp.utcoffset() == expected.utcoffset() for stamp, expected in zip(forecast["ds"][:3], later, strict=True))
    assert (forecast["ds"].dt.tz_localize(None).iloc[:3] == later.tz_localize(None)).all()
    ended = df.assign(y=df["y"].where(np.arange(len(df)) != len(df) - 1))
    with pytest.warns(UserWarning, match="ends"):
        fast_model(horizon=3).fit(ended)


def test_a_panel_read_with_the_arrow_backend_fits_and_saves(tmp_path):
    """From Parquet with dtype_backend='pyarrow', categorical ids came back dictionary-encoded and fit failed inside
    pandas' sort; Arrow-typed statics fitted, then save refused the model."""
    pytest.importorskip("pyarrow")
    ds = pd.date_range("2015-01-01", periods=36, freq="MS")
    df = pd.concat(
        pd.DataFrame(
            {"unique_id": f"s{i}", "ds": ds, "y": 50.0 + 10 * i + np.arange(36), "size": float(i % 2), "kind": "ab"[i % 2]}
        )
        for i in range(4)
    )
    df = df.astype({"unique_id": "category", "kind": "category"})
    df.to_parquet(tmp_path / "panel.parquet")
    arrow = pd.read_parquet(tmp_path / "panel.parquet", dtype_backend="pyarrow")
    assert isinstance(arrow["unique_id"].dtype, pd.ArrowDtype)
    kept = arrow.copy()
    model = fast_model(horizon=3, static_covariates=["size", "kind"]).fit(arrow)
    model.save(tmp_path / "model")
    pd.testing.assert_frame_equal(model.predict(), type(model).load(tmp_path / "model").predict())
    pd.testing.assert_frame_equal(arrow, kept)
    expected = fast_model(horizon=3, static_covariates=["size", "kind"]).fit(df).predict()
    np.testing.assert_allclose(model.predict()["y_hat"], expected["y_hat"])


def test_local_dates_written_as_text_across_a_daylight_saving_change_keep_their_calendar():
    """Weekly Sundays at local midnight written with +01:00 and +02:00 were read in UTC, alternating 23:00 and 22:00:
    the fit failed with 'no series is spaced as pandas can name', and freq='W-SUN' with 'not on the grid'."""
    sundays = pd.date_range("2022-01-02", periods=80, freq="W-SUN", tz="Europe/Berlin")
    y = 100 + 10 * np.sin(np.arange(80) * 2 * np.pi / 52)
    text = pd.DataFrame({"unique_id": "a", "ds": sundays.astype(str), "y": y})
    assert text["ds"].str[-6:].nunique() == 2
    with pytest.warns(UserWarning, match="read as the local date and time it names, without its offset") as caught:
        read = fast_model(horizon=4).fit(text).predict()
    assert {w.filename for w in caught if "UTC offsets" in str(w.message)} == {__file__}  # the user's line
    expected = fast_model(horizon=4).fit(text.assign(ds=sundays.tz_localize(None))).predict()
    pd.testing.assert_frame_equal(read, expected)
    assert (read["ds"].dt.dayofweek == 6).all() and (read["ds"].dt.hour == 0).all()
    # A future frame written the same way, its horizon on one side of the change (one offset), reads the same dates.
    with_promo = text.assign(promo=(np.arange(80) % 5 == 0).astype(float))
    model = fast_model(horizon=4, future_covariates=["promo"])
    with pytest.warns(UserWarning, match="without its offset"):
        model.fit(with_promo)
    later = pd.date_range(sundays[-1], periods=5, freq="W-SUN")[1:]
    future = pd.DataFrame({"unique_id": "a", "ds": later.astype(str), "promo": 0.0})
    assert future["ds"].str[-6:].nunique() == 1
    naive = future.assign(ds=later.tz_localize(None))
    pd.testing.assert_frame_equal(model.predict(future_df=future), model.predict(future_df=naive))


def test_dates_outside_pandas_span_are_refused_by_name():
    """A yearly history from 1640 (datetime64[s]) ended in a raw OutOfBoundsDatetime naming neither column nor span."""
    years = pd.Series(pd.date_range("1640-01-01", periods=40, freq="YS", unit="s"))
    df = pd.DataFrame({"unique_id": "a", "ds": years, "y": np.arange(40.0)})
    with pytest.raises(ValueError, match=r"Column `ds` holds timestamps from 1640-01-01 .* outside the span"):
        fast_model(horizon=3).fit(df)


def test_timestamps_in_several_zones_are_read_as_each_series_local_dates():
    """Stores in four zones (an object column of aware timestamps) were converted to UTC without a word, then refused
    as off the daily grid at a timestamp plainly on it."""
    zones = {"tokyo": "Asia/Tokyo", "london": "Europe/London", "ny": "America/New_York"}
    days = pd.date_range("2021-01-01", periods=60, freq="D")
    df = pd.concat(
        pd.DataFrame({"unique_id": k, "ds": pd.Series(list(days.tz_localize(z)), dtype=object), "y": np.arange(60.0)})
        for k, z in zones.items()
    )
    with pytest.warns(UserWarning, match="UTC offsets .* read as the local date"):
        forecast = fast_model(horizon=3).fit(df).predict()
    assert (forecast["ds"] == pd.Timestamp("2021-03-02")).sum() == 3


def test_an_arrow_time_column_in_a_zone_keeps_its_local_calendar(tmp_path):
    """An Arrow column's .dt gave UTC clock times: monthly Berlin data read as sub-daily, then refused as 'monthly'."""
    pytest.importorskip("pyarrow")
    ds = pd.date_range("2015-01-01", periods=36, freq="MS", tz="Europe/Berlin")
    df = pd.concat(pd.DataFrame({"unique_id": f"s{i}", "ds": ds, "y": 50.0 + 10 * i + np.arange(36)}) for i in range(3))
    df.to_parquet(tmp_path / "panel.parquet")
    arrow = pd.read_parquet(tmp_path / "panel.parquet", dtype_backend="pyarrow")
    assert isinstance(arrow["ds"].dtype, pd.ArrowDtype)
    pd.testing.assert_frame_equal(fast_model(horizon=3).fit(arrow).predict(), fast_model(horizon=3).fit(df).predict())


def test_a_future_frame_error_of_a_zoned_hourly_model_says_its_times_are_utc():
    """The error named 2024-04-12 22:00:00, a UTC time with the zone dropped, for data given in Berlin time."""
    hours = pd.date_range("2024-04-01", periods=24 * 6, freq="h", tz="Europe/Berlin")
    df = pd.DataFrame({"unique_id": "a", "ds": hours, "y": np.arange(144.0) % 24, "open": 1.0})
    model = fast_model(horizon=4, input_size=24, future_covariates=["open"]).fit(df)
    future = pd.DataFrame({"unique_id": "a", "ds": pd.date_range(hours[-1], periods=5, freq="h")[2:], "open": 1.0})
    with pytest.raises(ValueError, match=r"at 2024-04-06 22:00:00 .*times above are in UTC.*Europe/Berlin's offset"):
        model.predict(future_df=future)


def test_a_constant_series_under_a_moving_price_is_its_constant_within_the_prices_it_held():
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=4, length=48, seed=3, static=False, short_share=0.0, missing_share=0.0)
    rng = np.random.default_rng(0)
    df = df[["unique_id", "ds", "y"]].assign(price=np.round(rng.uniform(9.0, 11.0, len(df)), 2))
    flat = df["unique_id"] == "S001"
    df.loc[flat, "y"] = 100.0
    df.loc[flat, "price"] = np.resize([9.5, 10.0, 10.5, 11.0], int(flat.sum()))  # its shelf prices: four of them
    model = fast_model(future_covariates=["price"]).fit(df)
    future = future_frame(df, 6).assign(price=[10.0, 9.5, 10.25, 10.0, 25.0, 11.0] * 4)  # 10.25 within, 25 outside
    _, constant = _flat_series_levels(model, future)  # the price 25 is named in a warning of its own
    assert (constant[[0, 1, 2, 3, 5]] == 100.0).all()
    assert (constant[4] != 100.0).any()
    # Read the same way whatever else is forecast with it: the fit's record says the price is a measurement.
    _, alone = _flat_series_levels(model, future[future["unique_id"] == "S001"], df[flat])
    assert (alone[[0, 1, 2, 3, 5]] == 100.0).all()
    np.testing.assert_allclose(alone[4], constant[4], rtol=1e-4)  # the model's own forecast (batch rounding aside)
