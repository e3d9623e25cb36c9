"""statsforecast baselines (SeasonalNaive, AutoETS) fitted on exactly the data the model sees."""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..callers import silenced, user_stacklevel
from ..data.frames import shown_ids
from ..data.frequency import normalise_freq, seasons_for
from ..engines import engine
from ..model.outputs import BASELINES, quantile_column

# The longest season statsforecast's ETS fits: AutoETS given a longer one fits no season at all.
ETS_MAX_SEASON = 24
# statsforecast's ETS is not free of units: a series of values near 1e-10 gets other forecasts, and narrower
# intervals, than the same series in units a million times larger (near 1e-7 it is still the same). A series whose
# largest value is below this is fitted in units a power of ten larger (its largest value between 1 and 10), and its
# forecasts divided back; every other series is fitted as it is.
SMALL_UNITS = 1e-4


def ets_fits_no_season(season_length: int) -> bool:
    """Whether AutoETS, given ``season_length``, fits no season at all (statsforecast's ETS fits none longer)."""
    return season_length > ETS_MAX_SEASON


def baseline_notes(baselines: Sequence[str], season_length: int) -> list[str]:
    """What a reader of a verdict against these baselines must know about them on this data (one sentence each)."""
    if "auto_ets" in baselines and ets_fits_no_season(season_length):
        return [
            f"AutoETS was fitted without a season: statsforecast's ETS fits none longer than {ETS_MAX_SEASON} periods "
            f"(the season here is {season_length}); MSTL (baseline 'mstl') fits long seasons"
        ]
    return []


def warn_baseline_notes(baselines: Sequence[str], season_length: int) -> None:
    """Each of :func:`baseline_notes` as a warning, once per backtest."""
    for note in baseline_notes(baselines, season_length):
        warnings.warn(note + ".", UserWarning, stacklevel=user_stacklevel())


def _interval_bound(q: float) -> tuple[str, int | float]:
    """Which bound of which central interval (statsforecast's ``level`` in percent) is the level-``q`` quantile."""
    width = round(abs(2.0 * q - 1.0) * 100.0, 6)
    return ("lo" if q < 0.5 else "hi"), int(width) if width == int(width) else width


def observed_history(data: pd.DataFrame) -> pd.DataFrame:
    """Each series of ``data`` (``unique_id``, ``ds``, ``y``; sorted by time within series) from its first observed
    target, with every later missing target carried forward from the last observation.

    statsforecast fits complete series only. Rows before a series' first observation are dropped rather than
    filled: a back-filled run of the first value would be fitted as if observed (a series first recorded decades
    after the panel starts would get AutoETS fitted on a constant run). A gap inside the series, or at its end when
    a fold's cutoff falls in one, is carried forward, the rule the model's statistical partners (Theta,
    Holt-Winters) follow too; so the baselines forecast from the fold's cutoff, as the model does.
    """
    observed = data["y"].notna()
    started = observed.groupby(data["unique_id"], sort=False).cummax().to_numpy()
    data = data.loc[started]
    if data["y"].isna().any():
        data = data.assign(y=data.groupby("unique_id", sort=False)["y"].ffill())
    return data


