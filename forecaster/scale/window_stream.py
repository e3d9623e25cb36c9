"""Training windows drawn on the workers, partition by partition, and streamed to the training loop.

A Dask fit (``forecaster.scale.dask_fit``) trains on windows of every series without the frame reaching
the client. Each *round* brings ``ROUND_STEPS x batch_size`` windows in ``DRAWS_PER_ROUND`` draws of an
equal share; each draw reads one partition, picked in proportion to its training windows (systematic
sampling over the partitions in a random order, so a round's draws spread over the panel), and draws its
share on the worker that holds (or reads) it (:func:`draw_windows`): it picks series in proportion to their
windows, lays only those series out as a panel with the model's encodings, and assembles the windows exactly
as a pandas fit does. The client holds the network, the round being trained on and the rounds the workers
compute meanwhile (:class:`WindowStream`).

Every window of the panel has the same chance to be drawn as in a pandas fit (uniform over the panel's
windows). What differs is that one round's batches come from at most ``DRAWS_PER_ROUND`` partitions,
shuffled together: partitions of many series each keep a round diverse. A panel split into far more
partitions than a fit's rounds x ``DRAWS_PER_ROUND`` reads leaves some partitions unread, as a pandas fit
leaves some windows undrawn.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import dask
import numpy as np
import pandas as pd
import torch

from ..callers import quiet
from ..data.features import FeatureParts, FeatureSpec, feature_parts
from ..data.frequency import normalise_freq
from ..data.panel import layout, refuse_short
from ..data.roles import CovariateRoles
from ..data.scaling import naive_error_table
from ..data.validation import Columns, clean_history
from ..data.windows import Batch, admissible_origins, assemble
from ..data.zero_tallies import zero_tallies
from ..model.inference import model_panel
from ..model.members import MemberTrainer, TrainingJob, _network
from ..model.training import TrainResult, train

__all__ = [
    "PartitionFacts",
    "StreamPlan",
    "WindowDraw",
    "WindowStream",
    "draw_windows",
    "held_out",
    "partition_facts",
    "series_windows",
    "stream_trainer",
]

# Training steps of windows one round brings to the client.
ROUND_STEPS = 512
# Draws per round, each a read of one partition picked in proportion to its windows (``WindowStream._allocate``):
# more draws spread a round over more partitions, for more reads on the workers.
DRAWS_PER_ROUND = 16


def flat_partition(part: pd.DataFrame, id_col: str) -> pd.DataFrame:
    """A partition with the id as a column (a frame read from Parquet with ``index=id_col`` holds it as the index)."""
    if id_col not in part.columns and part.index.name == id_col:
        return part.reset_index()
    return part


@dataclass(frozen=True)
class PartitionFacts:
    """Rows, series, training windows and covariate statistics of one partition of whole series (one read of it)."""

    rows: int
    series: int
    windows: int
    features: FeatureParts
    zeros: dict = field(default_factory=dict)  # ``data.zero_tallies``: what the closures are learnt from


def series_windows(length: np.ndarray, horizon: int, min_history: int) -> np.ndarray:
    """Training windows of series of ``length`` periods: origins with ``min_history`` periods before and a horizon after."""
    return np.maximum(np.asarray(length, dtype=np.int64) - horizon - min_history + 1, 0)


def partition_facts(
    part: pd.DataFrame,
    columns: Columns,
    roles: CovariateRoles,
    freq: str,
    horizon: int,
    min_history: int,
    fill_gaps: bool,
) -> PartitionFacts:
    """Validate a partition as ``fit`` validates a frame, and count it.

    Bad rows, timestamps off the frequency, gaps (unless ``fill_gaps``) and series shorter than one horizon
    raise here, naming the column, series and timestamp, before any training.
    """
    if part.empty:
        return PartitionFacts(0, 0, 0, feature_parts(part, columns.id, roles))
    frame, _ = clean_history(flat_partition(part, columns.id), columns, roles)
    _, ids, _, _, _, length = layout(frame, columns, normalise_freq(freq), 0, 0, fill_gaps)
    refuse_short(np.asarray(ids), length, horizon)
    windows = int(series_windows(length, horizon, min_history).sum())
    zeros = zero_tallies(frame, columns.target, roles.future)
    return PartitionFacts(len(frame), len(ids), windows, feature_parts(frame, columns.id, roles), zeros)


@dataclass(frozen=True)
class StreamPlan:
    """What a worker needs to turn a partition into training windows: the fitted encodings and the window rules."""

    columns: Columns
    roles: CovariateRoles
    features: FeatureSpec
    freq: str
    horizon: int
    units: dict
    fill_gaps: bool
    input_size: int
    min_history: int
    scaler: str
    weigh_by_naive_error: bool
    # Periods before a series' end at which its training targets stop: for every series (early stopping holds
    # out the last windows of each), and for the sample's held-out series.
    cut_every: int
    cuts: dict


@dataclass(frozen=True)
class WindowDraw:
    """Windows drawn from one partition: the network's inputs and targets, and which window each is."""

    batch: Batch
    ids: np.ndarray  # (B,) series id of each window
    origins: np.ndarray  # (B,) datetime64 timestamp of each window's origin (its last history period)


