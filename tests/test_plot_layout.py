"""Plot layout for readers: axis labels, titles, legends off the data, baselines drawn, heatmaps on the history axis
with their own colour bar and a shared colour scale. Frames are built by hand (no model), so each check is exact."""

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import QuadMesh

from forecaster.plots import plot_attention, plot_forecast

MONTHS = pd.date_range("2001-01-01", periods=30, freq="MS")


def _num(times) -> np.ndarray:
    return mdates.date2num(pd.DatetimeIndex(times).to_pydatetime())


def _line(ax, label):
    (line,) = [line for line in ax.lines if line.get_label() == label]
    return line


def _boxes(fig, *artists):
    """Window extents (pixels) after the layout has run."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [artist.get_window_extent(renderer) for artist in artists]


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.fixture()
def backtest():
    """History of a and b (b holds actuals after the origin, a none) and a backtest frame with both baselines."""
    df = pd.concat(
        [
            pd.DataFrame({"unique_id": "a", "ds": MONTHS[:24], "y": 50 + 10 * np.sin(np.arange(24.0))}),
            pd.DataFrame({"unique_id": "b", "ds": MONTHS, "y": 100 - np.arange(30.0)}),
        ],
        ignore_index=True,
    )
    rows = []
    for uid in ("a", "b"):
        for cutoff in (MONTHS[21], MONTHS[23]):
            for step in range(1, 5):
                base = 60.0 + 5 * step + 40 * (uid == "b") + (cutoff == MONTHS[23])
                rows.append(
                    {
                        "unique_id": uid,
                        "cutoff": cutoff,
                        "ds": cutoff + step * MONTHS.freq,
                        "seq2seq": base,
                        "seq2seq_q10": base - 3,
                        "seq2seq_q90": base + 3,
                        "seasonal_naive": base - 9 + step,
                        "auto_ets": base + 7 - 2 * step,
                        "auto_ets_lo": base - 1,
                        "auto_ets_hi": base + 15,
                    }
                )
    return df, pd.DataFrame(rows)


def _last(forecasts, uid):
    return forecasts[(forecasts["unique_id"] == uid) & (forecasts["cutoff"] == forecasts["cutoff"].max())]


# ---------------------------------------------------------------- plot_forecast


def test_forecast_panels_label_the_target_and_the_legend_lies_beside_them(backtest):
    df, forecasts = backtest
    fig = plot_forecast(forecasts, df, model="seq2seq")
    assert [ax.get_ylabel() for ax in fig.axes] == ["y", "y"]
    legend = fig.axes[0].get_legend()
    assert legend is not None and all(ax.get_legend() is None for ax in fig.axes[1:])  # one legend for every panel
    texts = [t.get_text() for t in legend.get_texts()]
    assert "actual" in texts  # drawn only in b's panel (a has no data after its origin), still in the legend
    box, *panels = _boxes(fig, legend, *fig.axes)
    figure = fig.bbox
    for panel in panels:
        assert not _overlap(box, panel), "the legend covers a panel's data area"
    assert box.x0 >= panels[0].x1  # right of the panels ...
    assert figure.x0 <= box.x0 and box.x1 <= figure.x1 and figure.y0 <= box.y0 and box.y1 <= figure.y1  # ... and in the figure
    plt.close(fig)

    fig = plot_forecast(forecasts, df.rename(columns={"y": "load_MW"}), target_col="load_MW")
    assert fig.axes[0].get_ylabel() == "load_MW"
    plt.close(fig)
    fig = plot_forecast(forecasts, df, ylabel="MWh")
    assert [ax.get_ylabel() for ax in fig.axes] == ["MWh", "MWh"]
    plt.close(fig)


def test_forecast_titles_default_to_the_series_id_and_take_a_score(backtest):
    df, forecasts = backtest
    fig = plot_forecast(forecasts, df)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["a", "b"]
    plt.close(fig)
    fig = plot_forecast(forecasts, df, unique_ids=["b"], title="b (worst seq2seq MASE 2.31), last fold")
    assert fig.axes[0].get_title(loc="left") == "b (worst seq2seq MASE 2.31), last fold"
    plt.close(fig)
    fig = plot_forecast(forecasts, df, title={"a": "a: MASE 0.80"})
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["a: MASE 0.80", "b"]
    plt.close(fig)


def test_forecast_draws_the_baselines_present_as_thin_dashed_lines(backtest):
    df, forecasts = backtest
    fig = plot_forecast(forecasts, df, model="seq2seq")
    for ax, uid in zip(fig.axes, ["a", "b"], strict=True):
        fc = _last(forecasts, uid)
        forecast_width = _line(ax, "forecast").get_linewidth()
        for name in ("seasonal_naive", "auto_ets"):
            line = _line(ax, name)
            np.testing.assert_allclose(line.get_xydata(), np.column_stack([_num(fc["ds"]), fc[name]]))
            assert line.get_linestyle() == "--" and line.get_linewidth() < forecast_width
    assert {"seasonal_naive", "auto_ets"} <= {t.get_text() for t in fig.axes[0].get_legend().get_texts()}
    plt.close(fig)


def test_forecast_baselines_can_be_chosen_or_switched_off(backtest):
    df, forecasts = backtest
    drawn = {}
    for baselines in ((), ("auto_ets",), None):
        fig = plot_forecast(forecasts, df, unique_ids=["a"], baselines=baselines)
        drawn[baselines] = [line.get_label() for line in fig.axes[0].lines]
        plt.close(fig)
    assert drawn[()] == ["history", "forecast"]
    assert drawn[("auto_ets",)] == ["history", "forecast", "auto_ets"]
    assert drawn[None] == ["history", "forecast", "seasonal_naive", "auto_ets"]
    fig = plot_forecast(forecasts, df, unique_ids=["a"], model="auto_ets")  # the forecast is auto_ets: not drawn twice
    assert [line.get_label() for line in fig.axes[0].lines] == ["history", "forecast", "seasonal_naive"]
    plt.close(fig)
    fig = plot_forecast(forecasts[["unique_id", "cutoff", "ds", "seq2seq"]], df, unique_ids=["a"])  # none present
    assert [line.get_label() for line in fig.axes[0].lines] == ["history", "forecast"]
    plt.close(fig)
    with pytest.raises(ValueError, match="theta"):
        plot_forecast(forecasts, df, baselines=("theta",))
    plt.close("all")


# ---------------------------------------------------------------- plot_attention


def _explanation(uid="a", window=12, padding=2, horizon=4, accounted=False, scale=1.0) -> pd.DataFrame:
    """An explain frame by hand: `window` attended months (the oldest `padding` padded) before a 2003-01 origin."""
    history = pd.date_range("2002-01-01", periods=window, freq="MS")
    targets = pd.date_range("2003-01-01", periods=horizon, freq="MS")
    rng = np.random.default_rng(len(uid))
    rows = []
    for step, target in enumerate(targets, start=1):
        raw = rng.uniform(0.1, 1.0, window)
        raw[:padding] = 0.0
        weights = scale * raw / raw.sum()
        for position, (when, weight) in enumerate(zip(history, weights, strict=True)):
            row = {"unique_id": uid, "ds": target, "step": step, "ds_history": when, "lag": window - 1 - position}
            row.update(weight=weight, padded=position < padding)
            if accounted:
                row.update(contribution=weight * 10.0, step_baseline=1.0, step_covariates=0.5, step_partners=2.0, y_hat=13.5)
            rows.append(row)
    return pd.DataFrame(rows)


def _history(uid="a"):
    return pd.DataFrame({"unique_id": uid, "ds": pd.date_range("2002-03-01", periods=10, freq="MS"), "y": np.arange(10.0)})


def _forecast(uid="a"):
    return pd.DataFrame({"unique_id": uid, "ds": pd.date_range("2003-01-01", periods=4, freq="MS"), "y_hat": [9.0, 8, 7, 6]})


def _mesh(ax) -> QuadMesh:
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    return mesh


@pytest.mark.parametrize("accounted", [False, True])
def test_heatmap_columns_sit_under_their_own_periods_of_the_forecast_panel(accounted):
    ex = _explanation(accounted=accounted)
    fig = plot_attention(ex, df=_history(), forecasts=_forecast())
    fig.canvas.draw()
    top, heatmap = fig.axes[:2]
    history = _num(ex["ds_history"].drop_duplicates())
    step = history[1] - history[0]
    first_edge, last_edge = history[0] - step / 2, history[-1] + step / 2
    corners = _mesh(heatmap).get_coordinates()
    np.testing.assert_allclose((corners[0, 0, 0], corners[0, -1, 0]), (first_edge, last_edge), rtol=0, atol=1.0)  # cells: history
    assert corners[0, -1, 0] < _num([pd.Timestamp("2003-01-01")])[0]  # nothing of the horizon
    np.testing.assert_allclose(heatmap.get_xlim(), top.get_xlim())  # one time axis
    # Where the page puts each history period: the same x in the forecast panel and under it in the map.
    on_top = top.transData.transform(np.column_stack([history, np.zeros_like(history)]))[:, 0]
    below = heatmap.transData.transform(np.column_stack([history, np.ones_like(history)]))[:, 0]
    np.testing.assert_allclose(below, on_top, atol=0.5)  # pixels
    assert len(fig.axes) == 2 + accounted  # the colour bar is the heatmap's inset, not a figure axes
    assert top.get_xlim()[1] >= _num([pd.Timestamp("2003-04-01")])[0]  # the forecast panel reaches the last target
    assert top.get_ylabel() == "y"
    legend = top.get_legend()
    box, top_box = _boxes(fig, legend, top)
    assert box.x0 >= top_box.x1 and box.x1 <= fig.bbox.x1  # beside the forecast panel, inside the figure
    if accounted:  # the account panel lines up with the heatmap: same history axis, same place across the page
        account = fig.axes[2]
        assert account.get_shared_x_axes().joined(account, heatmap)
        np.testing.assert_allclose(account.get_xlim(), top.get_xlim())
        a, h = account.get_position(), heatmap.get_position()
        assert a.x0 == pytest.approx(h.x0) and a.x1 == pytest.approx(h.x1)
    plt.close(fig)


@pytest.mark.parametrize("accounted", [False, True])
def test_the_note_under_a_map_stays_inside_the_figure(accounted):
    """A one-line note ran past the figure's right edge and widened every saved map (bbox_inches="tight")."""
    explanation = _explanation(accounted=accounted)
    if accounted:
        explanation.attrs["attention_values"] = "states"  # the longest note: what the state design's shares are
    fig = plot_attention(explanation, df=_history(), forecasts=_forecast())
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (note,) = [text for text in fig.texts if "attention" in text.get_text().lower() or "Attention" in text.get_text()]
    box = note.get_window_extent(renderer)
    assert box.x0 >= fig.bbox.x0 and box.x1 <= fig.bbox.x1 and box.y0 >= fig.bbox.y0
    plt.close(fig)


