"""Regenerate the attention figures: OMP_WAIT_POLICY=PASSIVE python docs/make_figures.py

- ``attention_default_example.png``: the defaults on the Tourism quarterly training part (no test period is
  read), one series forecast from the end of that part: where each step read, and each history point's
  integrated-gradients share of the forecast.
- ``attention_example.png`` and ``attention_profile_example.png``: a panel with promotions (``make_panel``),
  fitted with the faithful variant (``attention_values="observations"``): weight x observation is each history
  point's exact share of the forecast (see docs/attention.md).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from forecaster import Seq2SeqForecaster  # noqa: E402
from forecaster.datasets import load_tourism, make_panel  # noqa: E402
from forecaster.plots import plot_attention, plot_attention_profile  # noqa: E402

HERE = Path(__file__).parent

tourism, info = load_tourism("quarterly", "train")
default = Seq2SeqForecaster(horizon=info.horizon, freq=info.freq, progress=False, random_state=0).fit(tourism)
fig = plot_attention(default, tourism, unique_id="Q1")
fig.savefig(HERE / "attention_default_example.png", dpi=90, bbox_inches="tight")

df, info = make_panel(n_series=40, length=96, seed=5, noise=0.05, future_effect=0.4, trend=0.3, short_share=0.2)
future = df.groupby("unique_id").tail(12)[["unique_id", "ds", "promo"]]
history = df.drop(future.index)
model = Seq2SeqForecaster(
    horizon=12, future_covariates=["promo"], attention_values="observations", progress=False, random_state=0
).fit(history)
fig = plot_attention(model, history, unique_id="S003", future_df=future, actuals=df)
fig.savefig(HERE / "attention_example.png", dpi=90, bbox_inches="tight")
fig = plot_attention_profile(model.explain(future_df=future, include_padding=True), season_length=12, relative_to="target")
fig.savefig(HERE / "attention_profile_example.png", dpi=90, bbox_inches="tight")
written = ("attention_default_example.png", "attention_example.png", "attention_profile_example.png")
print("wrote", *(HERE / name for name in written))
