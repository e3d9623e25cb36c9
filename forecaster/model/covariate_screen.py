"""Whether declared future-known covariates move the target at all, read off the history before a fit trains.

A fit from scratch that declares future-known covariates trains as a covariate fit: the partners, which cannot see
covariates, get a smaller default weight (``partners.blend.COVARIATE_THETA_WEIGHT``) and the network at least
``budget.COVARIATE_MIN_STEPS`` steps. Where the covariates carry something, both pay; where they carry nothing, both
cost: a random 0/1 flag declared on the validation suite cost the one-series half-hourly ``taylor`` panel 26% MASE and
M3 monthly 1.35% (``benchmarks/history/0.16.0.md``, ``0.16.1.md``). So before such a fit trains, the screen asks the
history whether any covariate moves the target.

The statistic: the target's differences against its differences of a covariate, at lag 1 and at the season's lag (a
holiday shows in both; a working-day flag, which repeats every week, at lag 1; a promotion in both), each series cut
into up to ``SCREEN_BLOCKS`` consecutive blocks of at least ``MIN_BLOCK`` differences, each block's correlation as
Fisher's z; a covariate of more than two values also as its squared distance from the series' mean (demand rises
with both heat and cold), and one of at most ``MAX_LEVELS`` values as one flag per value too (coded categories). Three
tests read the blocks:

- the |t| over all of them of their mean: an effect of one sign everywhere (a panel of one series gives several
  blocks, and a t over them is robust to the short-range dependence of differences);
- with two series or more, each series' Fisher statistic over its own blocks, squared, against the same with the
  covariate moved ``PLACEBO_SHIFT`` periods, paired over the series: an effect whose sign differs by series, which the
  mean cancels (a holiday lifts one product's sales and lowers another's). The placebo shares whatever the blocks' z
  get wrong about their own spread, which summed over a thousand series would pass for an effect: a random flag on M3
  monthly scored 5.9-7.7 against 2.8 as a plain sum of squares;
- the strongest series' t over its blocks (blocks that agree exactly, at the correlation's clip, are the strongest
  evidence there is): an effect in a few series only (a promotion run in one shop of ten), which both means dilute.
  Its bar is widened by the placebo's scale and is at least the placebo's strongest series: on some panels these t
  spread wider than a normal's where nothing moves.

A covariate moves the target where one of its tests clears its bar: ``SWITCH_T``, the bar the partners' weights
switch at, as a two-sided tail split over that covariate's tests (and, for the strongest series, over the series),
Student's t over the blocks or series for the first two. The bar is the covariate's own: a flag declared beside it
cannot move it. A covariate that varies in fewer than ``MIN_EVIDENCE`` blocks (one holiday in a short history) gives
no evidence either way.

An earlier form read the partners' held-out errors instead of differences, with neither the squares nor the
per-series test (``benchmarks/history/electricity-study.md``): it missed the electricity study's temperature and
working day and a holiday flag whose sign differed by series.

A covariate with evidence, none of whose tests clears its bar, and that no closure of the fit (``model.closures``)
reads, is set aside: the fit is the fit with the other covariates declared (none: the fit without covariates), bit for bit: same
network, same steps, same blend. The estimator warns, naming it, and the plan records it (``FitPlan.unread``, the
figures in ``FitPlan.check``); ``predict`` accepts it in ``future_df`` without reading it. A covariate with no
evidence either way is read as declared. ``init="scratch"`` reads them all regardless. A warm start from a fit that set
covariates aside keeps them aside (the weights it continues from never read them).

On the validation suite's panels, at each of its three origins (``benchmarks/covariate_screen.py``), every covariate
of every panel is read (Chicago's holidays |t| 78-84 against 2.9; the hourly synthetic panel's temperature 143-149;
the electricity series' working day 9.7-10.0 against 3.9 over its 8 blocks), and a random flag is set aside on every
panel that trains (closest: the strongest series of the synthetic retail panel, 4.27 against 4.51).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..data.panel import Panel
from .calibration import SWITCH_T, paired_t
from .covariate_check import MAX_CORRELATION, two_sided_bar

# Blocks per series at most, and differences per block at least (a correlation of a few points is mostly noise).
SCREEN_BLOCKS = 8
MIN_BLOCK = 8
# Periods of each series' history the screen reads at most (the latest): bounds its memory on long panels.
SCREEN_SPAN = 2048
# A covariate of at most this many values (more than two) is also read as one flag per value: integer-coded categories
# (a day's type: 0 ordinary, 1 holiday, 2 bridge day) move the target by level, in no order that the covariate or its
# square would follow.
MAX_LEVELS = 8
# Blocks (over the series) in which a covariate must vary before the screen may set it aside: fewer cannot clear a bar
# split over the tests (two blocks: |t| 56), so they are no evidence that it moves nothing (one holiday in a short
# history varies in two).
MIN_EVIDENCE = 8


@dataclass(frozen=True)
class CovariateFigures:
    """One covariate's test that came closest to its bar (its |t|, its bar and the blocks or series it was read on),
    and whether its history gave evidence either way (``MIN_EVIDENCE`` blocks where it varies)."""

    t: float
    bar: float
    n_units: int
    evidence: bool

    @property
    def moves(self) -> bool:
        return self.t > self.bar

    @property
    def set_aside(self) -> bool:
        return self.evidence and not self.moves


@dataclass(frozen=True)
class ScreenResult:
    """What the screen read: each covariate's figures and the covariates a closure of the fit reads (never set aside)."""

    figures: dict[str, CovariateFigures]
    closing: tuple[str, ...] = ()

    @property
    def unread(self) -> tuple[str, ...]:
        """The covariates set aside: evidence in the history, no test clearing its bar, no closure reading them."""
        return tuple(name for name, f in self.figures.items() if f.set_aside and name not in self.closing)

    def to_dict(self) -> dict[str, float]:
        """JSON-friendly figures (model files store them): the test closest to its bar of a covariate set aside (of
        any covariate where none is), and how many covariates are read and set aside."""
        aside = [self.figures[name] for name in self.unread] or list(self.figures.values())
        closest = max(aside, key=lambda f: f.t - f.bar)
        return {  # named apart from the prior check's figures, which a fit may record beside them
            "screen_t": float(min(closest.t, 1e9)),
            "screen_bar": float(min(closest.bar, 1e9)),
            "screen_units": float(closest.n_units),
            # a closure's covariate is read, though its own periods are not screened (they are closed)
            "screen_read": float(len(set(self.figures) | set(self.closing)) - len(self.unread)),
            "screen_unread": float(len(self.unread)),
        }


