"""Calibration on held-out windows at the end of the training data: the partners' weights and the quantile offsets.

Two things a fixed rule gets wrong are learnt per panel from windows the network never trained on:

- **The blend.** Whether to mix the Theta method and damped Holt-Winters into the median depends
  on the panel (a demand series driven by a known temperature may want none; a panel of smooth
  seasonal series wants some). Each partner whose weight is None gets 0 or its default, whether or
  not covariates are declared: the defaults, unless the held-out windows show another choice clearly
  better (``choose_blend``). A covariate that carries nothing therefore no longer switches the
  partners off.
- **The interval widths.** Quantile heads trained by pinball loss on in-sample windows are too
  narrow out of sample (the nominal 80% interval covered 62-78% in the studies). Each level's offset
  from the median is multiplied, per horizon step, by the factor that gives it its hit rate on the
  held-out windows once the shift those windows share is taken out (``model.intervals``). The median never moves,
  so point accuracy is unchanged.

The held-out windows are those of a random share of the series (every series when early stopping
already holds the last horizon out), from origins in their last ``horizon + J - 1`` periods, whose
targets no training window reads; the series' earlier windows still train the network. Everything
here reads data up to the training end only, so a backtest fold calibrates on its own training data.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from ..data.panel import Panel
from ..data.quantile_loss import level_loss, pinball
from ..data.scaling import loss_scale, naive_error_table
from ..partners.blend import PARTNERS, SHAPE_WEIGHT, blend_quantiles, default_weights, mix_offsets, partner_distributions
from .intervals import apply_factors, offset_factors

# Share of the series whose last windows are held out when early stopping does not hold out every series.
HOLDOUT_SHARE = 0.2
# Held-out windows wanted: a series gives up to ``horizon`` origins when the held-out series are few.
MIN_HOLDOUT_WINDOWS = 100
# Origins per held-out series at most, as a share of the median series length.
MAX_BACK_SHARE = 0.05
# Paired t-statistic over held-out series by which another blend must beat the default to replace it, as the normal
# quantile it stands for: with few series the bar is Student's t quantile of the same tail (``critical_t``).
SWITCH_T = 2.0
# Paired t-statistic over held-out series by which an interval treatment must beat the network's quantiles to be used
# (the same reading as ``SWITCH_T``).
TREATMENT_T = 2.0


@dataclass(frozen=True)
class HoldOut:
    """The held-out windows: series rows and how many origins each gives (``back``: origins ``last - horizon - j``, j < back)."""

    series: np.ndarray  # (S,) panel rows whose last windows are held out
    back: int  # J >= 1

    def cut(self, n_series: int, horizon: int) -> np.ndarray:
        """(N,) periods before each series' end at which its training targets must stop."""
        cut = np.zeros(n_series, dtype=np.int64)
        cut[self.series] = horizon + self.back - 1
        return cut

    def windows(self, panel: Panel) -> tuple[np.ndarray, np.ndarray]:
        """(series, origin) of every held-out window."""
        offsets = np.arange(self.back)
        series = np.repeat(self.series, self.back)
        origins = panel.last_col - panel.horizon - np.tile(offsets, len(self.series))
        return series, origins


def plan_holdout(panel: Panel, horizon: int, min_history: int, every_series: bool, seed: int) -> HoldOut | None:
    """Which series hold out their last windows, and how many origins each; None when no series can spare them.

    A series is eligible when it keeps at least one training window after giving up its last
    ``horizon + back - 1`` periods of targets. ``every_series``: early stopping already holds out
    the last horizon of every series, so all of them are held out. Series give up to ``horizon``
    origins each until ``MIN_HOLDOUT_WINDOWS`` are held out, but never more than ``MAX_BACK_SHARE``
    of a typical series' length (a small panel would lose its most recent data).
    """
    n = len(panel.ids)
    wanted = n if every_series else max(1, int(np.ceil(HOLDOUT_SHARE * n)))
    most = min(horizon, max(1, int(MAX_BACK_SHARE * np.median(panel.length))))
    back = int(np.clip(np.ceil(MIN_HOLDOUT_WINDOWS / wanted), 1, most))
    if every_series:
        return HoldOut(np.arange(n), back)
    eligible = np.flatnonzero(panel.length >= 2 * horizon + back - 1 + min_history)
    if len(eligible) == 0:
        return None
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.permutation(eligible)[: min(wanted, len(eligible))])
    return HoldOut(chosen, back)


