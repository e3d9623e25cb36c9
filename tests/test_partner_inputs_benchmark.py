"""benchmarks/partner_inputs.py, a lever measured outside the package, still patches what it says it does."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from conftest import fast_model, future_frame

from forecaster.datasets import make_panel
from forecaster.model import execute, fitting, inference, members, partner_shift

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def lever(monkeypatch):
    spec = importlib.util.spec_from_file_location("partner_inputs", ROOT / "benchmarks" / "partner_inputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(members, "_sampler", module.sampler)
    for target in (fitting, inference, partner_shift):
        monkeypatch.setattr(target, "assemble", module.assemble)
    monkeypatch.setattr(execute, "network_config", module.network_config)
    return module


def test_the_partners_forecasts_reach_the_decoder_as_two_more_covariate_channels(lever):
    df, _ = make_panel(n_series=4, length=48, seed=1, short_share=0.0, missing_share=0.0, static=False)
    history = df.groupby("unique_id").head(42)
    model = fast_model(future_covariates=["promo"], theta_weight=0, holt_winters_weight=0).fit(
        history[["unique_id", "ds", "y", "promo"]]
    )
    assert model.network_config_.future_covariates == 1 + 2  # `promo`, then the two partners
    assert lever.SECONDS["partners"] > 0.0  # the training windows' partner forecasts were computed
    forecast = model.predict(future_df=future_frame(history, 6))
    assert np.isfinite(forecast["y_hat"]).all()