def run_baselines(
    train: pd.DataFrame,
    horizon: int,
    freq: str,
    season_length: int,
    names: tuple[str, ...],
    level: int | None = 80,
    quantiles: Sequence[float] = (),
    n_jobs: int = 1,
    id_col: str = "unique_id",
    time_col: str = "ds",
    target_col: str = "y",
) -> pd.DataFrame:
    """Forecast every series of ``train`` with the named baselines.

    Each series is read from its first observed target on (:func:`observed_history`): no value is invented
    before it, and a missing target after it carries the last observation forward, as the model's partners read
    it. Returns ``id_col``, ``ds`` and one
    column per baseline, plus ``<name>_lo`` / ``<name>_hi`` for a ``level``% interval and
    ``<name>_q10``-style columns for each of ``quantiles`` (from the central interval whose
    bound it is: q = 0.1 is the lower bound of the 80% interval; 0.5 is the point forecast).
    """
    from statsforecast.models import AutoETS, SeasonalNaive

    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"Unknown baseline(s) {unknown}; choose from {BASELINES}.")
    if not names:
        return pd.DataFrame(columns=[id_col, time_col])
    makers = {
        "seasonal_naive": lambda: SeasonalNaive(season_length=season_length, alias="seasonal_naive"),
        "auto_ets": lambda: AutoETS(season_length=season_length, alias="auto_ets"),
    }
    data = train[[id_col, time_col, target_col]].rename(columns={id_col: "unique_id", time_col: "ds", target_col: "y"})
    # statsforecast sorts the ids: integer codes stand in for them, so ids of mixed types (1, "b", 2.5) work too.
    codes, ids = pd.factorize(data["unique_id"], sort=False)
    data = data.assign(unique_id=codes)
    data = observed_history(data)
    factors = _unit_factors(data, len(ids))
    data = data.assign(y=data["y"].to_numpy() * factors[data["unique_id"].to_numpy()])
    bounds = {float(q): _interval_bound(float(q)) for q in quantiles if float(q) != 0.5}
    levels = sorted({lv for _, lv in bounds.values()} | ({level} if level else set()))
    common = [makers[n]() for n in names if n != "mstl"]
    parts = [] if not common else [_forecast(data, common, freq, horizon, levels, n_jobs)]
    if "mstl" in names:
        parts.append(_mstl_forecast(data, freq, season_length, horizon, levels, n_jobs))
    out = parts[0] if len(parts) == 1 else parts[0].merge(parts[1], on=["unique_id", "ds"], how="outer")
    codes = out["unique_id"].to_numpy(dtype=np.int64)
    values = [c for c in out.columns if c not in ("unique_id", "ds")]
    out[values] = out[values].to_numpy(dtype=np.float64) / factors[codes][:, None]  # back in the data's units
    out["unique_id"] = ids.take(codes)
    renames = {"unique_id": id_col, "ds": time_col}
    for n in names:
        renames[f"{n}-lo-{level}"] = f"{n}_lo"
        renames[f"{n}-hi-{level}"] = f"{n}_hi"
    for n in names:
        for q in quantiles:
            column = n + quantile_column(float(q))[len("y_hat") :]
            side, lv = bounds.get(float(q), (None, None))
            out[column] = out[n] if side is None else out[f"{n}-{side}-{lv}"]
    out = out.rename(columns=renames)
    out = out[[c for c in out.columns if "-lo-" not in c and "-hi-" not in c]]  # statsforecast's own interval columns
    for n in names:
        bad = ~np.isfinite(out[n].to_numpy(dtype=float))
        if bad.any():
            series = shown_ids(pd.unique(out.loc[bad, id_col]))
            raise FloatingPointError(f"Baseline `{n}` produced non-finite forecasts for series {series}.")
    return out


def _unit_factors(data: pd.DataFrame, n_series: int) -> np.ndarray:
    """Per series code, the power of ten its targets are multiplied by before statsforecast fits them: 1, or where its
    largest absolute value is below ``SMALL_UNITS`` (and above zero), the one that puts it between 1 and 10."""
    largest = data["y"].abs().groupby(data["unique_id"]).max().reindex(range(n_series), fill_value=0.0).to_numpy()
    small = (largest > 0) & (largest < SMALL_UNITS)
    power = np.minimum(-np.floor(np.log10(np.where(small, largest, 1.0))), 300.0)  # 10 ** 324 would overflow
    return np.where(small, 10.0**power, 1.0)


def _forecast(data: pd.DataFrame, models: list, freq: str, horizon: int, levels: list, n_jobs: int) -> pd.DataFrame:
    """statsforecast's forecasts of ``models`` for every series of ``data`` (``unique_id``, ``ds``, ``y``)."""
    from statsforecast import StatsForecast

    engine = StatsForecast(models=models, freq=freq, n_jobs=n_jobs)
    with silenced():
        out = engine.forecast(df=data, h=horizon, level=levels or None)
    return out.reset_index() if "unique_id" not in out.columns else out


def _mstl_forecast(data: pd.DataFrame, freq: str, season_length: int, horizon: int, levels: list, n_jobs: int) -> pd.DataFrame:
    """MSTL's forecasts, each series with the seasons its history holds at least twice (``frequency.seasons_for``).

    STL reads a season from two full cycles or more (R's ``forecast::mstl`` drops the seasons a series is too short
    for, and so does this): a daily series of a year gets the weekly season alone, one of two years or more the
    yearly too. The trend goes to AutoETS without a season (statsforecast's default), and a series too short for
    any season gets that model alone. Series are grouped by the seasons they get, one statsforecast call per group.
    """
    from statsforecast.models import MSTL, AutoETS

    seasons = seasons_for(normalise_freq(freq), season_length)  # shortest first: a series holds a prefix of them
    lengths = data.groupby("unique_id", sort=False).size()
    held = (lengths.to_numpy()[:, None] >= 2 * np.asarray(seasons, dtype=np.int64)[None, :]).sum(axis=1)
    frames = []
    for count in np.unique(held):  # one group per number of seasons held: at most one more than there are seasons
        allowed = list(seasons[:count])
        model = MSTL(season_length=allowed, alias="mstl") if allowed else AutoETS(model="ZZN", alias="mstl")
        members = lengths.index[held == count]
        frames.append(_forecast(data[data["unique_id"].isin(members)], [model], freq, horizon, levels, n_jobs))
    return pd.concat(frames, ignore_index=True)