def block_units(usable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each usable entry of (N, T) falls: ``(keep, unit)``, the entries read and their block (``row *
    SCREEN_BLOCKS + block``), a row's usable columns cut into ``min(SCREEN_BLOCKS, usable // MIN_BLOCK)`` consecutive
    blocks of near-equal size."""
    count = usable.sum(axis=1)
    blocks = np.minimum(SCREEN_BLOCKS, count // MIN_BLOCK)
    rank = np.cumsum(usable, axis=1) - 1
    block = (rank * blocks[:, None]) // np.maximum(count, 1)[:, None]
    keep = usable & (blocks[:, None] > 0)
    return keep, (np.arange(len(usable))[:, None] * SCREEN_BLOCKS + block)[keep]


def block_z(dy: np.ndarray, dx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fisher's z of the correlation of ``dy`` with ``dx`` (N, T) within each block of each row (``block_units``), the
    row of each and its differences; blocks where either does not vary give none."""
    keep, unit = block_units(np.isfinite(dy) & np.isfinite(dx))
    a, e = dx[keep], dy[keep]
    size = len(dy) * SCREEN_BLOCKS

    def total(values):
        return np.bincount(unit, weights=values, minlength=size)

    n = np.bincount(unit, minlength=size).astype(np.float64)
    sum_a, sum_e = total(a), total(e)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_a, mean_e = sum_a / n, sum_e / n
        # centred within each block (the moments about the block's mean, computed by scattering the means back)
        ca, ce = a - mean_a[unit], e - mean_e[unit]
    aa, ee, ae = total(ca * ca), total(ce * ce), total(ca * ce)
    # a block varies where its spread is more than rounding of its own values (not of the panel's largest series)
    varies = (n >= 3) & (aa > 1e-12 * total(a * a)) & (ee > 1e-12 * total(e * e)) & (aa > 0) & (ee > 0)
    r = ae[varies] / np.sqrt(aa[varies] * ee[varies])
    z = np.arctanh(np.clip(r, -MAX_CORRELATION, MAX_CORRELATION))
    return z, np.flatnonzero(varies) // SCREEN_BLOCKS, n[varies]


def moving_blocks(dy: np.ndarray, dx: np.ndarray) -> int:
    """Blocks (``block_units``) in which the covariate's differences ``dx`` vary where the target's ``dy`` are there too:
    the evidence a verdict of "moves nothing" rests on, whether or not the target varies there (a block of a closed
    night, the target at zero throughout, counts: the covariate moved and the target did not)."""
    keep, unit = block_units(np.isfinite(dy) & np.isfinite(dx))
    size = len(dx) * SCREEN_BLOCKS
    low, high = np.full(size, np.inf), np.full(size, -np.inf)
    np.minimum.at(low, unit, dx[keep])
    np.maximum.at(high, unit, dx[keep])
    return int(((high - low) > 0).sum())


def consistent_t(z: np.ndarray) -> float:
    """|t| over the blocks of their mean z: an effect of one sign in every series."""
    return max(paired_t(z), paired_t(-z))


def series_strength(z: np.ndarray, rows: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each series' evidence over its blocks (three at least; ``block_z``'s z, rows and differences): its t of their
    mean z, taken to a standard normal through Student's t (standard normal where nothing moves; blocks that agree
    exactly, every correlation at the clip, give the largest there is), its Fisher statistic (the blocks' z weighted as
    their differences make them exact, standard normal for independent differences where nothing moves; it grows with
    the effect where the first levels off), and the series read."""
    units, codes, blocks = np.unique(rows, return_inverse=True, return_counts=True)
    total, squares = np.bincount(codes, weights=z), np.bincount(codes, weights=z * z)
    fisher = np.bincount(codes, weights=z * np.sqrt(np.maximum(n - 3, 1))) / np.sqrt(blocks)
    mean = total / blocks
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.sqrt(np.maximum(squares - blocks * mean**2, 0.0) / (blocks - 1) / blocks)
        t = np.abs(mean) / spread
    usable = (blocks >= 3) & ((spread > 0) | (mean != 0))
    tail = np.clip(stats.t.sf(t[usable], blocks[usable] - 1), 1e-300, 1.0)
    normal = np.sign(mean[usable]) * stats.norm.isf(tail)
    return normal, fisher[usable], units[usable]


def by_series_t(strength: tuple[np.ndarray, ...], reference: tuple[np.ndarray, ...]) -> tuple[float, int]:
    """An effect of either sign in each series (a holiday lifts one product's sales and lowers another's), which the
    mean over every block cancels: each series' squared Fisher statistic (``series_strength``: strengths, Fisher
    statistics, series) against its ``reference``, the same with the covariate ``PLACEBO_SHIFT`` periods off (which
    moves nothing, and shares whatever the blocks' z get wrong about their own spread), paired over the series; the t
    of their mean difference, and the series read (0 below two).

    The Fisher statistic, not the strength: a strength read through Student's t over a series' few blocks levels off
    (about 6.5 over 8 blocks) where the correlations are large, and a placebo that is nearly the covariate's opposite
    (an hourly temperature's daily cycle moved 11 hours) then reached the same ceiling as the covariate."""
    (_, values, units), (_, placebo, placebo_units) = strength, reference
    both, mine, theirs = np.intersect1d(units, placebo_units, return_indices=True)
    if len(both) < 2:
        return 0.0, len(both)
    return paired_t(values[mine] ** 2 - placebo[theirs] ** 2), len(both)


def strongest_series(strength: tuple[np.ndarray, ...], reference: tuple[np.ndarray, ...]) -> tuple[float, float, float, int]:
    """An effect in a few series only, which neither the mean over the blocks nor the mean over the series shows (a
    promotion run in one shop): the largest |strength| of a series (``series_strength``: strengths, Fisher statistics,
    series; standard normal where nothing moves), the scale (at least 1) and the largest of the ``reference``
    strengths (the covariate moved), and the series read.

    Where nothing moves, the strengths spread a little wider than a normal's on some panels (root mean square 1.12-1.17
    on M3 monthly at the seasonal lag, with a random flag or its placebo alike), and the largest of a thousand grows
    with that: the placebo's scale widens the bar, and its largest is a floor under it."""
    (values, _, units), (placebo, _, _) = strength, reference
    if not len(units):
        return 0.0, 1.0, 0.0, 0
    scale = max(1.0, float(np.sqrt(np.mean(placebo**2)))) if len(placebo) else 1.0
    floor = float(np.abs(placebo).max()) if len(placebo) else 0.0
    return float(np.abs(values).max()), scale, floor, len(units)


# Periods by which the placebo covariate of ``by_series_t`` is moved: a prime, off every common season's phase.
PLACEBO_SHIFT = 11


def screen_covariates(panel: Panel, season_length: int, closed: np.ndarray | None = None) -> ScreenResult | None:
    """The screen of ``panel``'s future-known covariates on its history (see the module). None where it has no
    evidence either way on any covariate (no block where one varies); a covariate without evidence either way is
    not in the result (it is read as declared).

    ``closed`` (N, W): the periods the fit's closures forecast at zero (``model.closures``), read as periods without a
    target: what a covariate does on open periods is what the network must learn. A holiday on which some shops close
    and the others sell more would otherwise cancel to nothing (a flag 39% up on its open days was set aside)."""
    end = panel.last_col + 1
    start = max(0, end - SCREEN_SPAN)
    y = panel.y[:, start:end].astype(np.float64)
    if closed is not None:
        y = np.where(closed[:, start:end], np.nan, y)
    lags = [lag for lag in sorted({1, season_length}) if 1 <= lag < y.shape[1]]
    zs = []  # (covariate, (z, rows) of the blocks, the same with the covariate moved, blocks it moves in) per form, lag
    for j, name in enumerate(panel.future_names):
        x = panel.future[:, start:end, j].astype(np.float64)
        x = np.where(np.isfinite(y), x, np.nan)  # the periods with a target only
        forms, levels = [x], np.unique(x[np.isfinite(x)])
        if len(levels) > 2:  # a flag's square is the flag again (up to sign and shift)
            seen = np.isfinite(x)
            mean = np.where(seen, x, 0.0).sum(axis=1, keepdims=True) / np.maximum(seen.sum(axis=1, keepdims=True), 1)
            forms.append((x - mean) ** 2)
        if 2 < len(levels) <= MAX_LEVELS:  # coded categories: each level's effect its own, in no order
            forms.extend(np.where(seen, x == level, np.nan) for level in levels)
        for form in forms:
            for lag in lags:
                dy, dx = y[:, lag:] - y[:, :-lag], form[:, lag:] - form[:, :-lag]
                moved = np.full_like(dx, np.nan)
                moved[:, PLACEBO_SHIFT:] = dx[:, :-PLACEBO_SHIFT]
                zs.append((name, block_z(dy, dx), block_z(dy, moved), moving_blocks(dy, dx)))
    figures: dict[str, CovariateFigures] = {}
    for name in panel.future_names:
        mine = [(actual, placebo, moving) for covariate, actual, placebo, moving in zs if covariate == name]
        tests = []  # (|t|, units read, whether the bar is Student's t over them, the placebo's scale and strongest series)
        for actual, placebo, _ in mine:
            tests.append((consistent_t(actual[0]), len(actual[0]), True, 1.0, 0.0))
            strength, reference = series_strength(*actual), series_strength(*placebo)
            t, n_series = by_series_t(strength, reference)
            if n_series >= 2:
                tests.append((t, n_series, True, 1.0, 0.0))
            t, scale, floor, n_series = strongest_series(strength, reference)
            if n_series >= 1:
                tests.append((t, n_series, False, scale, floor))
        usable = [test for test in tests if test[1] >= 2 or not test[2]]
        if not usable:
            continue
        evidence = max(moving for _, _, moving in mine) >= MIN_EVIDENCE
        k = len(usable)
        read = [CovariateFigures(t, bar_for(n, k, student, *placebo), n, evidence) for t, n, student, *placebo in usable]
        figures[name] = max(read, key=lambda f: f.t - f.bar)
    return ScreenResult(figures) if figures else None


def bar_for(n_units: int, n_tests: int, student: bool, scale: float = 1.0, floor: float = 0.0) -> float:
    """A test's bar: Student's t over ``n_units`` (``two_sided_bar``), or for the strongest series the normal bar split
    over the series too, times ``scale`` and at least ``floor`` (the placebo's scale and strongest series)."""
    return two_sided_bar(n_units, n_tests) if student else max(normal_bar(n_tests * n_units) * scale, floor)


def normal_bar(n_tests: int) -> float:
    """The |t| a test read on a standard normal scale must clear: the normal tail of ``SWITCH_T``, split over both
    signs and the ``n_tests`` made (for the strongest series, the tests times the series it is the largest of)."""
    return float(stats.norm.isf(stats.norm.sf(SWITCH_T) / (2 * n_tests)))


def screened_note(result: ScreenResult, covariates: list[str]) -> str:
    """The note (the estimator warns with it) of a fit whose screen set covariates aside."""
    aside = result.unread
    figures = ", ".join(f"{name!r} |t| {result.figures[name].t:.2f} against {result.figures[name].bar:.2f}" for name in aside)
    read = [name for name in covariates if name not in aside]
    return (
        f"The declared future-known covariates {list(aside)} are not read: in the history, no difference of the target "
        f"follows their differences ({figures}, over blocks of each series), so the fit is the fit "
        + (f"with only {read} declared" if read else "without them")
        + " (fit_plan_.check has the figures). init='scratch' (without a warm start) reads them regardless."
    )


def kept_aside_note(aside: tuple[str, ...]) -> str:
    """The note (the estimator warns with it) of a warm start that keeps covariates ``aside``."""
    return (
        f"The declared future-known covariates {list(aside)} stay unread: this fit continues (warm_start=True) from "
        "weights that never read them, since the screen of the fit they come from set them aside. warm_start=False "
        "with init='scratch' reads them."
    )
