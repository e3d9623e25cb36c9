"""Plots: what each figure draws is the data it was given (lines, interval bands, heatmap cells, bars)."""

import io
import warnings

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame
from matplotlib.collections import PolyCollection, QuadMesh

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel
from forecaster.plots import (
    CAUTION,
    GRADIENT_SHARES,
    OBSERVATION_SHARES,
    SHARES,
    attention_diagnostics,
    attention_profile,
    plot_attention,
    plot_attention_profile,
    plot_forecast,
)


def _png_bytes(fig) -> int:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return len(buffer.getvalue())


def _line(ax, label):
    lines = [line for line in ax.lines if line.get_label() == label]
    assert len(lines) == 1, f"expected one {label!r} line, found {[line.get_label() for line in ax.lines]}"
    return lines[0]


def _labels(ax) -> list[str]:
    return [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]


def _assert_line(line, times, values):
    """The line's points are (times, values): x in matplotlib date numbers, y as given (NaN where missing)."""
    xy = line.get_xydata()
    np.testing.assert_allclose(xy[:, 0], mdates.date2num(pd.DatetimeIndex(times).to_pydatetime()))
    np.testing.assert_allclose(xy[:, 1], np.asarray(values, dtype=float))


def _band(ax) -> PolyCollection:
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1, f"expected one interval band, found {ax.collections}"
    return bands[0]


def _assert_band(band, times, low, high):
    """At every time the band's polygon runs from ``low`` to ``high`` and it has no vertex elsewhere."""
    vertices = band.get_paths()[0].vertices
    x = mdates.date2num(pd.DatetimeIndex(times).to_pydatetime())
    assert np.isin(vertices[:, 0], x).all(), "the band has vertices outside the forecast times"
    for xi, lo, hi in zip(x, np.asarray(low, float), np.asarray(high, float), strict=True):
        ys = vertices[vertices[:, 0] == xi, 1]
        assert ys.min() == pytest.approx(lo) and ys.max() == pytest.approx(hi)


def _weights_grid(explanation: pd.DataFrame, uid) -> pd.DataFrame:
    """Attention weights of one series, horizon step x attended history time, by hand."""
    ex = explanation[explanation["unique_id"] == uid]
    steps = np.sort(ex["step"].unique())
    times = np.sort(ex["ds_history"].unique())
    grid = pd.DataFrame(np.nan, index=steps, columns=pd.DatetimeIndex(times))
    for row in ex.itertuples():
        grid.loc[row.step, row.ds_history] = row.weight
    assert not grid.isna().any().any()
    return grid


def _mesh(ax) -> QuadMesh:
    meshes = [c for c in ax.collections if isinstance(c, QuadMesh)]
    assert len(meshes) == 1
    return meshes[0]


@pytest.fixture(scope="module")
def attention_model(panel):
    """No future covariates, and an encoder window longer than the short series (so they are padded)."""
    df, _ = panel
    return fast_model(input_size=40).fit(df)


@pytest.fixture(scope="module")
def seasonal_model():
    df, _ = make_panel(n_series=24, length=84, seed=5, noise=0.03, future_effect=0.0, trend=0.2, short_share=0.2)
    # hidden_size=32: with 64 units the encoder states carry so much of the history that the
    # attention stays nearly uniform after this short training. Without the linear skip and the
    # decomposition inputs, attention alone carries the seasonal pattern, so its profile is sharp.
    model = Seq2SeqForecaster(
        horizon=12, hidden_size=32, linear_skip=False, seasonal_profile=False, trend_line=False, max_steps=250, progress=False
    )
    return model.fit(df), df


# ---------------------------------------------------------------- plot_forecast


def test_plot_forecast_draws_the_history_the_forecast_and_its_quantile_band(fitted, panel):
    df, _ = panel
    forecasts = fitted.predict(future_df=future_frame(df, 6))
    ids = list(forecasts["unique_id"].unique()[:2])
    fig = plot_forecast(forecasts, df, unique_ids=ids)
    assert len(fig.axes) == 2
    for ax, uid in zip(fig.axes, ids, strict=True):
        fc = forecasts[forecasts["unique_id"] == uid]
        series = df[df["unique_id"] == uid].sort_values("ds")
        past = series[series["ds"] < fc["ds"].min()].tail(4 * 6)  # the default: four horizons of history
        assert len(past) == 24
        assert ax.get_title(loc="left") == uid
        assert _labels(ax) == ["history", "forecast"]  # the forecast starts after the data: no actuals
        _assert_line(_line(ax, "history"), past["ds"], past["y"])
        _assert_line(_line(ax, "forecast"), fc["ds"], fc["y_hat"])
        band = _band(ax)
        assert band.get_label() == "q10-q90 interval"
        _assert_band(band, fc["ds"], fc["y_hat_q10"], fc["y_hat_q90"])
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["history", "forecast", "q10-q90 interval"]
    assert fig.axes[1].get_legend() is None
    assert _png_bytes(fig) > 5000


