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
with both heat and cold). Two tests read the blocks: the |t| over all of them of their mean (an effect of one sign
everywhere; a panel of one series gives several blocks, and a t over them is robust to the short-range dependence
of differences), and, with two series or more, each series' t over its own blocks, squared, against the same with
the covariate moved ``PLACEBO_SHIFT`` periods, paired over the series (an effect whose sign differs by series, which
the mean cancels: a holiday lifts one product's sales and lowers another's; the placebo shares whatever the blocks'
z get wrong about their own spread, which summed over a thousand series would pass for an effect: a random flag on M3
monthly scored 5.9-7.7 against 2.8 as a plain sum of squares). A covariate moves the target where one of its tests
clears its bar (``SWITCH_T``, the bar the partners' weights switch at, as Student's t over the blocks or series, a
two-sided tail split over every test made).

An earlier form read the partners' held-out errors instead of differences, with neither the squares nor the
per-series test (``benchmarks/history/electricity-study.md``): it missed the electricity study's temperature and
working day and a holiday flag whose sign differed by series.

A covariate none of whose tests clears its bar, and that no closure of the fit (``model.closures``) reads, is set
aside: the fit is the fit with the other covariates declared (none: the fit without covariates), bit for bit: same
network, same steps, same blend. The estimator warns, naming it, and the plan records it (``FitPlan.unread``, the
figures in ``FitPlan.check``); ``predict`` accepts it in ``future_df`` without reading it. A covariate with no
evidence either way (no block where it varies) is read as declared. ``init="scratch"`` reads them all regardless.

On the validation suite's history (all of it, before the first origin's horizons) every covariate panel clears the bar by
far (Chicago's holidays |t| 119 against 2.9; the hourly synthetic panel's temperature 147; the electricity series'
working day 9.8 against 3.4 over its 8 blocks) and the random flag clears it on none (largest |t| 2.16 against 2.28
on the synthetic retail panel, before the split over the two lags).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..data.panel import Panel
from .calibration import paired_t
from .covariate_check import MAX_CORRELATION, two_sided_bar

# Blocks per series at most, and differences per block at least (a correlation of a few points is mostly noise).
SCREEN_BLOCKS = 8
MIN_BLOCK = 8
# Periods of each series' history the screen reads at most (the latest): bounds its memory on long panels.
SCREEN_SPAN = 2048


@dataclass(frozen=True)
class CovariateFigures:
    """One covariate's closest test: its |t|, its bar and the blocks it was read on."""

    t: float
    bar: float
    n_blocks: int

    @property
    def moves(self) -> bool:
        return self.t > self.bar


@dataclass(frozen=True)
class ScreenResult:
    """What the screen read: each covariate's closest test (only those with evidence either way), how many tests were
    made, and the covariates set aside (those whose tests all stayed under the bar)."""

    figures: dict[str, CovariateFigures]
    n_tests: int

    @property
    def unread(self) -> tuple[str, ...]:
        return tuple(name for name, f in self.figures.items() if not f.moves)

    @property
    def covariates_read(self) -> bool:
        """Whether any covariate is read."""
        return any(f.moves for f in self.figures.values())

    def to_dict(self) -> dict[str, float]:
        """JSON-friendly figures (model files store them): the largest |t| of a covariate set aside (of any covariate
        where none is) against its bar, the tests and the covariates read and set aside."""
        aside = [self.figures[name] for name in self.unread] or list(self.figures.values())
        closest = max(aside, key=lambda f: f.t - f.bar)
        return {  # named apart from the prior check's figures, which a fit may record beside them
            "screen_t": float(min(closest.t, 1e9)),
            "screen_bar": float(min(closest.bar, 1e9)),
            "screen_blocks": float(closest.n_blocks),
            "screen_tests": float(self.n_tests),
            "screen_read": float(len(self.figures) - len(self.unread)),
            "screen_unread": float(len(self.unread)),
        }


