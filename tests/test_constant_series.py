"""The steps a constant series is forecast as its constant: each step whose covariates (all together) its observed
history held by the window's origin, checked against a loop over windows, steps and periods."""

from __future__ import annotations

import types

import numpy as np

from forecaster.model.constant_series import steps_seen


def test_the_steps_seen_are_those_a_loop_over_the_history_finds():
    rng = np.random.default_rng(0)
    n, width, horizon = 5, 40, 6
    future = rng.integers(0, 3, (n, width, 2)).astype(np.float32)
    future[:, :, 1] = np.round(rng.normal(size=(n, width)), 0)  # a few values, some shared across rows
    y = np.where(rng.random((n, width)) < 0.2, np.nan, 1.0)
    y[:, :4] = np.nan  # padding before each series starts
    series = np.repeat(np.arange(n), 4)  # each series at four origins, as a one-pass backtest sends them
    origins = np.tile([10, 20, 25, 33], n)
    got = steps_seen(types.SimpleNamespace(future=future), y, series, origins, horizon)
    expected = np.zeros_like(got)
    for b, (s, o) in enumerate(zip(series, origins, strict=True)):
        held = {tuple(future[s, c]) for c in range(o + 1) if np.isfinite(y[s, c])}
        for h in range(horizon):
            expected[b, h] = tuple(future[s, o + 1 + h]) in held
    assert expected.any() and not expected.all()
    np.testing.assert_array_equal(got, expected)


def test_a_measurement_is_held_within_the_range_the_history_held():
    """A price that never repeats exactly made every step "new", so a series flat under many prices was forecast by
    the model (63.5 to 100 with a 10-90% interval from 0 to 319) instead of as its constant."""
    rng = np.random.default_rng(1)
    n, width, horizon = 4, 50, 5
    future = np.stack([rng.integers(0, 2, (n, width)), rng.uniform(9.0, 11.0, (n, width))], axis=-1).astype(np.float64)
    y = np.where(rng.random((n, width)) < 0.1, np.nan, 1.0)
    series, origins = np.repeat(np.arange(n), 3), np.tile([15, 30, 44], n)
    got = steps_seen(types.SimpleNamespace(future=future), y, series, origins, horizon, np.array([False, True]))
    expected = np.zeros_like(got)
    for b, (s, o) in enumerate(zip(series, origins, strict=True)):
        seen = [c for c in range(o + 1) if np.isfinite(y[s, c])]
        flags, prices = {future[s, c, 0] for c in seen}, future[s, seen, 1]
        for h in range(horizon):
            flag, price = future[s, o + 1 + h]
            expected[b, h] = flag in flags and prices.min() <= price <= prices.max()
    assert expected.any() and not expected.all()
    np.testing.assert_array_equal(got, expected)