@pytest.mark.parametrize("accounted", [False, True])
def test_colour_bar_sits_beside_the_heatmap_only(accounted):
    fig = plot_attention(_explanation(accounted=accounted), df=_history(), forecasts=_forecast())
    heatmap = fig.axes[1]
    colorbar = _mesh(heatmap).colorbar
    assert colorbar.ax.get_ylabel() == "attention weight"
    cbar, heat, *others = _boxes(fig, colorbar.ax, heatmap, *[ax for ax in fig.axes if ax is not heatmap])
    tolerance = 1.0  # pixels
    assert heat.y0 - tolerance <= cbar.y0 and cbar.y1 <= heat.y1 + tolerance  # within the heatmap's vertical extent
    assert cbar.height > 0.9 * heat.height  # and about as tall
    assert heat.x1 <= cbar.x0 <= heat.x1 + 0.05 * heat.width  # just right of it
    for other in others:
        assert not (other.y0 < cbar.y1 - tolerance and cbar.y0 + tolerance < other.y1), "the colour bar reaches another panel"
    assert cbar.x1 <= fig.bbox.x1
    plt.close(fig)


def test_vmax_sets_one_colour_scale_across_series():
    a, b = _explanation("a"), _explanation("bb", scale=0.5)
    top = max(a["weight"].max(), b["weight"].max())
    for ex in (a, b):
        uid = ex["unique_id"].iloc[0]
        fig = plot_attention(ex, vmax=top)
        mesh = _mesh(fig.axes[1])
        assert mesh.norm.vmin == 0 and mesh.norm.vmax == pytest.approx(top)
        assert mesh.colorbar.extend == "neither"
        plt.close(fig)
        fig = plot_attention(ex)  # default: this map's own largest weight
        mesh = _mesh(fig.axes[1])
        assert mesh.norm.vmax == pytest.approx(ex.loc[~ex["padded"], "weight"].max())
        assert fig.axes[0].get_title(loc="left") == f"{uid}: where each horizon step looked"
        plt.close(fig)
    fig = plot_attention(a, vmax=0.5 * a["weight"].max(), title="a: MASE 0.80")  # weights above the scale: an arrow
    assert _mesh(fig.axes[1]).colorbar.extend == "max"
    assert fig.axes[0].get_title(loc="left") == "a: MASE 0.80"
    plt.close(fig)