@pytest.fixture(scope="module")
def backtest_frames():
    """Two series and a backtest-like frame: two cutoffs, seq2seq quantiles and a baseline with an interval."""
    ds = pd.date_range("2001-01-01", periods=30, freq="MS")
    df = pd.concat(
        [
            pd.DataFrame({"unique_id": "a", "ds": ds, "y": np.arange(30.0) ** 1.5}),
            pd.DataFrame({"unique_id": "b", "ds": ds[:26], "y": 100 - np.arange(26.0)}),  # ends inside the horizon
        ],
        ignore_index=True,
    )
    rows = []
    for uid in ("a", "b"):
        for cutoff in (ds[21], ds[23]):
            for step in range(1, 5):
                t = cutoff + step * ds.freq
                base = 1000.0 * (uid == "b") + 10 * step + (cutoff == ds[23]) * 500
                rows.append(
                    {
                        "unique_id": uid,
                        "cutoff": cutoff,
                        "ds": t,
                        "seq2seq": base,
                        "seq2seq_q10": base - 2,
                        "seq2seq_q5": base - 3,  # sorts before q10 only as a number
                        "seq2seq_q95": base + 4,
                        "auto_ets": base + 1,
                        "auto_ets_lo": base - 7,
                        "auto_ets_hi": base + 8,
                    }
                )
    return df, pd.DataFrame(rows)


def test_plot_forecast_of_frames_under_other_names_says_which_names_to_pass(fitted, panel):
    """A forecast under the user's names failed with a bare KeyError: 'unique_id'."""
    df, _ = panel
    names = {"unique_id": "sku", "ds": "day", "y": "units"}
    forecasts = fitted.predict(future_df=future_frame(df, 6)).rename(columns=names)
    with pytest.raises(ValueError, match=r"`unique_id`, `ds`, `y` missing from `forecasts` or `df`\. Pass id_col="):
        plot_forecast(forecasts, df.rename(columns=names))
    fig = plot_forecast(forecasts, df.rename(columns=names), id_col="sku", time_col="day", target_col="units", max_series=1)
    assert len(fig.axes) == 1


def test_plot_forecast_of_a_backtest_draws_the_last_cutoff_its_actuals_and_the_widest_quantiles(backtest_frames):
    df, forecasts = backtest_frames
    fig = plot_forecast(forecasts, df, history=5)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["a", "b"]
    last = forecasts[forecasts["cutoff"] == forecasts["cutoff"].max()]
    for ax, uid in zip(fig.axes, ["a", "b"], strict=True):
        fc = last[last["unique_id"] == uid]
        series = df[df["unique_id"] == uid]
        origin, end = fc["ds"].min(), fc["ds"].max()
        past = series[series["ds"] < origin].tail(5)
        actual = series[(series["ds"] >= origin) & (series["ds"] <= end)]
        assert len(actual) == {"a": 4, "b": 2}[uid]
        assert _labels(ax) == ["history", "actual", "forecast", "auto_ets"]  # the frame's baseline, drawn by default
        _assert_line(_line(ax, "history"), past["ds"], past["y"])
        _assert_line(_line(ax, "actual"), actual["ds"], actual["y"])
        assert _line(ax, "actual").get_linestyle() == "--"
        _assert_line(_line(ax, "forecast"), fc["ds"], fc["seq2seq"])
        _assert_line(_line(ax, "auto_ets"), fc["ds"], fc["auto_ets"])
        band = _band(ax)
        assert band.get_label() == "q5-q95 interval"
        _assert_band(band, fc["ds"], fc["seq2seq_q5"], fc["seq2seq_q95"])


def test_plot_forecast_of_a_baseline_draws_its_point_and_lo_hi_interval(backtest_frames):
    df, forecasts = backtest_frames
    fig = plot_forecast(forecasts, df, unique_ids=["b"], model="auto_ets")
    (ax,) = fig.axes
    fc = forecasts[(forecasts["unique_id"] == "b") & (forecasts["cutoff"] == forecasts["cutoff"].max())]
    _assert_line(_line(ax, "forecast"), fc["ds"], fc["auto_ets"])
    band = _band(ax)
    assert band.get_label() == "lo-hi interval"
    _assert_band(band, fc["ds"], fc["auto_ets_lo"], fc["auto_ets_hi"])
    plt.close(fig)


