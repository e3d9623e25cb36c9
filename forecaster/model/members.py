"""Training one or several ensemble members, in this process or in worker processes.

Each member is the same architecture trained from its own seed on the same windows.
Members are independent, so with ``n_jobs > 1`` they train in parallel worker
processes (one torch thread each), which on small recurrent layers gives far more
throughput than one process using several threads.

An interrupt (Ctrl-C) or any error ends the whole fit: it propagates, and no member trained so
far comes back. Worker processes are terminated as soon as the main process stops waiting for
them, and a worker whose main process has died exits at its next training step.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..data.features import FeatureSpec
from ..data.panel import Panel
from ..data.roles import CovariateRoles
from ..data.scaling import NaiveErrorTable
from ..data.windows import Batch, assemble
from .calibration import HoldOut
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
    holdout: HoldOut | None = None  # series whose last windows no training window reads (for calibration)
    features: FeatureSpec | None = None  # the covariate encodings the panel was built with


# Trains one member per seed, each from its initial weights when given: ``fit_members`` with its ``n_jobs``
# bound, or a distributed trainer (``forecaster.scale.distributed``).
MemberTrainer = Callable[[TrainingJob, list[int], list[dict] | None], list[TrainResult]]


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


ORPHANED_EXIT_CODE = 3  # the exit status of a worker that stopped because its parent had gone


def exit_if_orphaned(
    parent: int, step: int = 0, *, getppid: Callable[[], int] = os.getppid, exit: Callable[[int], object] = os._exit
) -> None:
    """In a worker process: exit at once when ``parent`` (the process that started it) is gone.

    A process whose parent dies is re-parented (to init or a subreaper), so its parent pid
    changes; one ``getppid`` system call per training step (microseconds against milliseconds)
    keeps a killed fit from leaving workers training on as orphans for minutes. ``os._exit``
    because nobody is left to report to: no result to send, no cleanup worth waiting for.
    """
    if getppid() != parent:
        exit(ORPHANED_EXIT_CODE)


def _fit_member(
    job: TrainingJob,
    seed: int,
    initial: dict | None = None,
    parent: int | None = None,
    wrap: Callable[[torch.nn.Module], torch.nn.Module] | None = None,
) -> TrainResult:
    """Train one member, from ``initial`` weights when given (a warm start); with a refit, retrain on every window.

    ``parent``: in a worker process, the pid of the main process; the worker exits when it has gone.
    ``wrap``: applied to each new network before training (``forecaster.scale.distributed`` wraps it
    in ``DistributedDataParallel``); the weights returned are the network's own.
    """
    previous = torch.get_num_threads()
    if job.num_threads:
        torch.set_num_threads(job.num_threads)
    on_step = None if parent is None else functools.partial(exit_if_orphaned, parent)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            network = _network(job, initial, wrap)
            result = train(network, _sampler(job, job.series, job.origins), job.validation, job.train, seed, on_step)
            if job.full_series is None or job.validation is None or result.best_step == 0:
                return result  # no refit; best_step 0: the starting weights (the prior) were best
            torch.manual_seed(seed)
            network = _network(job, initial, wrap)
            again = replace(job.train, max_steps=max(result.best_step, 1), early_stopping=False)
            refit = train(network, _sampler(job, job.full_series, job.full_origins), None, again, seed, on_step)
            refit.val_loss = result.val_loss
            return refit
    finally:
        torch.set_num_threads(previous)


def _network(
    job: TrainingJob, initial: dict | None, wrap: Callable[[torch.nn.Module], torch.nn.Module] | None = None
) -> torch.nn.Module:
    network = Seq2SeqNetwork(job.network)
    if initial is not None:
        network.load_state_dict(initial)
    network = network.to(job.train.device)
    return network if wrap is None else wrap(network)


def fit_members(job: TrainingJob, seeds: list[int], n_jobs: int, initial: list[dict] | None = None) -> list[TrainResult]:
    """Train one member per seed, each from its ``initial`` weights when given; in ``n_jobs`` processes when ``n_jobs > 1``.

    Raises:
        KeyboardInterrupt: the fit was interrupted; no member comes back, and the workers are gone.
    """
    starts = list(initial) if initial is not None else [None] * len(seeds)
    # Members that take no step (a prior kept as it is) need no worker process: spawning one costs seconds.
    workers = min(n_jobs, len(seeds)) if job.train.max_steps > 0 else 1
    if workers <= 1:
        return [_fit_member(job, seed, start) for seed, start in zip(seeds, starts, strict=True)]
    quiet = replace(job, train=replace(job.train, progress=False), num_threads=job.num_threads or 1)
    context = multiprocessing.get_context("spawn")  # fork after torch's thread pools start is unsafe
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_ignore_interrupts)
    try:
        futures = [pool.submit(_fit_member, quiet, seed, start, os.getpid()) for seed, start in zip(seeds, starts, strict=True)]
        for future in as_completed(futures):
            future.result()  # the first member to fail (or an interrupt while waiting) stops the rest at once
        results = [future.result() for future in futures]
    except BrokenProcessPool as error:
        _terminate(pool)
        raise BrokenProcessPool(
            f"A worker process of `n_jobs={n_jobs}` stopped before its member was trained. Workers start with "
            "'spawn' and import the script that runs the fit: in a script, put the code that fits under "
            '`if __name__ == "__main__":`. A worker can also be stopped for lack of memory: try a smaller `n_jobs`, '
            "or `n_jobs=1`."
        ) from error
    except BaseException:
        _terminate(pool)
        raise
    pool.shutdown()
    return results


def _ignore_interrupts() -> None:
    """Worker initializer: Ctrl-C reaches the whole process group; the main process alone handles it (and ends the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate(pool: ProcessPoolExecutor, timeout: float = 5.0) -> None:
    """Stop ``pool`` now: drop the queued members and end the running ones, instead of waiting for them to finish.

    ``ProcessPoolExecutor`` has no public way to stop a running task (``shutdown`` only cancels
    queued ones and otherwise waits), so this terminates its worker processes, which it keeps in
    the private ``_processes`` map (pid to process); the executor's own thread then sees them gone,
    fails what is left and cleans up.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:  # first, so that a second Ctrl-C arriving meanwhile leaves no worker training
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + timeout
    for process in processes:
        process.join(max(deadline - time.monotonic(), 0.0))
        if process.is_alive():
            process.kill()
            process.join(1.0)
