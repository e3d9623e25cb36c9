import io

import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import fast_model, future_frame

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel
from forecaster.plots import attention_diagnostics, attention_profile, plot_attention, plot_attention_profile, plot_forecast


def _png_bytes(fig) -> int:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return len(buffer.getvalue())


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


def test_plot_forecast_renders(fitted, panel):
    df, _ = panel
    forecasts = fitted.predict(future_df=future_frame(df, 6))
    fig = plot_forecast(forecasts, df, unique_ids=list(forecasts["unique_id"].unique()[:2]))
    assert len(fig.axes) == 2 and _png_bytes(fig) > 5000


def test_plot_attention_from_model_and_from_frame_marks_padding(panel):
    df, _ = panel
    model = fast_model(input_size=40).fit(df)
    short = df.groupby("unique_id").size().idxmin()
    fig = plot_attention(model, df, unique_id=short)
    assert _png_bytes(fig) > 5000
    explanation = model.explain(df=df, include_padding=True)
    assert explanation.loc[explanation["unique_id"] == short, "padded"].any()
    assert explanation.loc[explanation["padded"], "weight"].max() == 0.0
    fig = plot_attention(explanation, df=df, unique_id=short, forecasts=model.predict(df=df))
    assert _png_bytes(fig) > 5000


def test_profile_peaks_at_a_season_multiple_after_training(seasonal_model):
    model, df = seasonal_model
    explanation = model.explain(include_padding=True)
    profile = attention_profile(explanation, relative_to="target")
    assert profile["mean"].idxmax() % 12 == 0
    fig = plot_attention_profile(explanation, season_length=12)
    assert _png_bytes(fig) > 5000


def test_diagnostics_report_zero_padding_mass_entropy_and_recent_share(seasonal_model):
    model, df = seasonal_model
    diagnostics = attention_diagnostics(model.explain(include_padding=True), 12)
    assert diagnostics.padded_mass == 0.0
    assert 0.0 < diagnostics.normalised_entropy <= 1.0
    assert 0.0 < diagnostics.last_season_share < 1.0
    assert list(diagnostics.by_step.index) == list(range(1, 13))
    assert np.isnan(attention_diagnostics(model.explain(), 12).padded_mass)
