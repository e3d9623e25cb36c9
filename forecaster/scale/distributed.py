"""Training one model across processes with torch ``DistributedDataParallel`` (gloo on CPU, NCCL on GPU).

Every process (rank) holds the same training job: the panel, the windows, the network's shapes.
Each rank samples its training windows from its own share of the series (rows ``rank``,
``rank + world_size``, ...), draws ``ceil(batch_size / world_size)`` windows per step, and DDP
averages the gradients, so a step of ``world_size`` ranks consumes ``batch_size`` windows as a
one-process step does, and the step budget means the same. The loop is ``model.training.train``
itself; this module only wraps the network in DDP and shards the job.

Every rank evaluates the same validation windows (the last horizon of every series) with the same
weights, so early stopping takes the same decision on every rank without a further collective.

Two launches:

- ``fit_distributed(model, df, world_size=2)`` spawns ``world_size`` processes on this machine
  (gloo, or NCCL with one GPU per rank), and the calling process ends with the fitted model.
- Under ``torchrun`` (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT`` in the environment),
  every process calls ``fit_distributed(model, df)`` with the same ``df``; every rank ends fitted
  with identical weights (save from rank 0).
"""

from __future__ import annotations

import math
import os
import signal
import socket
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
import torch.multiprocessing as torch_mp
from torch.nn.parallel import DistributedDataParallel

from ..data.validation import clean_history, columns_and_roles
from ..model.members import MemberTrainer, TrainingJob, _fit_member
from ..model.resolve import resolve_device
from ..model.training import TrainResult

__all__ = ["fit_distributed", "shard_job", "rank_seed"]

ENVIRONMENT = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def backend_for(device: str) -> str:
    """NCCL for CUDA devices, gloo otherwise."""
    return "nccl" if device.startswith("cuda") else "gloo"


def rank_seed(seed: int, rank: int) -> int:
    """The sampling seed of ``rank``: ``seed`` itself on rank 0, an independent stream on every other rank."""
    return seed if rank == 0 else int(np.random.SeedSequence([seed, rank]).generate_state(1)[0])


def _rank_windows(series: np.ndarray | None, origins: np.ndarray | None, rank: int, world_size: int):
    if series is None or origins is None:
        return series, origins
    mine = series % world_size == rank
    return series[mine], origins[mine]


def shard_job(job: TrainingJob, rank: int, world_size: int, device: str) -> TrainingJob:
    """The job of one rank: the training windows of its share of the series, its part of each batch, its device.

    Raises:
        ValueError: some rank's share would hold no training window (fewer usable series than processes).
            Every rank checks every share, so all ranks raise together instead of some waiting forever.
    """
    served = np.unique(job.series % world_size).size
    if served < world_size:
        raise ValueError(
            f"Only {served} of {world_size} ranks would have a training window: the panel has too few usable "
            f"series for `world_size`={world_size}; use fewer processes."
        )
    series, origins = _rank_windows(job.series, job.origins, rank, world_size)
    full_series, full_origins = _rank_windows(job.full_series, job.full_origins, rank, world_size)
    train = replace(
        job.train,
        batch_size=math.ceil(job.train.batch_size / world_size),
        progress=job.train.progress and rank == 0,
        device=device,
    )
    return replace(
        job,
        series=series,
        origins=origins,
        full_series=full_series,
        full_origins=full_origins,
        train=train,
        num_threads=job.num_threads or 1,
    )


def _rank_device(device: str, local_rank: int) -> str:
    if not device.startswith("cuda"):
        return device
    torch.cuda.set_device(local_rank)
    return f"cuda:{local_rank}"


def _wrapper(device: str):
    """Wraps a network in DDP. ``static_graph``: the same parameters take part in every step, so a network
    built with a parameter that a configuration leaves unused needs no search for unused parameters per step.
    Its only buffer (step-lag distances) is a constant, the same on every rank."""
    device_ids = [torch.device(device).index] if device.startswith("cuda") else None

    def wrap(network: torch.nn.Module) -> torch.nn.Module:
        return DistributedDataParallel(network, device_ids=device_ids, static_graph=True)

    return wrap


def train_rank(
    job: TrainingJob, seeds: list[int], initial: list[dict] | None, local_rank: int = 0, parent: int | None = None
) -> list[TrainResult]:
    """Train every member on this rank of the initialised default process group; one result per seed.

    DDP broadcasts rank 0's initial weights when it wraps each network, so all ranks start alike;
    each rank then samples with its own seed (``rank_seed``) from its own windows.
    """
    rank, world_size = dist.get_rank(), dist.get_world_size()
    device = _rank_device(job.train.device, local_rank)
    mine = shard_job(job, rank, world_size, device)
    starts = list(initial) if initial is not None else [None] * len(seeds)
    wrap = _wrapper(device)
    return [_fit_member(mine, rank_seed(seed, rank), start, parent, wrap) for seed, start in zip(seeds, starts, strict=True)]