def test_plot_forecast_without_interval_columns_draws_no_band(backtest_frames):
    df, forecasts = backtest_frames
    fig = plot_forecast(forecasts[["unique_id", "cutoff", "ds", "seq2seq"]], df, unique_ids=["a"])
    assert not [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    plt.close(fig)


def test_plot_forecast_rejects_a_series_without_forecasts(backtest_frames):
    df, forecasts = backtest_frames
    with pytest.raises(ValueError, match="no rows for series 'zz'"):
        plot_forecast(forecasts, df, unique_ids=["zz"])
    plt.close("all")


# ---------------------------------------------------------------- plot_attention


def _assert_attention_panel(fig, explanation, uid, history, forecast):
    """Heatmap cells = the weights (step x history time), padding masked and hatched; top = history and forecast."""
    top, bottom = fig.axes[:2]
    expected = _weights_grid(explanation, uid)
    ex = explanation[explanation["unique_id"] == uid]
    padded = ex.groupby("ds_history")["padded"].first().reindex(expected.columns).to_numpy()

    mesh = _mesh(bottom)
    values = mesh.get_array()
    assert values.shape == expected.shape == (6, 40)
    np.testing.assert_array_equal(np.ma.getmaskarray(values), np.broadcast_to(padded, expected.shape))
    np.testing.assert_allclose(values.filled(np.nan)[:, ~padded], expected.to_numpy()[:, ~padded], rtol=1e-6)
    # each column of cells sits on its history time, each row on its horizon step
    corners = mesh.get_coordinates()
    x_edges, y_edges = corners[0, :, 0], corners[:, 0, 1]
    centres = mdates.date2num(expected.columns.to_pydatetime())
    assert (x_edges[:-1] < centres).all() and (centres < x_edges[1:]).all()
    np.testing.assert_allclose(y_edges, np.arange(0.5, 7.5))
    assert bottom.yaxis_inverted()  # step 1 on top
    # padded columns are hatched grey, one span each, and only they
    spans = sorted((p.get_x(), p.get_x() + p.get_width()) for p in bottom.patches if p.get_hatch() == "///")
    np.testing.assert_allclose(spans, [(x_edges[i], x_edges[i + 1]) for i in np.flatnonzero(padded)])

    series = history[history["unique_id"] == uid].sort_values("ds")
    series = series[series["ds"] >= expected.columns[0]]  # the window the map covers: the y-axis is scaled to it
    _assert_line(_line(top, "history"), series["ds"], series["y"])
    fc = forecast[forecast["unique_id"] == uid]
    _assert_line(_line(top, "forecast"), fc["ds"], fc["y_hat"])
    _assert_band(_band(top), fc["ds"], fc["y_hat_q10"], fc["y_hat_q90"])
    assert mesh.colorbar.ax.get_ylabel() == "attention weight"  # the colour bar, beside the heatmap
    notes = [" ".join(text.get_text().split()) for text in fig.texts]  # the note is wrapped to the figure's width
    assert any(note in (CAUTION, GRADIENT_SHARES, OBSERVATION_SHARES, SHARES) for note in notes)
    return padded


def test_plot_attention_from_a_model_draws_its_weights_and_hatches_the_padding(attention_model, panel):
    df, _ = panel
    short = df.groupby("unique_id").size().idxmin()
    one = df[df["unique_id"] == short].assign(y=lambda d: 1.5 * d["y"])  # a new history, not the training one
    fig = plot_attention(attention_model, pd.concat([one, df[df["unique_id"] != short]]), unique_id=short)
    explanation = attention_model.explain(df=one, include_padding=True)
    forecast = attention_model.predict(df=one)
    padded = _assert_attention_panel(fig, explanation, short, one, forecast)
    assert padded.sum() == 40 - len(one)  # the short series fills only the end of the window
    assert not padded[-len(one) :].any()
    assert explanation.loc[explanation["padded"], "weight"].max() == 0.0
    texts = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert texts == ["padding (no data)"]
    assert _png_bytes(fig) > 5000


def test_plot_attention_from_an_explain_frame_draws_that_frame_and_the_actuals(attention_model, panel):
    df, _ = panel
    explanation = attention_model.explain(df=df, include_padding=True)
    forecasts = attention_model.predict(df=df)
    short = df.groupby("unique_id").size().idxmin()
    long = df.groupby("unique_id").size().idxmax()
    for uid in (short, long):
        fc = forecasts[forecasts["unique_id"] == uid]
        actuals = pd.DataFrame({"unique_id": uid, "ds": fc["ds"].to_numpy()[:4], "y": [1.0, 2.0, 3.0, 4.0]})
        fig = plot_attention(explanation, df=df, unique_id=uid, forecasts=forecasts, actuals=actuals)
        padded = _assert_attention_panel(fig, explanation, uid, df, forecasts)
        assert padded.any() == (uid == short)
        legend = fig.axes[1].get_legend()  # padding named where there is some (missing targets may be named too)
        labels = [] if legend is None else [text.get_text() for text in legend.get_texts()]
        assert ("padding (no data)" in labels) == (uid == short)
        _assert_line(_line(fig.axes[0], "actual"), actuals["ds"], actuals["y"])
        plt.close(fig)


def test_plot_attention_defaults_to_the_first_series_and_rejects_an_unknown_one(attention_model, panel):
    df, _ = panel
    explanation = attention_model.explain(df=df, include_padding=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "No artists with labels found to put in legend"
        fig = plot_attention(explanation)
    first = explanation["unique_id"].iloc[0]
    assert fig.axes[0].get_title(loc="left").startswith(f"{first}:")
    assert _labels(fig.axes[0]) == [] and fig.axes[0].get_legend() is None  # no history or forecast to draw
    np.testing.assert_allclose(_mesh(fig.axes[1]).get_array().filled(0.0), _weights_grid(explanation, first).to_numpy())
    plt.close(fig)
    with pytest.raises(ValueError, match="`unique_id` 'nope' names no series of the explanation"):
        plot_attention(explanation, unique_id="nope")
    plt.close("all")


# ---------------------------------------------------------------- attention_profile and its plot


@pytest.fixture(scope="module")
def tiny_explanation():
    """Two series, two steps, three attended periods; series b's oldest period is padding."""
    rows = []
    weights = {"a": [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], "b": [[0.0, 0.25, 0.75], [0.0, 1.0, 0.0]]}
    for uid, by_step in weights.items():
        for step, row in enumerate(by_step, start=1):
            for position, weight in enumerate(row):
                lag = 2 - position
                rows.append(
                    {
                        "unique_id": uid,
                        "ds": pd.Timestamp("2001-04-01") + pd.DateOffset(months=step - 1),
                        "step": step,
                        "ds_history": pd.Timestamp("2001-01-01") + pd.DateOffset(months=position),
                        "lag": lag,
                        "weight": weight,
                        "padded": uid == "b" and position == 0,
                    }
                )
    return pd.DataFrame(rows)


def test_attention_profile_by_origin_lag_by_hand(tiny_explanation):
    profile = attention_profile(tiny_explanation, relative_to="origin")
    # per series, mean over steps: a -> lag0 0.3, lag1 0.3, lag2 0.4; b -> lag0 0.375, lag1 0.625 (lag2 is padding)
    assert list(profile.index) == [0, 1, 2]
    np.testing.assert_allclose(profile["mean"], [(0.3 + 0.375) / 2, (0.3 + 0.625) / 2, 0.4])
    np.testing.assert_allclose(profile["q25"], [0.3 + 0.25 * 0.075, 0.3 + 0.25 * 0.325, 0.4])
    np.testing.assert_allclose(profile["q75"], [0.3 + 0.75 * 0.075, 0.3 + 0.75 * 0.325, 0.4])


def test_attention_profile_by_target_lag_by_hand(tiny_explanation):
    profile = attention_profile(tiny_explanation, relative_to="target")
    # lag + step: a -> 1: 0.5, 2: (0.3 + 0.1) / 2, 3: (0.2 + 0.3) / 2, 4: 0.6; b -> 1: 0.75, 2: 0.125, 3: 1.0
    assert list(profile.index) == [1, 2, 3, 4]
    np.testing.assert_allclose(profile["mean"], [0.625, 0.1625, 0.625, 0.6])
    with pytest.raises(ValueError, match="relative_to"):
        attention_profile(tiny_explanation, relative_to="season")


@pytest.mark.parametrize("relative_to", ["origin", "target"])
def test_attention_profile_is_the_mean_over_series_of_each_series_mean_by_lag(attention_model, relative_to):
    explanation = attention_model.explain(include_padding=True)
    profile = attention_profile(explanation, relative_to=relative_to)
    by_series: dict = {}
    for row in explanation[~explanation["padded"]].itertuples():
        lag = row.lag + (row.step if relative_to == "target" else 0)
        by_series.setdefault(lag, {}).setdefault(row.unique_id, []).append(row.weight)
    assert list(profile.index) == sorted(by_series)
    for lag, series in by_series.items():
        means = [np.mean(weights) for weights in series.values()]
        assert profile.loc[lag, "mean"] == pytest.approx(np.mean(means))
        assert profile.loc[lag, "q25"] == pytest.approx(np.quantile(means, 0.25))
        assert profile.loc[lag, "q75"] == pytest.approx(np.quantile(means, 0.75))


@pytest.mark.parametrize("relative_to", ["origin", "target"])
def test_plot_attention_profile_draws_the_profile_and_season_multiples(attention_model, relative_to):
    explanation = attention_model.explain(include_padding=True)
    profile = attention_profile(explanation, relative_to=relative_to)
    fig = plot_attention_profile(explanation, season_length=12, relative_to=relative_to)
    (ax,) = fig.axes
    mean = _line(ax, "mean weight")
    np.testing.assert_allclose(mean.get_xdata(), profile.index.to_numpy())
    np.testing.assert_allclose(mean.get_ydata(), profile["mean"].to_numpy())
    band = _band(ax)
    assert band.get_label() == "25-75% of series"
    vertices = band.get_paths()[0].vertices
    for lag, row in profile.iterrows():
        ys = vertices[vertices[:, 0] == lag, 1]
        assert ys.min() == pytest.approx(row["q25"]) and ys.max() == pytest.approx(row["q75"])
    marks = sorted(line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":" and len(line.get_xdata()))
    assert marks == list(range(0, int(profile.index.max()) + 1, 12))
    assert "multiples of the season (12)" in [t.get_text() for t in ax.get_legend().get_texts()]
    where = "the forecast origin" if relative_to == "origin" else "the target period"
    assert ax.get_xlabel() == f"lag (periods before {where})"
    plt.close(fig)


def test_plot_attention_profile_without_a_season_draws_no_marks(tiny_explanation):
    fig = plot_attention_profile(tiny_explanation, relative_to="origin")
    (ax,) = fig.axes
    assert _labels(ax) == ["mean weight"]
    np.testing.assert_allclose(_line(ax, "mean weight").get_ydata(), [0.3375, 0.4625, 0.4])
    plt.close(fig)


def test_profile_peaks_at_a_season_multiple_after_training(seasonal_model):
    model, df = seasonal_model
    explanation = model.explain(include_padding=True)
    profile = attention_profile(explanation, relative_to="target")
    assert profile["mean"].idxmax() % 12 == 0
    fig = plot_attention_profile(explanation, season_length=12, relative_to="target")
    peak = _line(fig.axes[0], "mean weight")
    assert peak.get_xdata()[np.argmax(peak.get_ydata())] == profile["mean"].idxmax()
    assert _png_bytes(fig) > 5000


# ---------------------------------------------------------------- attention_diagnostics


def test_attention_diagnostics_by_hand(tiny_explanation):
    diagnostics = attention_diagnostics(tiny_explanation, season_length=2)

    def entropy(ws):
        ws = np.asarray([w for w in ws if w > 0])
        return float(-(ws * np.log(ws)).sum())

    per = {  # (series, step): entropy, normalised entropy, weight on lags 0 and 1
        ("a", 1): (entropy([0.2, 0.3, 0.5]), entropy([0.2, 0.3, 0.5]) / np.log(3), 0.8),
        ("a", 2): (entropy([0.6, 0.3, 0.1]), entropy([0.6, 0.3, 0.1]) / np.log(3), 0.4),
        ("b", 1): (entropy([0.25, 0.75]), entropy([0.25, 0.75]) / np.log(2), 1.0),
        ("b", 2): (0.0, 0.0, 1.0),
    }
    values = np.array(list(per.values()))
    assert diagnostics.padded_mass == 0.0
    assert diagnostics.mean_entropy == pytest.approx(values[:, 0].mean())
    assert diagnostics.normalised_entropy == pytest.approx(values[:, 1].mean())
    assert diagnostics.last_season_share == pytest.approx(values[:, 2].mean())
    assert list(diagnostics.by_step.index) == [1, 2]
    np.testing.assert_allclose(diagnostics.by_step["last_season_share"], [0.9, 0.7])
    leaky = tiny_explanation.assign(weight=np.where(tiny_explanation["padded"], 0.05, tiny_explanation["weight"]))
    assert attention_diagnostics(leaky, 2).padded_mass == pytest.approx(0.05)
    assert np.isnan(attention_diagnostics(tiny_explanation.drop(columns="padded"), 2).padded_mass)


def test_diagnostics_report_zero_padding_mass_entropy_and_recent_share(seasonal_model):
    model, df = seasonal_model
    diagnostics = attention_diagnostics(model.explain(include_padding=True), 12)
    assert diagnostics.padded_mass == 0.0
    assert 0.0 < diagnostics.normalised_entropy <= 1.0
    assert 0.0 < diagnostics.last_season_share < 1.0
    assert list(diagnostics.by_step.index) == list(range(1, 13))
    assert np.isnan(attention_diagnostics(model.explain(), 12).padded_mass)


def test_plot_helpers_read_the_models_own_id_and_time_columns():
    """plot_attention_profile failed with KeyError 'unique_id' for a model fitted with id_col='region'."""
    from conftest import fast_model

    from forecaster.datasets import make_panel
    from forecaster.plots import forecast_sources, plot_attention_profile

    df, _ = make_panel(n_series=3, length=40, seed=2, static=False, short_share=0.0, missing_share=0.0)
    df = df[["unique_id", "ds", "y"]].rename(columns={"unique_id": "region", "ds": "month", "y": "sales"})
    model = fast_model(id_col="region", time_col="month", target_col="sales").fit(df)
    explanation = model.explain()
    fig = plot_attention_profile(explanation, season_length=12)
    assert "target period" in fig.axes[0].get_xlabel()  # the default reads lags from the target
    points, parts = forecast_sources(explanation[explanation["region"] == "S000"])
    assert len(points) and np.isclose(points.sum() + sum(v for k, v in parts.items() if k != "forecast"), parts["forecast"])


def test_a_low_occlusion_ratio_gets_a_warning_in_words_that_do_not_reassure():
    from forecaster.cli import _occlusion_words
    from forecaster.evaluation.report_tables import occlusion_warning

    assert occlusion_warning(2.5) is None and occlusion_warning(None) is None
    assert "**Warning:**" in occlusion_warning(1.4) and "1.40 times" in occlusion_warning(1.4)
    assert "less than those it weighs least" in occlusion_warning(0.8)
    assert _occlusion_words(0.79).startswith("WARNING") and "not an explanation" in _occlusion_words(0.79)
    assert _occlusion_words(1.5).startswith("WARNING") and not _occlusion_words(3.0).startswith("WARNING")


def test_plot_attention_of_one_series_with_the_whole_future_and_no_history_reads_that_series_training_tail(panel):
    """``unique_id`` and a ``future_df`` of every series, ``df`` left out: the future was cut to the one series while the
    history was every series', and the call failed on another series' missing covariates."""
    df, _ = panel
    model = fast_model(future_covariates=["promo"], max_steps=5).fit(df)
    future = future_frame(df, 6, value=1.0)
    uid = df["unique_id"].iloc[-1]
    fig = plot_attention(model, unique_id=uid, future_df=future)
    mine = future[future["unique_id"] == uid]
    expected = model.predict(df=model.history_[model.history_["unique_id"] == uid], future_df=mine)
    _assert_line(_line(fig.axes[0], "forecast"), expected["ds"], expected["y_hat"])
    plt.close(fig)


def test_an_observation_between_gaps_is_drawn_as_a_point():
    """Actuals and history were lines only: an observation with both neighbours missing was not drawn at all."""
    import matplotlib

    matplotlib.use("Agg")
    from forecaster.plots import plot_forecast

    ds = pd.date_range("2003-01-01", periods=12, freq="MS")
    y = [1, np.nan, 3, np.nan, 5, 6, 7, np.nan, 9, 10, 11, 12.0]  # 2003-03 alone in the history, 2003-07 alone after it
    df = pd.DataFrame({"unique_id": "S1", "ds": ds, "y": y})
    fc = pd.DataFrame({"unique_id": "S1", "ds": ds[6:], "seq2seq": 7.0, "seq2seq_q10": 5.0, "seq2seq_q90": 9.0})
    fig = plot_forecast(fc, df, unique_ids=["S1"], model="seq2seq")
    drawn = [
        (pd.Timestamp(matplotlib.dates.num2date(x)).tz_localize(None), y)
        for line in fig.axes[0].get_lines()
        if line.get_marker() not in ("None", "", None)
        for x, y in zip(matplotlib.dates.date2num(line.get_xdata()), line.get_ydata(), strict=True)
    ]
    assert (pd.Timestamp("2003-03-01"), 3.0) in drawn and (pd.Timestamp("2003-07-01"), 7.0) in drawn
    assert (pd.Timestamp("2003-01-01"), 1.0) in drawn  # the first point: no neighbour before, none after


def test_plot_attention_from_the_stored_history_of_a_model_fitted_in_a_time_zone(tmp_path):
    """The stored history is naive (UTC for hourly data): plot_attention without df, and `forecaster explain` without
    --data, failed with "`future_df` has time-zone-aware `ds` and `df` naive ones"."""
    import matplotlib

    matplotlib.use("Agg")
    from conftest import fast_model

    from forecaster.cli import main
    from forecaster.model.fitted import history_in_zone
    from forecaster.plots import plot_attention

    hours = pd.date_range("2024-03-25", periods=24 * 10, freq="h", tz="Europe/Berlin")
    df = pd.DataFrame({"unique_id": "a", "ds": hours, "y": 10 + np.sin(np.arange(240) * 2 * np.pi / 24), "open": 1.0})
    model = fast_model(horizon=6, input_size=24, future_covariates=["open"]).fit(df)
    future = pd.DataFrame({"unique_id": "a", "ds": pd.date_range(hours[-1], periods=7, freq="h")[1:], "open": 1.0})
    assert str(history_in_zone(model)["ds"].dt.tz) == "Europe/Berlin"
    assert plot_attention(model, unique_id="a", future_df=future) is not None
    model.save(tmp_path / "model")
    future.to_csv(tmp_path / "future.csv", index=False)
    assert main(["explain", str(tmp_path / "model"), "--future", str(tmp_path / "future.csv"), "--out", str(tmp_path / "p")]) == 0


def test_attention_diagnostics_reads_a_models_own_id_column_as_the_docs_call_it():
    """Called as docs/attention.md shows it, on a model with id_col='queue', it failed with KeyError: 'unique_id'."""
    from conftest import fast_model

    from forecaster.datasets import make_panel
    from forecaster.plots import attention_diagnostics

    df, _ = make_panel(n_series=3, length=36, short_share=0.0, missing_share=0.0, static=False)
    df = df[["unique_id", "ds", "y"]].rename(columns={"unique_id": "queue"})
    model = fast_model(id_col="queue").fit(df)
    explanation = model.explain(include_padding=True)
    found = attention_diagnostics(explanation, 12, model=model, df=df)
    assert np.isfinite(found.occlusion_ratio) and 0 <= found.padded_mass <= 1


def test_the_date_labels_of_a_daily_forecast_do_not_overlap():
    """Five months of days drawn with full dates ran together ("2024-10-012024-10-15")."""
    days = pd.date_range("2024-06-01", periods=140, freq="D")
    df = pd.DataFrame({"unique_id": "a", "ds": days[:112], "y": np.arange(112.0)})
    forecasts = pd.DataFrame({"unique_id": "a", "ds": days[112:], "y_hat": np.arange(28.0)})
    fig = plot_forecast(forecasts, df)
    fig.canvas.draw()
    boxes = [label.get_window_extent() for label in fig.axes[0].get_xticklabels() if label.get_text()]
    assert len(boxes) >= 3 and not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False))


