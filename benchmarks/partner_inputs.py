"""The partners' forecasts as the decoder's inputs instead of a fixed blend: a measurement (not in the package).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/partner_inputs.py suite --panels chicago_daily retail_daily_synthetic \
        --model '{"theta_weight": 0, "holt_winters_weight": 0}' --out /tmp/p.csv
    OMP_WAIT_POLICY=PASSIVE python benchmarks/partner_inputs.py study --model '{"theta_weight": 0, "holt_winters_weight": 0}'
    PARTNER_INPUT_CAP=2048 OMP_WAIT_POLICY=PASSIVE python benchmarks/partner_inputs.py study

Every window of a panel with future-known covariates carries two more future-known channels, after the declared
covariates: the Theta method's and damped Holt-Winters' forecasts from the window's history up to its origin (the
blend's fits, history and season rule: ``partners.blend.partner_distributions``), scaled with the window's own loc
and scale, 0 where a partner has none, clipped to +-20. With ``theta_weight=0, holt_winters_weight=0`` nothing is
blended after the network. The partners' forecasts of the training windows are computed once per fit, shared by the
ensemble's members; ``PARTNER_INPUT_CAP`` (environment, default unbounded) draws the training windows from at most
that many of them, evenly spaced, and ``PARTNER_INPUT_FEATURES=0`` keeps that cap without the inputs (what the cap
alone costs). ``suite`` runs ``suite.py`` with seasonal naive as its only baseline (the others are deterministic: their
rows of another label serve), ``study`` runs ``electricity_study.py``; the other arguments are theirs. Prints the
seconds spent on the partners' fits of the training windows at the end. benchmarks/history/0.17.3.md has the figures.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import sys
import time

import numpy as np
import pandas as pd

import forecaster.data.windows as windows
from forecaster.data.frequency import season_length_for
from forecaster.model import execute, fitting, inference, members, partner_shift
from forecaster.model.resolve import partner_week
from forecaster.partners.blend import PARTNERS, partner_distributions

EXTRA = 2  # decoder channels added: Theta's and Holt-Winters' forecasts
CAP = int(os.environ.get("PARTNER_INPUT_CAP", "0")) or None
FEATURES = os.environ.get("PARTNER_INPUT_FEATURES", "1") == "1"
FITS = [PARTNERS["theta_weight"].fit, PARTNERS["holt_winters_weight"].fit]
_assemble, _network_config, _sampler = windows.assemble, fitting.network_config, members._sampler
_CACHE: dict = {}
SECONDS = {"partners": 0.0}


def partner_means(panel, series: np.ndarray, origins: np.ndarray, horizon: int, input_size: int) -> np.ndarray:
    """(B, H, 2) the partners' forecasts of windows (``series``, ``origins``), in the panel's target units."""
    grid = panel.grid
    offset = grid.freq if grid.freq is not None else pd.tseries.frequencies.to_offset(grid[1] - grid[0])
    season = season_length_for(offset)
    week = partner_week(None, offset, season)
    history = inference.history_kept(input_size, panel.decomposition, week)
    outs = partner_distributions(FITS, panel.y, panel.first_col, origins, horizon, season, history, series=series, week=week)
    return np.stack([out.mean for out in outs], axis=2)


def _with_inputs(batch, panel, means: np.ndarray):
    scaled = (means - batch.loc[:, None, None]) / batch.scale[:, None, None]
    scaled = np.clip(np.where(np.isfinite(scaled), scaled, 0.0), -20.0, 20.0).astype(np.float32)
    covariates = panel.future.shape[2]
    known = batch.future_known
    joined = np.concatenate([known[:, :, :covariates], scaled, known[:, :, covariates:]], axis=2)
    return dataclasses.replace(batch, future_known=joined)


def assemble(panel, roles, series, origins, input_size, horizon, scaler, with_target, naive_table=None):
    """``data.windows.assemble`` with the partners' forecasts among the decoder's inputs (panels with covariates)."""
    batch = _assemble(panel, roles, series, origins, input_size, horizon, scaler, with_target, naive_table)
    if panel.future.shape[2] == 0:
        return batch
    means = partner_means(panel, np.asarray(series), np.asarray(origins), horizon, input_size)
    return _with_inputs(batch, panel, means)


def sampler(job, series: np.ndarray, origins: np.ndarray):
    """``model.members._sampler`` drawing from precomputed partner forecasts (at most ``CAP`` windows)."""
    panel, config = job.panel, job.network
    if panel.future.shape[2] == 0:
        return _sampler(job, series, origins)
    key = (id(panel), len(series), int(series.sum()), int(origins.sum()))
    if key not in _CACHE:
        start = time.perf_counter()
        n = len(series) if CAP is None else min(CAP, len(series))
        index = np.unique(np.linspace(0, len(series) - 1, n).round().astype(np.int64))
        kept_series, kept_origins = series[index], origins[index]
        means = partner_means(panel, kept_series, kept_origins, config.horizon, config.input_size) if FEATURES else None
        _CACHE[key] = (kept_series, kept_origins, means)
        SECONDS["partners"] += time.perf_counter() - start
    kept_series, kept_origins, means = _CACHE[key]

    def sample(rng: np.random.Generator):
        pick = rng.integers(0, len(kept_series), job.train.batch_size)
        args = (config.input_size, config.horizon, job.scaler, True, job.naive_table)
        batch = _assemble(panel, job.roles, kept_series[pick], kept_origins[pick], *args)
        return _with_inputs(batch, panel, means[pick]) if FEATURES else batch

    return sample


def network_config(panel, roles, features, quantiles, input_size, params):
    """``model.fitting.network_config`` with the decoder's two more covariate channels (panels with covariates)."""
    config = _network_config(panel, roles, features, quantiles, input_size, params)
    if panel.future.shape[2] == 0:
        return config
    wider = config.future_features + EXTRA
    return dataclasses.replace(config, future_features=wider, future_covariates=config.future_covariates + EXTRA)


def install() -> None:
    """Patch the lever in (the cap alone without ``FEATURES``)."""
    members._sampler = sampler
    if FEATURES:
        for module in (windows, fitting, inference, partner_shift):
            module.assemble = assemble
        execute.network_config = network_config


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("suite", "study"):
        raise SystemExit(__doc__)
    what = sys.argv.pop(1)
    install()
    atexit.register(lambda: print(f"partners' fits of the training windows: {SECONDS['partners']:.1f} s"))
    if what == "suite":
        import suite

        suite.main_against_seasonal_naive("0.17.2, the partners as decoder inputs, no blend (not shipped)")
    else:
        import electricity_study

        electricity_study.main()


if __name__ == "__main__":
    main()
