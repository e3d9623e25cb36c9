"""The step budget of a fit whose ``max_steps`` is None, by how it starts, and when early stopping switches itself on.

``model.plan.BUDGETS`` names each policy; the plan resolves it against the panel's training windows when it runs.
"""

from __future__ import annotations

import numpy as np

# The step cap of panels up to this many training windows; past them it grows with the square root of the
# windows. The M3 monthly training part has about 116,000, Tourism quarterly about 36,000: their budgets
# (and so every figure chosen on them) are unchanged.
STEP_CAP = 1500
STEP_CAP_WINDOWS = 250_000


# The fewest steps of a fit from scratch, however few its windows: below it the network of a 4-series panel
# had not learnt the level of its series (fpp3's aus_arrivals: MASE 1.67x AutoETS after 30 steps; validation suite,
# benchmarks/history/0.4.0.md). A floor of 300 steps cost 8-15x AutoETS's time on the suite's small-panel draws.
MIN_STEPS = 100


def default_max_steps(n_windows: int, batch_size: int, cap: int = STEP_CAP) -> int:
    """Training steps used when `max_steps` is None: about two passes over the windows, ``MIN_STEPS`` at least.

    Two passes were chosen by rolling-origin validation on the Tourism quarterly training part (mean MASE 1.995,
    1.970, 1.986 and 2.005 for 1, 2, 3 and 4 passes; benchmarks/history/rounds-01-06.md, fourth round): more passes
    overfit. M3 monthly hits the 1500-step cap at 1.8 passes. The cap is 1500 steps up to
    ``STEP_CAP_WINDOWS`` windows and grows as their square root beyond (9,500 steps for 10^7 windows,
    100,000 monthly series of 120 months), so a large panel is not seen a small fraction of a time;
    ``benchmarks/training_budget.py`` measures what it buys. The floor is the validation suite's
    (``benchmarks/suite.py``): small panels cost what their windows need, not a fixed 300 steps. ``cap``: the cap up to
    ``STEP_CAP_WINDOWS`` windows (daily data: ``DAILY_STEP_CAP``).
    """
    cap = cap * max(1.0, float(np.sqrt(n_windows / STEP_CAP_WINDOWS)))
    return int(np.clip(2 * n_windows // batch_size, MIN_STEPS, cap))


# The step cap of daily data. Every panel of the suite's daily group reaches the cap of 1500 (Chicago's 20 stations
# over 14 years, the births of 51 states over 20 years, 300 synthetic products over 2 years). At 1000 steps (``suite.py
# --panels daily``, benchmarks/history/0.17.0.md) MASE moved -2.0% (Chicago), 0.0% (the births) and +0.5% (retail),
# WQL -1.8%, +0.6% and +0.3%, and fit + predict took 74-81% of the time: the synthetic retail panel 1.23x AutoETS's
# time -> 0.81x. The cheapest cap measured whose MASE and WQL stay within 1% of 1500's on the other two panels, for
# each panel left out.
DAILY_STEP_CAP = 1000


def step_cap(freq: str) -> int:
    """The step cap of a fit on data of frequency ``freq`` (a pandas alias): ``DAILY_STEP_CAP`` for daily data."""
    return DAILY_STEP_CAP if freq == "D" else STEP_CAP


# The fewest steps of a fit from scratch that learns future-known covariates: their effect takes more steps to learn
# than a series' level. On the validation suite's covariate panels (benchmarks/history/0.6.0.md) 100 steps left the
# electricity study at MASE 0.955 (1.07x AutoETS), 200 gave 0.894 and 300 0.922; the synthetic promotions panel moved
# 0.503 -> 0.506 -> 0.510; over the electricity study's 8 origins and seeds 0-2, 0.729 -> 0.662 -> 0.675. An
# irrelevant random flag moves MASE by -0.9% at 200 steps (-0.4% at 100).
COVARIATE_MIN_STEPS = 200


def covariate_steps(n_windows: int, batch_size: int, cap: int = STEP_CAP) -> int:
    """Training steps of a fit from scratch with future-known covariates: the default, at least 200."""
    return max(COVARIATE_MIN_STEPS, default_max_steps(n_windows, batch_size, cap))


# A warm-started fit continues from trained weights, so it takes this share of the default budget.
WARM_START_SHARE = 0.25
WARM_START_MIN_STEPS = 100


def warm_start_steps(n_windows: int, batch_size: int, cap: int = STEP_CAP) -> int:
    """Training steps of a warm-started fit when `max_steps` is None: a quarter of a full fit's, at least 100."""
    return int(max(WARM_START_MIN_STEPS, round(WARM_START_SHARE * default_max_steps(n_windows, batch_size, cap))))


# A fit that starts from the prior (``init="pretrained"``) moves from it gently: a hundredth of the learning rate
# (chosen on the suite's small panels and Tourism quarterly: a third gave MASE 1.07x AutoETS against 1.02x zero-shot
# in a probe; a thirtieth 0.970x small, 1.028x Tourism quarterly; a hundredth 0.962x and 1.011x; benchmarks/history/0.5.0.md),
# a quarter of a full fit's steps (at least FINE_TUNE_MIN_STEPS), the held-out windows read FINE_TUNE_CHECKS times
# from step 0 on, so that the prior itself (zero steps) is a candidate (docs/prior.md).
FINE_TUNE_LEARNING_RATE_SHARE = 1 / 100
FINE_TUNE_SHARE = 0.25
FINE_TUNE_MIN_STEPS = 40
FINE_TUNE_CHECKS = 5
FINE_TUNE_PATIENCE = 3


# Steps of a fit from the prior under ``init="auto"`` (``max_steps`` None): none. The prior is kept as it is and the
# held-out windows choose the blend and calibrate the intervals. On the validation suite's small panels this scored
# MASE 0.965x and WQL 0.924x AutoETS at 0.16x its time, against 0.962x and 0.924x at 2.49x with the fine-tune (a
# one-member prior; with three, 0.945x at 0.19x against 0.943x at 6.3x, benchmarks/history/0.9.0.md, "the priors of three
# seeds") (benchmarks/history/0.5.0.md, "The default: init='auto'"); ``init="pretrained"`` still fine-tunes.
AUTO_PRIOR_STEPS = 0


def auto_prior_steps(n_windows: int, batch_size: int, cap: int = STEP_CAP) -> int:
    """Training steps of a fit from the prior under ``init="auto"`` when `max_steps` is None (:data:`AUTO_PRIOR_STEPS`)."""
    return AUTO_PRIOR_STEPS


def fine_tune_steps(n_windows: int, batch_size: int, cap: int = STEP_CAP) -> int:
    """Training steps of a fit from the prior when `max_steps` is None: a quarter of a full fit's, at least the floor."""
    return int(max(FINE_TUNE_MIN_STEPS, round(FINE_TUNE_SHARE * default_max_steps(n_windows, batch_size, cap))))


# Passes over the training windows beyond which an automatic early stopping switches on.
AUTO_EARLY_STOPPING_PASSES = 6


def use_early_stopping(early_stopping: bool | None, max_steps: int, batch_size: int, n_windows: int) -> bool:
    """Whether to hold out the last horizon for early stopping; None decides from the planned passes over the data."""
    if early_stopping is not None:
        return bool(early_stopping)
    return max_steps * batch_size > AUTO_EARLY_STOPPING_PASSES * n_windows