@dataclass(frozen=True)
class Calibration:
    """What the held-out windows taught: the partners' weights and one factor per (step, level).

    ``shape`` is the share of the blended partners' distributions in the quantile offsets
    (``partners.blend.mix_offsets``), applied before the factors: ``SHAPE_WEIGHT`` when a partner
    with a distribution is blended in, 0 otherwise and in model files written before it existed.
    """

    blend: dict[str, float]  # each partner's weight (explicit ones as given)
    factors: np.ndarray | None  # (H, Q) multipliers of each quantile's offset from the median (1 at the median)
    n_windows: int  # held-out windows it was learnt from
    shape: float = 0.0
    # The interval treatment chosen by held-out WQL (``TREATMENTS``) and each candidate's cross-fitted WQL there;
    # None and {} in model files written before the choice existed.
    treatment: str | None = None
    held_out_wql: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        factors = None if self.factors is None else [[float(v) for v in row] for row in self.factors]
        out = {"blend": dict(self.blend), "factors": factors, "n_windows": int(self.n_windows), "shape": float(self.shape)}
        if self.treatment is not None:
            out["treatment"] = self.treatment
            out["held_out_wql"] = {k: float(v) for k, v in self.held_out_wql.items()}
        return out

    @classmethod
    def from_dict(cls, value: Mapping) -> Calibration:
        factors = value.get("factors")
        return cls(
            blend={str(k): float(v) for k, v in value["blend"].items()},
            factors=None if factors is None else np.asarray(factors, dtype=np.float64),
            n_windows=int(value["n_windows"]),
            shape=float(value["shape"]),
            treatment=value.get("treatment"),
            held_out_wql={str(k): float(v) for k, v in (value.get("held_out_wql") or {}).items()},
        )


def critical_t(normal_t: float, n_units: int) -> float:
    """The bar a paired t-statistic over ``n_units`` series must clear: Student's t quantile of the tail ``normal_t`` cuts.

    A t-statistic from a handful of series is far noisier than its value suggests: over 4 series (3 degrees of freedom)
    one above 2.0 arises by chance about 7% of the time, against 2.3% for the normal reading the thresholds were set
    with. So the bar is the Student's t quantile with ``n_units - 1`` degrees of freedom at the normal tail of
    ``normal_t``: 3.31 over 4 series, 2.43 over 8, 2.14 over 20, 2.03 over 100, and ``normal_t`` itself as they grow.
    Infinite below two series (no t-statistic can be formed).
    """
    if n_units < 2:
        return float("inf")
    return float(stats.t.isf(stats.norm.sf(normal_t), n_units - 1))


