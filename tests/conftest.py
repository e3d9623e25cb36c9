"""Shared fixtures: small seeded panels and fast model settings (CPU, few steps)."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel

matplotlib.use("Agg")

FAST = dict(hidden_size=16, max_steps=20, batch_size=32, init="scratch", progress=False, random_state=0)


def fast_model(**overrides) -> Seq2SeqForecaster:
    """A tiny model that trains in well under a second."""
    return Seq2SeqForecaster(**{"horizon": 6, "input_size": 12, **FAST, **overrides})


def future_frame(df: pd.DataFrame, horizon: int, freq: str = "MS", value: float = 0.0, column: str = "promo") -> pd.DataFrame:
    """Future-known covariate rows for the `horizon` periods after each series' end."""
    ends = df.groupby("unique_id")["ds"].max()
    rows = [
        pd.DataFrame({"unique_id": uid, "ds": pd.date_range(end, periods=horizon + 1, freq=freq)[1:], column: value})
        for uid, end in ends.items()
    ]
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="session")
def panel():
    df, info = make_panel(n_series=8, length=48, seed=1, short_share=0.25, missing_share=0.02)
    return df, info


@pytest.fixture(scope="session")
def fitted(panel):
    df, _ = panel
    model = fast_model(future_covariates=["promo"], past_covariates=["traffic"], static_covariates=["group", "size"])
    return model.fit(df)