# ------------------------------------------------------------------ spawned on one machine
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawned_rank(
    rank: int,
    job: TrainingJob,
    seeds: list[int],
    initial: list[dict] | None,
    world_size: int,
    port: int,
    out: str,
    parent: int,
) -> None:
    """Entry point of a spawned rank: join the group, train, write this rank's results to ``out``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group; the launching process ends the ranks
    dist.init_process_group(
        backend_for(job.train.device), init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size
    )
    try:
        results = train_rank(job, seeds, initial, local_rank=rank, parent=parent)
        for result in results:
            result.state_dict = {name: tensor.cpu() for name, tensor in result.state_dict.items()}
        torch.save(results, Path(out) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def check_ranks_agree(per_rank: list[list[TrainResult]]) -> None:
    """Every rank's weights must equal rank 0's; DDP guarantees it, and a silent mismatch would be a wrong model.

    Raises:
        RuntimeError: naming the first rank and tensor that differ.
    """
    for rank, results in enumerate(per_rank[1:], start=1):
        for member, (first, other) in enumerate(zip(per_rank[0], results, strict=True)):
            for name, tensor in first.state_dict.items():
                if not torch.equal(tensor, other.state_dict[name]):
                    raise RuntimeError(f"Rank {rank} ended with other weights than rank 0 (member {member}, `{name}`).")


def spawn_trainer(world_size: int) -> MemberTrainer:
    """A member trainer that spawns ``world_size`` ranks on this machine and returns rank 0's results."""

    def train_members(job: TrainingJob, seeds: list[int], initial: list[dict] | None) -> list[TrainResult]:
        if job.train.device.startswith("cuda") and torch.cuda.device_count() < world_size:
            raise ValueError(f"`world_size`={world_size} needs one GPU per process; {torch.cuda.device_count()} visible.")
        with tempfile.TemporaryDirectory(prefix="forecaster-ddp-") as out:
            args = (job, seeds, initial, world_size, _free_port(), out, os.getpid())
            context = torch_mp.start_processes(_spawned_rank, args=args, nprocs=world_size, join=False, start_method="spawn")
            try:
                while not context.join():
                    pass
            except BaseException:
                for process in context.processes:
                    if process.is_alive():
                        process.terminate()
                for process in context.processes:
                    process.join(5.0)
                raise
            per_rank = [torch.load(Path(out) / f"rank{rank}.pt", weights_only=False) for rank in range(world_size)]
        check_ranks_agree(per_rank)
        return per_rank[0]

    return train_members


# ------------------------------------------------------------------ torchrun
def _environment_trainer() -> MemberTrainer:
    """A member trainer for a process that ``torchrun`` (or any launcher setting ``RANK`` ...) started."""

    def train_members(job: TrainingJob, seeds: list[int], initial: list[dict] | None) -> list[TrainResult]:
        joined = not dist.is_initialized()
        if joined:
            dist.init_process_group(backend_for(job.train.device), init_method="env://")
        try:
            return train_rank(job, seeds, initial, local_rank=int(os.environ.get("LOCAL_RANK", "0")))
        finally:
            if joined:
                dist.destroy_process_group()

    return train_members


def fit_distributed(model, df: pd.DataFrame, world_size: int | None = None):
    """Fit ``model`` (a ``Seq2SeqForecaster``) on ``df`` with data-parallel training across processes; returns ``model``.

    Args:
        model: the estimator; its parameters mean what they mean for ``fit`` (``batch_size`` is
            the windows of one step over all ranks; ``n_jobs`` is not used).
        df: the training frame, as for ``fit``. Under ``torchrun`` every rank passes the same frame.
        world_size: processes to spawn on this machine (one GPU each with ``device="cuda"``). None:
            the processes are already running under ``torchrun``, which set ``RANK``, ``WORLD_SIZE``,
            ``MASTER_ADDR`` and ``MASTER_PORT``; or a process group is already initialised.

    Raises:
        ValueError: ``world_size`` is not a positive integer, or is None outside ``torchrun``.
    """
    if world_size is None:
        missing = [name for name in ENVIRONMENT if name not in os.environ]
        if missing and not dist.is_initialized():
            raise ValueError(
                f"`world_size` is None but {missing} are not set: pass `world_size` to spawn processes on this "
                "machine, or launch with torchrun."
            )
        trainer = _environment_trainer()
    else:
        if isinstance(world_size, bool) or not isinstance(world_size, int | np.integer) or world_size < 1:
            raise ValueError(f"`world_size` must be a positive integer, got {world_size!r}.")
        trainer = spawn_trainer(int(world_size))
    resolve_device(model.device)  # an unavailable device fails here, before any process starts
    frame, tz = clean_history(df, *columns_and_roles(model.get_params()))
    model.fit_frame(frame, tz, trainer)
    return model