def choose_blend(
    median: np.ndarray,
    partners: list[np.ndarray],
    actual: np.ndarray,
    scale: np.ndarray,
    fixed: Mapping[str, float | None],
    units: np.ndarray | None = None,
    defaults: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The partner weights: the defaults, unless the held-out windows show another choice clearly better.

    Each partner whose weight is chosen gets 0 or its default. The candidate with the lowest mean
    scaled absolute error of the blended median replaces the defaults only when its paired
    t-statistic over the held-out series exceeds ``critical_t(SWITCH_T, series)``: the defaults were validated on
    whole training parts, a handful of held-out periods is noisy evidence. Two choices per
    partner, not a fine grid: the held-out windows share their periods, and a
    shock common to them (all series falling below forecast at the end of the data) favours local
    models there much more than in the periods after; a fine grid chases that shock (on the Tourism
    training part it chose 0.45 and 0.5 and lost 6% of MASE on the next horizon), while the choice
    between the validated default and nothing still tells a panel the partners help (a covariate
    that carries nothing) from one they hurt (demand driven by a known temperature).

    ``median`` (B, H) is the network's, ``partners`` one (B, H) forecast per entry of ``fixed``
    (partner -> explicit weight, or None to choose it), ``actual`` (B, H) the held-out targets
    and ``scale`` (B,) each window's MASE scale. Where a partner has no forecast its weight
    stays with the network, as in the forecast itself. ``units`` (B,) names the series of each
    window (default: every window its own): a series' overlapping windows move together, so the
    t-statistic counts series, and one series is no evidence against the defaults. ``defaults``: each partner's
    default weight (``partners.blend.default_weights``; without future-known covariates when None).
    """
    names = list(fixed)
    defaults = default_weights(False) if defaults is None else defaults
    choices = [(0.0, defaults[n]) if fixed[n] is None else (float(fixed[n]),) for n in names]
    candidates = [c for c in itertools.product(*choices) if sum(c) <= 1.0 + 1e-9]
    deltas = np.stack([np.where(np.isfinite(p), p - median, 0.0) for p in partners])  # (K, B, H)
    weights = np.asarray(candidates)  # (C, K)
    blended = median[None] + np.tensordot(weights, deltas, axes=1)  # (C, B, H)
    usable = np.isfinite(actual) & np.isfinite(scale)[:, None]
    windows = usable.any(axis=1)
    preferred = tuple(defaults[n] if fixed[n] is None else float(fixed[n]) for n in names)
    default = candidates.index(preferred) if preferred in candidates else 0
    units = np.arange(len(actual)) if units is None else np.asarray(units)
    codes, _ = pd.factorize(units[windows])
    n_units = int(codes.max()) + 1 if len(codes) else 0
    if n_units < 2:  # one series (or window) is no evidence
        best = candidates[default]
    else:
        errors = np.where(usable[None], np.abs(actual[None] - blended) / np.where(usable, scale[:, None], 1.0)[None], 0.0)
        per_window = errors[:, windows].sum(axis=2) / usable[windows].sum(axis=1)  # (C, B') mean scaled error
        gain_window = per_window[default][None] - per_window  # > 0 where a candidate beats the default
        count = np.bincount(codes, minlength=n_units)
        gain = np.stack([np.bincount(codes, weights=g, minlength=n_units) / count for g in gain_window])  # (C, units)
        spread = gain.std(axis=1, ddof=1) / np.sqrt(n_units)
        t = np.where(spread > 0, gain.mean(axis=1) / np.where(spread > 0, spread, 1.0), 0.0)
        challenger = int(np.argmax(np.where(np.arange(len(candidates)) == default, -np.inf, gain.mean(axis=1))))
        best = candidates[challenger] if t[challenger] > critical_t(SWITCH_T, n_units) else candidates[default]
    return dict(zip(names, (float(w) for w in best), strict=True))


def calibrate(
    network_quantiles: np.ndarray,
    target: np.ndarray,
    panel: Panel,
    series: np.ndarray,
    origins: np.ndarray,
    levels: tuple[float, ...],
    median_index: int,
    season_length: int,
    history: int,
    fixed: Mapping[str, float | None],
    defaults: Mapping[str, float] | None = None,
    partner_week: int = 0,
    shift: np.ndarray | None = None,
) -> Calibration:
    """Choose the blend and the offset factors from the network's forecasts of the held-out windows.

    ``network_quantiles`` (B, H, Q) are the network's forecasts (target units) of windows
    (``series``, ``origins``); ``target`` (N, W) the panel's targets in target units;
    ``fixed`` maps each partner to its explicit weight or None (choose it); ``defaults`` the weights a chosen one
    keeps unless clearly beaten (``partners.blend.default_weights``); ``partner_week`` the periods per week that
    partners may take as their season (``partners.season``; 0: none); ``shift`` (B, H) what the future-known
    covariates change that the partners cannot see, added to their forecasts (``model.partner_shift``).
    """
    horizon = network_quantiles.shape[1]
    cols = origins[:, None] + np.arange(1, horizon + 1)[None, :]
    actual = target[series[:, None], cols]
    table = naive_error_table(target, season_length, panel.first_col)
    scale = loss_scale(table, series, origins)
    median = network_quantiles[:, :, median_index]
    active = [name for name in PARTNERS if fixed.get(name) is None or fixed[name] > 0.0]
    fits = [PARTNERS[n].fit for n in active]
    partners = partner_distributions(
        fits, target, panel.first_col, origins, horizon, season_length, history, series=series, week=partner_week
    )
    means = [p.mean if shift is None else p.mean + shift for p in partners]
    blend = {name: 0.0 for name in PARTNERS}
    if active:
        blend.update(choose_blend(median, means, actual, scale, {n: fixed.get(n) for n in active}, series, defaults))
    chosen = [blend[n] for n in active]
    blended = blend_quantiles(network_quantiles, means, chosen, median_index) if active else network_quantiles
    shaped = any(
        w > 0.0 and p.distribution is not None and np.isfinite(p.distribution.spread).all(axis=1).any()
        for p, w in zip(partners, chosen, strict=True)
    )
    mixed = mix_offsets(blended, partners, chosen, median_index, levels, SHAPE_WEIGHT) if shaped else None
    if len(levels) == 1:
        return Calibration(blend=blend, factors=None, n_windows=len(series))
    treatment, scores = choose_treatment(blended, mixed, actual, series, levels, median_index)
    base = mixed if treatment.startswith("mixed") else blended
    factors = offset_factors(base, actual, levels, median_index, len(np.unique(series))) if "factors" in treatment else None
    return Calibration(
        blend=blend,
        factors=factors,
        n_windows=len(series),
        shape=SHAPE_WEIGHT if treatment.startswith("mixed") else 0.0,
        treatment=treatment,
        held_out_wql=scores,
    )


# The interval treatments a fit chooses from: the network's own quantiles (moved with the blended median), those
# with each level's offset scaled to its held-out hit rate, the partners' distributions mixed into the offsets, and both.
TREATMENTS = ("network", "factors", "mixed", "mixed+factors")


def held_out_wql(quantiles: np.ndarray, actual: np.ndarray, levels: tuple[float, ...]) -> float:
    """Weighted quantile loss of quantiles (B, H, Q) against ``actual`` (B, H): mean over levels of 2 x pinball / sum |y|.

    The backtest's WQL (``data.quantile_loss``), pooled over the held-out windows: each window's share of it summed
    (``_wql_terms``), which the paired t-statistics of ``choose_treatment`` read.
    """
    return _pooled(_wql_terms(quantiles, actual, levels))


def _pooled(terms: np.ndarray) -> float:
    """The WQL of the windows whose shares are ``terms``: their sum; NaN without a window or with an undefined share."""
    return float(terms.sum()) if terms.size and np.isfinite(terms).all() else float("nan")


def _wql_terms(quantiles: np.ndarray, actual: np.ndarray, levels: tuple[float, ...]) -> np.ndarray:
    """(B,) each window's share of ``held_out_wql``: its mean over levels of 2 x pinball, over sum |y| of all windows."""
    usable = np.isfinite(actual)
    y = np.where(usable, actual, 0.0)[..., None]
    q = np.asarray(levels)[None, None, :]
    losses = np.where(usable[..., None], pinball(y - quantiles, q), 0.0).sum(axis=1)  # (B, Q)
    return level_loss(losses.mean(axis=1), np.abs(y).sum())  # NaN throughout when sum |y| is not positive


def paired_t(gain: np.ndarray) -> float:
    """The t-statistic of the mean of ``gain`` (one value per independent unit); 0 where it cannot be told from noise."""
    if len(gain) < 2:
        return 0.0
    spread = gain.std(ddof=1) / np.sqrt(len(gain))
    mean = gain.mean()
    if spread > 0:
        return float(mean / spread)
    return float(np.inf) if mean > 0 else 0.0


def choose_treatment(
    blended: np.ndarray,
    mixed: np.ndarray | None,
    actual: np.ndarray,
    series: np.ndarray,
    levels: tuple[float, ...],
    median_index: int,
) -> tuple[str, dict[str, float]]:
    """The interval treatment to use, and every candidate's held-out WQL: the network's quantiles unless clearly beaten.

    A treatment that learns factors is scored out of sample: the held-out series split in two halves (by series, so a
    series' overlapping windows stay together), the factors learnt on one half score the other, and the other way
    round. Scoring factors on the windows they were learnt from would always favour them. With fewer than two
    held-out series there is nothing to score a learnt treatment on: the network's quantiles and, where partners are
    blended in, their mix are compared as they are.

    A lower held-out WQL is not enough. Choosing whichever candidate scored lowest lost WQL against the network's own
    quantiles at later origins on four validation-suite panels of 4-50 series (by 0.1-0.9%): a few series' held-out
    windows favour one treatment by chance. So a treatment replaces the network's quantiles only when its gain, summed
    per held-out series, has a paired t-statistic over the series above ``critical_t(TREATMENT_T, series)`` (the rule
    ``choose_blend`` applies to the partners' weights; the bar rises as the series get few); among those, the lowest
    WQL wins. With one held-out series its windows share most of their periods and no t-statistic can be formed: the
    lower held-out WQL decides, as the only evidence there is.
    """
    units, codes = np.unique(series, return_inverse=True)
    halves = None
    if len(units) >= 2:
        order = np.random.default_rng(len(units)).permutation(len(units))
        half = np.zeros(len(units), dtype=bool)
        half[order[: len(units) // 2]] = True
        halves = half[codes]
    terms: dict[str, np.ndarray] = {}
    for name in TREATMENTS:
        base = mixed if name.startswith("mixed") else blended
        if base is None:
            continue
        if "factors" not in name:
            terms[name] = _wql_terms(base, actual, levels)
            continue
        if halves is None:
            continue
        crossed = base.copy()
        for part in (halves, ~halves):
            n_part = len(np.unique(series[~part]))
            learnt = offset_factors(base[~part], actual[~part], levels, median_index, n_part)
            crossed[part] = apply_factors(base[part], learnt, median_index)
        terms[name] = _wql_terms(crossed, actual, levels)
    scores = {name: _pooled(t) for name, t in terms.items()}
    bar = critical_t(TREATMENT_T, len(np.unique(codes[np.isfinite(actual).any(axis=1)])))  # series with a target
    reference = scores.get("network", np.nan)
    if not np.isfinite(reference):
        return "network", scores
    winners = []
    for name, value in scores.items():
        if name == "network" or not value < reference:
            continue
        gain = np.bincount(codes, weights=terms["network"] - terms[name], minlength=len(units))
        if len(units) < 2 or paired_t(gain) > bar:
            winners.append(name)
    best = min(winners, key=scores.get) if winners else "network"
    return best, scores