def test_rows_past_the_data_draw_no_actual_and_daily_maps_get_dates_that_fit(tmp_path):
    """Trailing rows without a target put an "actual" entry in the legend with nothing drawn; the attention plot's
    daily dates ran together ("2023-04-2029")."""
    rng = np.random.default_rng(0)
    ds = pd.date_range("2023-01-02", periods=90, freq="D")
    df = pd.concat(
        [
            pd.DataFrame({"unique_id": f"d{i}", "ds": ds, "y": 20 + 5 * np.sin(np.arange(90)) + rng.normal(0, 1, 90)})
            for i in range(3)
        ]
    )
    model = fast_model(horizon=7, input_size=28).fit(df)
    explanation = model.explain(include_padding=True)
    after = pd.DataFrame({"unique_id": "d0", "ds": pd.date_range(ds[-1], periods=8, freq="D")[1:], "y": np.nan})
    fig = plot_attention(explanation, df=df, unique_id="d0", forecasts=model.predict(), actuals=after)
    labels = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    assert "actual" not in labels and "forecast" in labels
    assert all(isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter) for ax in fig.axes[:3])
    drawn = plot_attention(explanation, df=df, unique_id="d0", forecasts=model.predict(), actuals=after.assign(y=1.0))
    assert "actual" in [text.get_text() for text in drawn.axes[0].get_legend().get_texts()]