def block_z(dy: np.ndarray, dx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's z of the correlation of ``dy`` with ``dx`` (N, T) within each block of each row, and the row of each:
    a row's usable columns cut into ``min(SCREEN_BLOCKS, usable // MIN_BLOCK)`` consecutive blocks of near-equal size;
    blocks where either does not vary give none."""
    usable = np.isfinite(dy) & np.isfinite(dx)
    count = usable.sum(axis=1)
    blocks = np.minimum(SCREEN_BLOCKS, count // MIN_BLOCK)
    rank = np.cumsum(usable, axis=1) - 1
    block = (rank * blocks[:, None]) // np.maximum(count, 1)[:, None]
    unit = np.arange(len(dy))[:, None] * SCREEN_BLOCKS + block
    keep = usable & (blocks[:, None] > 0)
    unit, a, e = unit[keep], dx[keep], dy[keep]
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
    varies = (n >= 3) & (aa > 1e-12 * aa.max(initial=0.0)) & (ee > 1e-12 * ee.max(initial=0.0)) & (aa > 0) & (ee > 0)
    r = ae[varies] / np.sqrt(aa[varies] * ee[varies])
    return np.arctanh(np.clip(r, -MAX_CORRELATION, MAX_CORRELATION)), np.flatnonzero(varies) // SCREEN_BLOCKS


def consistent_t(z: np.ndarray) -> float:
    """|t| over the blocks of their mean z: an effect of one sign in every series."""
    return max(paired_t(z), paired_t(-z))


def series_strength(z: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each series' t over its blocks (three at least) of their mean z, taken to a standard normal through Student's t
    and squared (about chi-squared with one degree of freedom where nothing moves), and the series (rows) read."""
    units, codes, blocks = np.unique(rows, return_inverse=True, return_counts=True)
    total, squares = np.bincount(codes, weights=z), np.bincount(codes, weights=z * z)
    mean = total / blocks
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.sqrt(np.maximum(squares - blocks * mean**2, 0.0) / (blocks - 1) / blocks)
        t = mean / spread
    usable = (blocks >= 3) & (spread > 0)
    normal = stats.norm.isf(np.clip(stats.t.sf(t[usable], blocks[usable] - 1), 1e-300, 1.0))
    return normal**2, units[usable]


def by_series_t(actual: tuple[np.ndarray, np.ndarray], placebo: tuple[np.ndarray, np.ndarray]) -> tuple[float, int]:
    """An effect of either sign in each series (a holiday lifts one product's sales and lowers another's), which the
    mean over every block cancels: each series' squared strength (``series_strength``) against the same with the
    covariate ``PLACEBO_SHIFT`` periods off (which moves nothing, and shares whatever the blocks' z get wrong about
    their own spread), paired over the series; |t| of their mean difference, and the series read (0 below two)."""
    strength, units = series_strength(*actual)
    reference, placebo_units = series_strength(*placebo)
    both, mine, theirs = np.intersect1d(units, placebo_units, return_indices=True)
    if len(both) < 2:
        return 0.0, len(both)
    return paired_t(strength[mine] - reference[theirs]), len(both)


# Periods by which the placebo covariate of ``by_series_t`` is moved: a prime, off every common season's phase.
PLACEBO_SHIFT = 11


def screen_covariates(panel: Panel, season_length: int) -> ScreenResult | None:
    """The screen of ``panel``'s future-known covariates on its history (see the module). None where it has no
    evidence either way on any covariate (no block where one varies); a covariate without evidence either way is
    not in the result (it is read as declared)."""
    end = panel.last_col + 1
    start = max(0, end - SCREEN_SPAN)
    y = panel.y[:, start:end].astype(np.float64)
    lags = [lag for lag in sorted({1, season_length}) if 1 <= lag < y.shape[1]]
    zs = []  # (covariate, (z, rows) of the blocks, the same with the covariate moved) per form and lag
    for j, name in enumerate(panel.future_names):
        x = panel.future[:, start:end, j].astype(np.float64)
        x = np.where(np.isfinite(y), x, np.nan)  # the periods with a target only
        forms = [x]
        if len(np.unique(x[np.isfinite(x)])) > 2:  # a flag's square is the flag again (up to sign and shift)
            seen = np.isfinite(x)
            mean = np.where(seen, x, 0.0).sum(axis=1, keepdims=True) / np.maximum(seen.sum(axis=1, keepdims=True), 1)
            forms.append((x - mean) ** 2)
        for form in forms:
            for lag in lags:
                dy, dx = y[:, lag:] - y[:, :-lag], form[:, lag:] - form[:, :-lag]
                moved = np.full_like(dx, np.nan)
                moved[:, PLACEBO_SHIFT:] = dx[:, :-PLACEBO_SHIFT]
                zs.append((name, block_z(dy, dx), block_z(dy, moved)))
    # (covariate, |t|, blocks or series read) per test made
    tests = [(name, consistent_t(actual[0]), len(actual[0])) for name, actual, _ in zs if len(actual[0]) >= 2]
    for name, actual, placebo in zs:
        t, n_series = by_series_t(actual, placebo)
        if n_series >= 2:
            tests.append((name, t, n_series))
    figures: dict[str, CovariateFigures] = {}
    for name, t, n in tests:
        test = CovariateFigures(t, two_sided_bar(n, len(tests)), n)
        if name not in figures or test.t - test.bar > figures[name].t - figures[name].bar:
            figures[name] = test
    return ScreenResult(figures, len(tests)) if figures else None


def screened_note(result: ScreenResult, covariates: list[str]) -> str:
    """The note (the estimator warns with it) of a fit whose screen set covariates aside."""
    aside = result.unread
    figures = ", ".join(f"{name!r} |t| {result.figures[name].t:.2f} against {result.figures[name].bar:.2f}" for name in aside)
    read = [name for name in covariates if name not in aside]
    return (
        f"The declared future-known covariates {list(aside)} are not read: in the history, no difference of the target "
        f"follows their differences ({figures}, over blocks of each series), so the fit is the fit "
        + (f"with only {read} declared" if read else "without them")
        + " (fit_plan_.check has the figures). init='scratch' reads them regardless."
    )