def _empty_draw() -> WindowDraw:
    return WindowDraw(None, np.empty(0, dtype=object), np.empty(0, dtype="datetime64[ns]"))


def draw_windows(part: pd.DataFrame, count: int, seed: int, plan: StreamPlan) -> WindowDraw:
    """``count`` training windows of a partition of whole series, drawn uniformly (runs on a worker).

    Series are picked in proportion to their windows (from their rows, less their held-out tails), then each pick
    takes one of its series' admissible windows at random, as ``fit`` admits them (the held-out tails of
    ``plan.cuts`` excluded). Picks of series without an admissible window are dropped, so a draw can hold
    fewer than ``count`` windows.
    """
    columns = plan.columns
    if part.empty or count <= 0:
        return _empty_draw()
    part = flat_partition(part, columns.id)
    rng = np.random.default_rng(seed)
    # Periods per series from its first to its last observed target, gaps included (the windows of a series run
    # over that span, as ``fit`` reads it: empty rows before or after it are no history and weigh nothing).
    with quiet():  # a series that ends early was reported by the facts pass
        frame, _ = clean_history(part, columns, plan.roles)
    _, ids, _, _, _, length = layout(frame, columns, normalise_freq(plan.freq), 0, 0, True)
    sizes = pd.Series(length, index=pd.Index(np.asarray(ids, dtype=object)))
    # In an order that depends on the ids only, not on the order of the rows.
    sizes = sizes.iloc[np.argsort(pd.util.hash_array(sizes.index.astype(str).to_numpy(dtype=object)), kind="stable")]
    ids = pd.Series(np.asarray(sizes.index, dtype=object))
    cut = plan.cut_every + (ids.map(plan.cuts).fillna(0).to_numpy(dtype=np.int64) if plan.cuts else 0)
    weight = series_windows(sizes.to_numpy() - cut, plan.horizon, plan.min_history).astype(np.float64)
    if weight.sum() <= 0:
        return _empty_draw()
    picks = rng.choice(len(sizes), size=count, p=weight / weight.sum())
    chosen = sizes.index[np.unique(picks)]
    frame, _ = clean_history(part.loc[part[columns.id].isin(chosen)], columns, plan.roles)  # only the picked series
    with quiet():  # short series were reported by the fit on the client's sample
        panel = model_panel(
            frame,
            columns,
            plan.roles,
            plan.features,
            normalise_freq(plan.freq),
            plan.horizon,
            plan.units,
            fill_gaps=plan.fill_gaps,
        )
    held = pd.Series(np.asarray(panel.ids, dtype=object)).map(plan.cuts).fillna(0).to_numpy(dtype=np.int64) if plan.cuts else 0
    series, origins = admissible_origins(
        panel, plan.input_size, plan.horizon, np.full(len(panel.ids), panel.last_col) - plan.cut_every - held, plan.min_history
    )
    per_series = np.bincount(series, minlength=len(panel.ids))
    starts = np.cumsum(per_series) - per_series
    rows = pd.Index(panel.ids).get_indexer(sizes.index[picks])
    rows = rows[per_series[rows] > 0]
    if len(rows) == 0:
        return _empty_draw()
    at = starts[rows] + (rng.random(len(rows)) * per_series[rows]).astype(np.int64)
    series, origins = series[at], origins[at]
    table = naive_error_table(panel.y, plan.units["season_length"], panel.first_col) if plan.weigh_by_naive_error else None
    batch = assemble(panel, plan.roles, series, origins, plan.input_size, plan.horizon, plan.scaler, True, table)
    return WindowDraw(batch, panel.ids[series], panel.timestamps(series, origins))