def test_a_gap_inside_the_actuals_stays_a_break_in_the_line():
    from forecaster.plots.forecast import draw_forecast

    ds = pd.date_range("2024-01-01", periods=6, freq="D")
    actual = pd.DataFrame({"ds": ds, "y": [1.0, 2.0, np.nan, 4.0, np.nan, np.nan]})
    fig, ax = plt.subplots()
    draw_forecast(ax, None, None, actual, "y_hat", None, None, "ds", "y")
    (line,) = [line for line in ax.get_lines() if line.get_label() == "actual"]
    assert len(line.get_ydata()) == 4 and np.isnan(line.get_ydata()[2])  # the gap kept, the rows past the data dropped
    plt.close(fig)


def test_the_map_marks_the_periods_whose_target_is_missing():
    """Missing targets inside the window drew as ordinary columns of the map, as if observed."""
    df, _ = make_panel(n_series=4, length=48, seed=3, static=False, missing_share=0.0, short_share=0.0)
    df = df[["unique_id", "ds", "y"]].reset_index(drop=True)
    gaps = df.index[(df["unique_id"] == "S000")][-10:-7]  # three months inside the last window
    df.loc[gaps, "y"] = np.nan
    model = fast_model(horizon=6, input_size=24).fit(df)
    heatmap = plot_attention(model, unique_id="S000").axes[1]
    assert "missing target (no share)" in [text.get_text() for text in heatmap.get_legend().get_texts()]
    dotted = [patch for patch in heatmap.patches if patch.get_hatch() == ".."]
    assert len(dotted) == 3
    assert plot_attention(model, unique_id="S001").axes[1].get_legend() is None  # nothing missing: no mark, no legend


