import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import fast_model, future_frame

from forecaster import Seq2SeqForecaster
from forecaster.model.files import ModelFileError


def rewrite_config(folder, config: dict) -> None:
    """Write ``config`` and record its checksum in the manifest, as a writer of such a file would have."""
    (folder / "config.json").write_text(json.dumps(config))
    resign(folder)


def resign(folder) -> None:
    """Record the current checksum of every file in the manifest (a deliberate edit, not corruption)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    for name in manifest["sha256"]:
        manifest["sha256"][name] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_loaded_model_predicts_bit_identically(fitted, panel, tmp_path):
    df, _ = panel
    fitted.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    future = future_frame(df, 6)
    pd.testing.assert_frame_equal(fitted.predict(future_df=future), loaded.predict(future_df=future), check_exact=True)
    pd.testing.assert_frame_equal(fitted.explain(future_df=future), loaded.explain(future_df=future), check_exact=True)
    assert loaded.get_params() == {k: (list(v) if isinstance(v, tuple) else v) for k, v in fitted.get_params().items()}


def test_missing_tampered_truncated_and_incompatible_files_are_refused(fitted, tmp_path):
    folder = tmp_path / "model"
    fitted.save(folder)
    weights = (folder / "weights.pt").read_bytes()
    (folder / "weights.pt").write_bytes(weights[: len(weights) // 2])
    with pytest.raises(ModelFileError, match="`weights.pt`.*checksum"):
        Seq2SeqForecaster.load(folder)
    (folder / "weights.pt").write_bytes(weights)
    text, signed = (folder / "config.json").read_text(), (folder / "manifest.json").read_text()
    config = json.loads(text)
    # An edit of the config (here one that would change every forecast) is refused like one of the weights.
    (folder / "config.json").write_text(json.dumps({**config, "fitted": {**config["fitted"], "log_target": True}}))
    with pytest.raises(ModelFileError, match="`config.json`.*checksum"):
        Seq2SeqForecaster.load(folder)
    rewrite_config(folder, {**config, "format_version": 99})
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "format_version": 99}))
    with pytest.raises(ModelFileError, match="format version 99"):
        Seq2SeqForecaster.load(folder)
    (folder / "config.json").write_text(text)
    (folder / "manifest.json").write_text(signed)
    Seq2SeqForecaster.load(folder)
    (folder / "manifest.json").unlink()
    with pytest.raises(ModelFileError, match="no `manifest.json`"):
        Seq2SeqForecaster.load(folder)
    (folder / "config.json").unlink()
    with pytest.raises(ModelFileError, match="config.json"):
        Seq2SeqForecaster.load(folder)


class _Payload:
    def __reduce__(self):
        return (open, ("/tmp/forecaster-pickle-was-executed", "w"))


def test_pickle_payload_in_weights_is_not_executed(fitted, tmp_path):
    marker = __import__("pathlib").Path("/tmp/forecaster-pickle-was-executed")
    marker.unlink(missing_ok=True)
    folder = tmp_path / "model"
    fitted.save(folder)
    with open(folder / "weights.pt", "wb") as handle:
        torch.save({"weights": _Payload()}, handle)
    # Even with a matching checksum (an attacker can rewrite the manifest), the payload is refused.
    resign(folder)
    with pytest.raises(ModelFileError):
        Seq2SeqForecaster.load(folder)
    assert not marker.exists()


def test_history_file_is_read_without_pickle(fitted, tmp_path):
    folder = tmp_path / "model"
    fitted.save(folder)
    with np.load(folder / "history.npz", allow_pickle=False) as arrays:
        assert all(arrays[k].dtype != object for k in arrays.files)


def test_files_from_before_the_trend_line_load_with_it_off(panel, tmp_path):
    """A file written before `trend_line` existed has no such parameter; its model was fitted without one."""
    df, _ = panel
    model = fast_model(future_covariates=["promo"], trend_line=False).fit(df)
    model.save(tmp_path / "model")
    config_path = tmp_path / "model" / "config.json"
    config = json.loads(config_path.read_text())
    del config["params"]["trend_line"]
    rewrite_config(tmp_path / "model", config)
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.trend_line is False and loaded.seasonal_profile is True
    future = future_frame(df, 6)
    pd.testing.assert_frame_equal(model.predict(future_df=future), loaded.predict(future_df=future), check_exact=True)


def test_blended_model_round_trips_and_files_from_before_each_partner_load_without_it(panel, tmp_path):
    """A model without future covariates blends in both partners; files from before a partner's weight existed did not."""
    df, _ = panel
    model = fast_model(past_covariates=["traffic"]).fit(df)
    model.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded._blend_weights() == model._blend_weights() == model.state_.calibration.blend
    pd.testing.assert_frame_equal(model.predict(), loaded.predict(), check_exact=True)
    config_path = tmp_path / "model" / "config.json"
    config = json.loads(config_path.read_text())
    del config["fitted"]["calibration"]  # files from before calibration: the former rule, no interval factors
    rewrite_config(tmp_path / "model", config)
    assert Seq2SeqForecaster.load(tmp_path / "model")._blend_weights() == {"theta_weight": 0.15, "holt_winters_weight": 0.15}
    del config["params"]["holt_winters_weight"]
    config["params"]["theta_weight"] = 0.25  # as saved by the version that blended Theta alone
    rewrite_config(tmp_path / "model", config)
    theta_era = Seq2SeqForecaster.load(tmp_path / "model")
    assert theta_era._blend_weights() == {"theta_weight": 0.25, "holt_winters_weight": 0.0}
    del config["params"]["theta_weight"]
    rewrite_config(tmp_path / "model", config)
    old = Seq2SeqForecaster.load(tmp_path / "model")
    assert old.theta_weight == 0.0 and old.holt_winters_weight == 0.0
    network_only = fast_model(past_covariates=["traffic"], theta_weight=0.0, holt_winters_weight=0.0).fit(df)
    pd.testing.assert_series_equal(network_only.predict()["y_hat"], old.predict()["y_hat"], check_exact=True)
