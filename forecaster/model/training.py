"""The fit loop: a function of a network, a batch source and a config; it knows no column names."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from ..data.windows import Batch
from .optimizer import Adam, cosine_learning_rate


class TrainingDivergedError(RuntimeError):
    """The training loss became NaN or infinite."""


@dataclass(frozen=True)
class TrainConfig:
    max_steps: int
    batch_size: int
    learning_rate: float
    quantiles: tuple[float, ...]
    early_stopping: bool = True
    eval_every: int = 50
    patience: int = 6
    gradient_clip: float = 1.0
    progress: bool = True
    device: str = "cpu"
    evaluate_start: bool = False  # score the starting weights too (a fit from trained weights may keep them)
    # Per parameter name, a tensor of its shape multiplying the learning rate element by element (None: 1 everywhere).
    learning_rate_scales: dict[str, torch.Tensor] | None = None


@dataclass
class TrainResult:
    """Best weights found and the loss history."""

    state_dict: dict
    best_step: int
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[tuple[int, float]] = field(default_factory=list)


def to_tensors(batch: Batch, device: str) -> dict[str, torch.Tensor]:
    """Network inputs of a batch as tensors on ``device``."""
    return {
        "past_target": torch.from_numpy(batch.past_target).to(device),
        "past_observed": torch.from_numpy(batch.past_observed).to(device),
        "past_padded": torch.from_numpy(batch.past_padded).to(device),
        "past_covariates": torch.from_numpy(batch.past_covariates).to(device),
        "future_known": torch.from_numpy(batch.future_known).to(device),
        "static": torch.from_numpy(batch.static).to(device),
    }


def pinball_loss(
    prediction: torch.Tensor,
    target: torch.Tensor,
    observed: torch.Tensor,
    quantiles: torch.Tensor,
    weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean pinball loss over quantiles (B, H, Q), counting only observed targets, each window weighted by ``weight`` (B,)."""
    error = target[..., None] - prediction
    loss = torch.maximum(quantiles * error, (quantiles - 1.0) * error).mean(-1)
    mask = observed.float()
    if weight is not None:
        loss = loss * weight[:, None]
    return (loss * mask).sum() / mask.sum().clamp(min=1.0)


def batch_loss(network: torch.nn.Module, batch: Batch, quantiles: torch.Tensor, device: str) -> tuple[torch.Tensor, float]:
    """Loss of the network on a batch with targets, and the number of observed targets."""
    prediction, _ = network(**to_tensors(batch, device))
    target = torch.from_numpy(batch.target).to(device)
    observed = torch.from_numpy(batch.target_observed).to(device)
    weight = None if batch.target_weight is None else torch.from_numpy(batch.target_weight).to(device)
    return pinball_loss(prediction, target, observed, quantiles, weight), float(observed.sum())


def evaluate(network: torch.nn.Module, batch: Batch, quantiles: torch.Tensor, device: str, chunk: int = 4096) -> float:
    """Validation pinball loss, in chunks, without gradients."""
    network.eval()
    total, weight = 0.0, 0.0
    with torch.inference_mode():
        for start in range(0, len(batch.loc), chunk):
            loss, n = batch_loss(network, _slice(batch, slice(start, start + chunk)), quantiles, device)
            total += float(loss) * n
            weight += n
    network.train()
    return total / max(weight, 1.0)


def _slice(batch: Batch, index: slice) -> Batch:
    return Batch(**{k: (None if v is None else v[index]) for k, v in batch.__dict__.items()})


def train(
    network: torch.nn.Module,
    sample_batch: Callable[[np.random.Generator], Batch],
    validation: Batch | None,
    config: TrainConfig,
    seed: int,
    on_step: Callable[[int], None] | None = None,
) -> TrainResult:
    """Fit ``network`` with Adam, gradient clipping and (optionally) early stopping.

    Args:
        network: the network, or a ``DistributedDataParallel`` wrapper around it (training on several
            processes); the weights returned are always the network's own (no ``module.`` prefix).
        sample_batch: draws one training batch with the given generator.
        validation: held-out windows (the last horizon of each series) for early stopping.
        on_step: called with the step number before every step (a worker process checks there
            that its parent is still alive); whatever it raises ends the training.

    Returns:
        The best weights (lowest validation loss), or the last checkpoint when there is no
        validation; checkpoints are taken every ``eval_every`` steps and at the last step.

    Raises:
        TrainingDivergedError: the loss became NaN or infinite.
        KeyboardInterrupt: propagates as it came: an interrupt ends the fit, and no partly
            trained weights come back.
    """
    rng = np.random.default_rng(seed)
    device = config.device
    module = getattr(network, "module", network)  # the network itself under a DistributedDataParallel wrapper
    quantiles = torch.tensor(config.quantiles, dtype=torch.float32, device=device)
    named = list(module.named_parameters())
    scales = None if config.learning_rate_scales is None else [config.learning_rate_scales.get(n) for n, _ in named]
    optimizer = Adam([p for _, p in named], config.learning_rate, scales=scales)
    use_validation = config.early_stopping and validation is not None
    result = TrainResult(state_dict=copy.deepcopy(module.state_dict()), best_step=0)
    best, stale = math.inf, 0
    if use_validation and config.evaluate_start:
        best = evaluate(network, validation, quantiles, device)
        result.val_loss.append((0, best))
    network.train()
    # disable=None: a bar on a terminal only; a log file gets no redrawn bars (see evaluation/progress.py).
    bar = tqdm(range(1, config.max_steps + 1), disable=None if config.progress else True, desc="training", leave=False)
    try:
        for step in bar:
            if on_step is not None:
                on_step(step)
            loss, _ = batch_loss(network, sample_batch(rng), quantiles, device)
            if not torch.isfinite(loss):
                raise TrainingDivergedError(
                    f"Training diverged at step {step} (loss is {loss.item()}); try a lower `learning_rate` "
                    "or another `scaler` (e.g. 'robust')."
                )
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(network.parameters(), config.gradient_clip, foreach=True)
            optimizer.set_learning_rate(cosine_learning_rate(config.learning_rate, step - 1, config.max_steps))
            optimizer.step()
            result.train_loss.append(loss.item())
            if step % config.eval_every and step != config.max_steps:
                continue
            current = (
                evaluate(network, validation, quantiles, device)
                if use_validation
                else float(np.mean(result.train_loss[-config.eval_every :]))
            )
            if use_validation:
                result.val_loss.append((step, current))
            # Without validation, `current` is the training loss averaged over the last eval_every steps.
            bar.set_postfix({"loss": f"{result.train_loss[-1]:.4f}", "val" if use_validation else "avg": f"{current:.4f}"})
            if current < best or not use_validation:  # without validation, keep the latest checkpoint
                best, stale = min(best, current), 0
                result.state_dict, result.best_step = copy.deepcopy(module.state_dict()), step
            else:
                stale += 1
                if stale >= config.patience:
                    break
    finally:
        bar.close()
    return result
