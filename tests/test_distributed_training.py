"""Data-parallel training across processes (gloo on CPU): sharding, identical weights on every rank, a falling loss."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.multiprocessing as torch_mp
from conftest import future_frame

from forecaster import Seq2SeqForecaster
from forecaster.data.validation import clean_history
from forecaster.datasets import make_panel
from forecaster.model.training import TrainResult
from forecaster.scale.distributed import check_ranks_agree, fit_distributed, rank_seed, shard_job

SETTINGS = dict(horizon=6, input_size=12, hidden_size=16, max_steps=80, batch_size=32, progress=False, random_state=3)


def _panel():
    df, _ = make_panel(n_series=12, length=48, seed=2)
    return df


def _model(**overrides) -> Seq2SeqForecaster:
    return Seq2SeqForecaster(**{**SETTINGS, **overrides})


def _loss_fell(losses: list[float]) -> bool:
    """The last 20 steps' mean training loss is at least 10% below the first 10 steps' (one process: about 18%)."""
    return float(np.mean(losses[-20:])) < 0.9 * float(np.mean(losses[:10]))


def _torchrun_rank(rank: int, port: int, out: str) -> None:
    """One process as torchrun would start it: the rendezvous in the environment, the same frame on every rank."""
    torch.set_num_threads(1)
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    model = fit_distributed(_model(early_stopping=True), _panel())
    torch.save({"weights": model.network_.state_dict(), "loss": model.train_result_.train_loss}, Path(out) / f"rank{rank}.pt")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_torchrun_ranks_end_with_identical_weights_and_the_loss_falls(tmp_path):
    torch_mp.start_processes(_torchrun_rank, args=(_free_port(), str(tmp_path)), nprocs=2, start_method="spawn")
    first, second = (torch.load(tmp_path / f"rank{rank}.pt") for rank in range(2))
    assert first["weights"].keys() == second["weights"].keys()
    for name, tensor in first["weights"].items():
        assert torch.equal(tensor, second["weights"][name]), name
    # Each rank sampled its own windows, so the losses it saw differ while the weights do not.
    assert first["loss"] != second["loss"]
    assert _loss_fell(first["loss"]) and _loss_fell(second["loss"])


def test_spawned_fit_forecasts_and_learns():
    df = _panel()
    model = fit_distributed(_model(future_covariates=["promo"]), df, world_size=2)
    assert len(model.train_result_.train_loss) == SETTINGS["max_steps"]
    assert _loss_fell(model.train_result_.train_loss)
    forecast = model.predict(future_df=future_frame(df, 6))
    assert len(forecast) == 6 * df["unique_id"].nunique() and np.isfinite(forecast["y_hat"]).all()
    # Each series' forecast sits at its own level (levels differ up to 20-fold across series): forecasts in scaled
    # units, or series mixed up across ranks, put them far off (series reversed: ratios from 0.04 to 18).
    level = df.groupby("unique_id")["y"].apply(lambda y: y.tail(12).mean())
    ratio = forecast.groupby("unique_id")["y_hat"].mean() / level
    assert ratio.between(0.4, 2.5).all() and 0.7 <= ratio.median() <= 1.3, ratio.round(2).to_dict()


def test_each_rank_trains_on_its_own_series_and_its_part_of_the_batch():
    model, seen = _model(), {}

    def capture(job, seeds, initial):
        seen["job"] = job
        raise RuntimeError("captured")

    frame, tz = clean_history(_panel(), model._columns(), model._roles())
    with pytest.raises(RuntimeError, match="captured"):  # the job the estimator hands a member trainer
        model.fit_frame(frame, tz, capture)
    job = seen["job"]
    shards = [shard_job(job, rank, 3, "cpu") for rank in range(3)]
    assert [s.train.batch_size for s in shards] == [11, 11, 11]  # ceil(32 / 3): a step still takes >= batch_size windows
    series = [set(s.series.tolist()) for s in shards]
    assert not (series[0] & series[1]) and not (series[1] & series[2]) and not (series[0] & series[2])
    assert sum(len(s.series) for s in shards) == len(job.series)
    assert [s.train.progress for s in shards] == [job.train.progress, False, False]
    with pytest.raises(ValueError, match="too few usable series"):
        shard_job(job, 0, 100, "cpu")
    assert rank_seed(7, 0) == 7 and rank_seed(7, 1) != rank_seed(7, 2)


def test_ranks_that_disagree_are_refused():
    weights = {"w": torch.zeros(3)}
    same = [[TrainResult(dict(weights), 1)], [TrainResult({"w": torch.zeros(3)}, 1)]]
    check_ranks_agree(same)
    other = [[TrainResult(dict(weights), 1)], [TrainResult({"w": torch.tensor([0.0, 1.0, 0.0])}, 1)]]
    with pytest.raises(RuntimeError, match="Rank 1 .* `w`"):
        check_ranks_agree(other)


def test_bad_launch_arguments_are_named(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="`world_size` is None"):
        fit_distributed(_model(), _panel())
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="`world_size` must be a positive integer"):
            fit_distributed(_model(), _panel(), world_size=bad)