def on_calendar(train: pd.DataFrame, fold, plan) -> pd.DataFrame:
    """The fold's training rows of each series (id, time, target) on every period of the calendar from its first row
    to its cutoff, a missing target where a period has no row (a panel fitted with ``fill_gaps=True``); ``train``
    itself where no period is absent.

    statsforecast reads the rows it is given as consecutive periods: without them, seasonal naive read a gap's far
    side a season out of phase, AutoETS was fitted on another series, a cutoff inside a gap was forecast from the
    last row before it, and a series of a few rows far apart stopped the backtest. On the calendar, the gap's targets
    are carried forward (:func:`observed_history`), the rule the model's partners follow, and every baseline forecasts
    from the cutoff.
    """
    columns = plan.columns
    frame = train[[columns.id, columns.time, columns.target]]
    by_series = frame.groupby(columns.id, sort=False, observed=True)[columns.time]
    first, rows = by_series.min(), by_series.size()
    if not len(first):
        return train
    cutoffs = fold.cutoffs.reindex(first.index)
    grid = pd.date_range(first.min(), cutoffs.max(), freq=plan.offset or normalise_freq(plan.freq))
    start, stop = grid.searchsorted(first.to_numpy()), grid.searchsorted(cutoffs.to_numpy()) + 1
    periods = stop - start
    if (periods == rows.to_numpy()).all():
        return train
    position = np.arange(periods.sum()) + np.repeat(start - np.concatenate([[0], np.cumsum(periods)[:-1]]), periods)
    calendar = pd.DataFrame({columns.id: first.index.repeat(periods), columns.time: grid[position]})
    return calendar.merge(frame, on=[columns.id, columns.time], how="left")


# Baselines run once in this process: statsforecast compiles its models (numba) on their first call, which took a
# second or more and was timed as the first fold's fit.
_WARMED: set[str] = set()


def _warm_up(name: str, quantiles) -> None:
    """Run baseline ``name`` once on a short series, untimed, so that its compilation is not counted as its fit."""
    if name in _WARMED:
        return
    quarters = pd.date_range("2000-01-01", periods=40, freq="QS")
    short = pd.DataFrame({"unique_id": "a", "ds": quarters, "y": 10.0 + np.sin(np.arange(40.0))})
    with silenced():
        run_baselines(short, 4, "QS", 4, (name,), level=None, quantiles=quantiles)
    _WARMED.add(name)


def fold_baselines(train: pd.DataFrame, fold, plan, n_jobs: int, seconds: dict, report=None, client=None) -> pd.DataFrame | None:
    """The fold's statsforecast forecasts, one baseline at a time so that each one's time is its own (in ``seconds``).

    With an active Dask client, each baseline runs on its workers, one group of whole series per task (the
    ``"dask.baselines"`` engine, ``forecaster.scale.dask_baselines``); the forecasts are the same.
    """
    columns, frames = plan.columns, []
    train = on_calendar(train, fold, plan) if plan.baselines else train
    for name in plan.baselines:
        if report is not None:
            report.step(f"baseline {name}" + (" on the Dask cluster" if client is not None else ""))
        if client is None:
            _warm_up(name, plan.levels)
        tick = time.perf_counter()
        kwargs = dict(time_col=columns.time, target_col=columns.target, quantiles=plan.levels)
        arguments = dict(horizon=plan.horizon, freq=plan.freq, season_length=plan.season, names=(name,), **kwargs)
        if client is not None:
            base = engine("dask.baselines")(client, train, columns.id, **arguments)
        else:
            base = run_baselines(train, n_jobs=n_jobs, id_col=columns.id, **arguments)
        frames.append(base.set_index([columns.id, columns.time]))
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - tick
    if not frames:
        return None
    base = pd.concat(frames, axis=1).reset_index()
    return base.assign(cutoff=base[columns.id].map(fold.cutoffs))