def _concatenate(batches: Sequence[Batch]) -> Batch:
    fields = batches[0].__dict__
    return Batch(**{k: None if v is None else np.concatenate([b.__dict__[k] for b in batches]) for k, v in fields.items()})


def _take(batch: Batch, index: np.ndarray | slice) -> Batch:
    return Batch(**{k: None if v is None else v[index] for k, v in batch.__dict__.items()})


class WindowStream:
    """The training loop's batch source: rounds of windows drawn on the workers, the next computed while one trains.

    ``parts`` are the partitions (Dask delayed objects, each of whole series) and ``windows`` their training
    windows. Call it with any generator (the training loop passes its own; the stream keeps its
    seeded one, so a fit is repeatable on the same partitions); ``close`` drops the rounds in flight.
    """

    def __init__(
        self,
        parts: Sequence,
        windows: Sequence[int],
        plan: StreamPlan,
        batch_size: int,
        total_windows: int,
        seed: int,
        compute: Callable = dask.compute,
    ):
        weights = np.asarray(windows, dtype=np.float64)
        if weights.sum() <= 0:
            raise ValueError("No partition of `df` holds a training window: the series are too short for `horizon`.")
        self._parts, self._p = list(parts), weights / weights.sum()
        self._plan, self._batch_size, self._compute = plan, batch_size, compute
        self._left, self._round = total_windows, ROUND_STEPS * batch_size
        self._rng = np.random.default_rng(seed)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="window-stream")
        self._pending: deque[Future] = deque()
        self._buffer: Batch | None = None
        self._at = 0
        self.drawn = 0  # windows received so far
        for _ in range(2):
            self._request()

    def _request(self, at_least: int = 0) -> None:
        """Ask the workers for the next round (the rest of the budget, or ``at_least`` windows when it ran short)."""
        size = min(self._round, self._left) if self._left > 0 else at_least
        if size <= 0:
            return
        self._left -= size
        counts = self._allocate(size)
        seeds = self._rng.integers(0, 2**63 - 1, size=len(counts))
        draw = dask.delayed(draw_windows, pure=False)
        tasks = [draw(self._parts[k], int(counts[k]), int(seeds[k]), self._plan) for k in np.flatnonzero(counts)]
        self._pending.append(self._pool.submit(self._compute, *tasks))

    def _allocate(self, size: int) -> np.ndarray:
        """Windows per partition for a round of ``size``: ``DRAWS_PER_ROUND`` draws of an equal share each, at points
        spread evenly over the partitions' windows laid end to end in a random order (systematic sampling).

        A partition is drawn in proportion to its windows, so every window of the panel has the same chance in
        every round, and a round's draws are spread over the panel rather than clustered.
        """
        order = self._rng.permutation(np.flatnonzero(self._p > 0))
        ends = np.cumsum(self._p[order])
        points = (self._rng.random() + np.arange(DRAWS_PER_ROUND)) / DRAWS_PER_ROUND * ends[-1]
        hit = order[np.minimum(np.searchsorted(ends, points, side="right"), len(order) - 1)]
        shares = np.full(DRAWS_PER_ROUND, size // DRAWS_PER_ROUND)
        shares[self._rng.permutation(DRAWS_PER_ROUND)[: size % DRAWS_PER_ROUND]] += 1
        return np.bincount(hit, weights=shares, minlength=len(self._parts)).astype(np.int64)

    def _next_round(self) -> None:
        leftover = None if self._buffer is None else _take(self._buffer, slice(self._at, None))
        while True:
            if not self._pending:
                self._request(at_least=self._round)
            draws = [d for d in self._pending.popleft().result() if d.batch is not None]
            self._request()
            got = [d.batch for d in draws]
            self.drawn += sum(len(b.loc) for b in got)
            if leftover is not None and len(leftover.loc):
                got.insert(0, leftover)
            if got and sum(len(b.loc) for b in got) >= self._batch_size:
                break
            leftover = _concatenate(got) if got else leftover
        merged = _concatenate(got)
        self._buffer, self._at = _take(merged, self._rng.permutation(len(merged.loc))), 0

    def __call__(self, rng: np.random.Generator | None = None) -> Batch:
        if self._buffer is None or self._at + self._batch_size > len(self._buffer.loc):
            self._next_round()
        batch = _take(self._buffer, slice(self._at, self._at + self._batch_size))
        self._at += self._batch_size
        return batch

    def close(self) -> None:
        """Stop asking for rounds; those in flight finish on the workers and are dropped."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pending.clear()
        self._buffer = None


def held_out(job: TrainingJob, plan: StreamPlan) -> StreamPlan:
    """``plan`` with the job's held-out tails: with early stopping every series gives up its last windows, as in a
    pandas fit; otherwise only the sample's held-out series do (the calibration windows)."""
    if job.holdout is None:
        return plan
    horizon = job.network.horizon
    if job.train.early_stopping:
        return replace(plan, cut_every=horizon + job.holdout.back - 1, cuts={})
    cut = job.holdout.cut(len(job.panel.ids), horizon)
    held = np.flatnonzero(cut > 0)
    return replace(plan, cut_every=0, cuts=dict(zip(job.panel.ids[held].tolist(), cut[held].tolist(), strict=True)))


def stream_trainer(
    parts: Sequence, windows: Sequence[int], plan_for: Callable[[TrainingJob], StreamPlan], compute: Callable = dask.compute
) -> MemberTrainer:
    """A member trainer (``Seq2SeqForecaster.fit_frame``'s ``train_members``) that trains on streamed windows.

    The job comes from the client's sample of series: its validation windows (early stopping), held-out
    series (whose tails no streamed window reads) and step budget (sized to the whole panel) are used; its
    own training windows are not. ``plan_for(job)`` gives the workers' :class:`StreamPlan` without cuts, with the
    job's own encodings (``job.features``).
    """

    def train_members(job: TrainingJob, seeds: list[int], initial: list[dict] | None) -> list[TrainResult]:
        plan = plan_for(job)
        starts = list(initial) if initial is not None else [None] * len(seeds)
        held = held_out(job, plan)
        return [_train_member(job, held, plan, seed, start) for seed, start in zip(seeds, starts, strict=True)]

    def _train_member(job: TrainingJob, plan: StreamPlan, full: StreamPlan, seed: int, initial: dict | None) -> TrainResult:
        previous = torch.get_num_threads()
        if job.num_threads:
            torch.set_num_threads(job.num_threads)
        stream = functools.partial(WindowStream, parts, windows, batch_size=job.train.batch_size, seed=seed, compute=compute)
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                budget = job.train.max_steps * job.train.batch_size
                result = _run(job, stream(plan, total_windows=budget), job.train, job.validation, seed, initial)
                if job.full_series is None or job.validation is None:
                    return result
                torch.manual_seed(seed)  # the refit on every window, as a pandas fit's
                again = replace(job.train, max_steps=max(result.best_step, 1), early_stopping=False)
                budget = again.max_steps * again.batch_size
                refit = _run(job, stream(full, total_windows=budget), again, None, seed, initial)
                refit.val_loss = result.val_loss
                return refit
        finally:
            torch.set_num_threads(previous)

    def _run(job, source: WindowStream, config, validation: Batch | None, seed: int, initial: dict | None) -> TrainResult:
        try:
            return train(_network(job, initial), source, validation, config, seed)
        finally:
            source.close()

    return train_members