def test_the_map_of_a_model_says_each_warning_about_its_inputs_once():
    """plot_attention(model, df, ...) validated df twice (explain, then predict): every warning came twice."""
    df, _ = make_panel(n_series=3, length=48, seed=3, static=False, missing_share=0.0, short_share=0.0)
    df = df[["unique_id", "ds", "y"]].reset_index(drop=True)
    model = fast_model(horizon=6, input_size=24).fit(df)
    ended = df.copy()
    ended.loc[ended.index[ended["unique_id"] == "S000"][-2:], "y"] = np.nan  # rows after its last observation
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_attention(model, df=ended, unique_id="S000")
    assert len([w for w in caught if "rows after the last observed" in str(w.message)]) == 1


def test_the_history_line_breaks_where_rows_are_absent_and_not_over_weekends_of_business_days():
    """Hours absent from the rows (a shop's data with fill_gaps=True) were joined by a straight line across the gap,
    where missing targets broke it."""
    from forecaster.plots import plot_forecast

    hours = pd.date_range("2024-01-01", periods=48, freq="h")
    kept = hours.delete(range(20, 26))  # six hours without rows
    df = pd.DataFrame({"unique_id": "a", "ds": kept, "y": np.arange(len(kept), dtype=float)})
    future = pd.date_range(hours[-1] + pd.Timedelta(hours=1), periods=6, freq="h")
    forecasts = pd.DataFrame({"unique_id": "a", "ds": future, "y_hat": 1.0})
    line = plot_forecast(forecasts, df, history=48).axes[0].lines[0]
    drawn = pd.Series(line.get_ydata(), index=pd.DatetimeIndex(line.get_xdata()))
    assert drawn[hours[20:26]].isna().all() and drawn.drop(hours[20:26]).notna().all()
    days = pd.bdate_range("2024-01-01", periods=30)  # weekdays only: weekends are not gaps
    business = pd.DataFrame({"unique_id": "b", "ds": days, "y": np.arange(30.0)})
    ahead = pd.DataFrame({"unique_id": "b", "ds": pd.bdate_range(days[-1] + pd.offsets.BDay(), periods=5), "y_hat": 1.0})
    weekdays = plot_forecast(ahead, business, history=30).axes[0].lines[0]
    assert np.isfinite(np.asarray(weekdays.get_ydata(), dtype=float)).all()


def test_plot_attention_names_a_series_the_data_does_not_hold():
    """A mistyped id (or '3' for the id 3) said only "df is empty"."""
    from forecaster.plots import plot_attention

    df, _ = make_panel(n_series=3, length=30, seed=0, static=False)
    df = df[["unique_id", "ds", "y"]]
    model = fast_model(horizon=4, max_steps=2).fit(df)
    with pytest.raises(ValueError, match=r"`unique_id` 'S009' names no series of `df`, which has 3: \['S000'"):
        plot_attention(model, df, unique_id="S009")
    numbered = df.assign(unique_id=df["unique_id"].str[1:].astype(int))
    model = fast_model(horizon=4, max_steps=2).fit(numbered)
    with pytest.raises(ValueError, match=r"`unique_id` '2' names no series of the model's history, which has 3: \[0, 1, 2\]"):
        plot_attention(model, unique_id="2")
