"""Training one or several ensemble members, in this process or in worker processes.

Each member is the same architecture trained from its own seed on the same windows.
Members are independent, so with ``n_jobs > 1`` they train in parallel worker
processes (one torch thread each), which on small recurrent layers gives far more
throughput than one process using several threads.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..data.panel import Panel
from ..data.roles import CovariateRoles
from ..data.scaling import NaiveErrorTable
from ..data.windows import Batch, assemble
from .network import NetworkConfig, Seq2SeqNetwork
from .training import TrainConfig, TrainResult, train


@dataclass(frozen=True)
class TrainingJob:
    """Everything a member needs to train; plain data, so it can be sent to a worker process."""

    panel: Panel
    roles: CovariateRoles
    series: np.ndarray  # (W,) series row of each training window
    origins: np.ndarray  # (W,) origin column of each training window
    validation: Batch | None
    network: NetworkConfig
    train: TrainConfig
    scaler: str
    num_threads: int | None
    full_series: np.ndarray | None = None  # all windows, including the held-out last horizon,
    full_origins: np.ndarray | None = None  # for the refit after early stopping (None: no refit)
    naive_table: NaiveErrorTable | None = None  # weighs windows by their seasonal-naive error (None: unweighted)


def _sampler(job: TrainingJob, series: np.ndarray, origins: np.ndarray):
    config = job.network

    def sample(rng: np.random.Generator) -> Batch:
        pick = rng.integers(0, len(series), job.train.batch_size)
        return assemble(
            job.panel,
            job.roles,
            series[pick],
            origins[pick],
            config.input_size,
            config.horizon,
            job.scaler,
            True,
            job.naive_table,
        )

    return sample


def _fit_member(job: TrainingJob, seed: int, initial: dict | None = None) -> TrainResult:
    """Train one member, from ``initial`` weights when given (a warm start); with a refit, retrain on every window."""
    previous = torch.get_num_threads()
    if job.num_threads:
        torch.set_num_threads(job.num_threads)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            network = _network(job, initial)
            result = train(network, _sampler(job, job.series, job.origins), job.validation, job.train, seed)
            if job.full_series is None or job.validation is None or result.interrupted:
                return result
            torch.manual_seed(seed)
            network = _network(job, initial)
            again = replace(job.train, max_steps=max(result.best_step, 1), early_stopping=False)
            refit = train(network, _sampler(job, job.full_series, job.full_origins), None, again, seed)
            refit.val_loss = result.val_loss
            return refit
    finally:
        torch.set_num_threads(previous)


def _network(job: TrainingJob, initial: dict | None) -> Seq2SeqNetwork:
    network = Seq2SeqNetwork(job.network)
    if initial is not None:
        network.load_state_dict(initial)
    return network.to(job.train.device)


def fit_members(job: TrainingJob, seeds: list[int], n_jobs: int, initial: list[dict] | None = None) -> list[TrainResult]:
    """Train one member per seed, each from its ``initial`` weights when given; in ``n_jobs`` processes when ``n_jobs > 1``."""
    starts = list(initial) if initial is not None else [None] * len(seeds)
    workers = min(n_jobs, len(seeds))
    if workers <= 1:
        results = []
        for seed, start in zip(seeds, starts, strict=True):
            results.append(_fit_member(job, seed, start))
            if results[-1].interrupted:  # Ctrl-C ends the whole fit; keep the members trained so far
                break
        return results
    quiet = replace(job, train=replace(job.train, progress=False), num_threads=job.num_threads or 1)
    context = multiprocessing.get_context("spawn")  # fork after torch's thread pools start is unsafe
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_fit_member, [quiet] * len(seeds), seeds, starts))
