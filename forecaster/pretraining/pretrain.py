"""Training one prior on its corpus, and writing it where the package ships its weights.

A prior is the estimator's own network trained at the family's longest horizon on windows from every
series of the corpus. Unlike a fit, a window may end past its series' last period (those targets are masked),
so short series still teach the first steps and long synthetic ones the last. There is no held-out part:
the corpus is not a panel anyone forecasts, and the validation suite judges the result.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..data.panel import Panel
from ..data.roles import CovariateRoles
from ..data.scaling import naive_error_table
from ..data.validation import Columns, clean_history
from ..data.windows import admissible_origins
from ..estimator import NINE_LEVELS, Seq2SeqForecaster
from ..model.execute import run_plan
from ..model.members import TrainingJob, fit_members
from ..model.network import Ensemble, NetworkConfig
from ..model.params import TRAINING_ONLY
from ..model.plan import FitPlan, panel_facts, plan_fit
from ..model.training import TrainConfig
from .corpus import FAMILIES, corpus

# Share of training windows drawn from the real (M3) series: synthetic windows outnumber them 5 to 20 times,
# and a prior that saw mostly synthetic data would learn their habits over real ones.
REAL_SHARE = 0.4
# Periods of history a pretraining window needs at least: short M3 yearly series (2 to 29 periods once cut)
# still teach the first steps.
MIN_HISTORY = 3
# Seeds of the shipped priors: one member each (several seeds together beat the mean single seed on the validation
# suite's small panels, and single seeds swing single panels by up to 8.5%; benchmarks/history/0.8.0.md).
SEEDS = (0, 1, 2)


def prior_estimator(family: str, steps: int) -> Seq2SeqForecaster:
    """The estimator whose parameters the ``family`` prior is trained (and shipped) with."""
    spec = FAMILIES[family]
    return Seq2SeqForecaster(
        horizon=spec.horizon,
        input_size=spec.input_size,
        freq=spec.freq,
        season_length=spec.season_length,
        quantiles=NINE_LEVELS,
        max_steps=steps,
        early_stopping=False,
        progress=True,
    )


def pretrain(family: str, steps: int, seed: int = 0, batch_size: int = 128, progress: bool = True) -> Seq2SeqForecaster:
    """Train the ``family`` prior for ``steps`` steps from ``seed`` (corpus and weights); returns it as a fitted model.

    The fit is planned (``model.plan.plan_fit``: from scratch, ``steps`` given) and run (``model.execute.run_plan``) as
    every fit is, on CPU, with the corpus's own training job (:func:`corpus_job`). The model has no history
    (``predict`` needs ``df``), no calibration (its quantiles are the network's) and no recorded start or plan.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"`steps` must be a positive integer; got {steps!r}.")
    model = prior_estimator(family, steps)
    model.set_params(batch_size=batch_size, progress=progress, random_state=seed)
    params = {**model.get_params(), "init": "scratch", "device": "cpu"}  # a prior starts from random weights, on CPU
    frame, tz = clean_history(corpus(family, seed), Columns.from_params(params), CovariateRoles.from_params(params))
    facts = panel_facts(params, frame)
    ran = {}

    def train_members(job: TrainingJob, seeds: list[int], initial) -> list:
        ran.update(job=job, started=time.perf_counter())
        return fit_members(job, seeds, 1, initial)

    fit = run_plan(plan_fit(params, facts), facts, frame, tz, params, train_members=train_members, corpus_job=corpus_job)
    # The corpus is not a panel anyone forecasts: the prior keeps no history tail and records no start, plan or blend
    # (a fit from it calibrates its own).
    empty = pd.DataFrame({"unique_id": pd.Series([], dtype=object), "ds": pd.Series([], dtype="datetime64[ns]"), "y": []})
    ends = pd.Series([], dtype="datetime64[ns]", name="ds", index=pd.Index([], dtype=object, name="unique_id"))
    state = replace(fit.state, history=empty, training_end=ends, init=None, plan=None, calibration=None)
    model.set_fitted(state, fit.network, "cpu", fit.results)
    panel, job, result = fit.panel, ran["job"], fit.results[0]
    model.pretraining_ = {
        "family": family,
        "steps": steps,
        "seed": seed,
        "batch_size": batch_size,
        "series": int(len(panel.ids)),
        "synthetic_series": int(sum(str(i).startswith("synthetic/") for i in panel.ids)),
        "windows": int(len(np.unique(job.series * (panel.y.shape[1] + 1) + job.origins))),
        "real_share": float(np.mean(~np.char.startswith(panel.ids.astype(str), "synthetic/")[job.series])),
        "seconds": round(time.perf_counter() - ran["started"], 1),
        "final_loss": float(np.mean(result.train_loss[-200:])),
    }
    return model


def corpus_job(
    panel: Panel, roles: CovariateRoles, config: NetworkConfig, plan: FitPlan, device: str, params: dict, *_
) -> TrainingJob:
    """The training job of a corpus (``run_plan``'s ``corpus_job``): every series' windows, real ones repeated to
    ``REAL_SHARE`` of the draws, with targets that may run past the series' end (masked there), weighted by the
    seasonal-naive error; no held-out windows, no early stopping."""
    # Windows whose targets may run past the series' end (masked there): origins up to the last period but one.
    series, origins = admissible_origins(
        panel, config.input_size, config.horizon, np.full(len(panel.ids), panel.last_col + config.horizon - 1), MIN_HISTORY
    )
    series, origins = weigh_real(panel.ids, series, origins)
    steps = plan.steps(params, len(series))  # as given
    train_config = TrainConfig(
        max_steps=steps,
        batch_size=params["batch_size"],
        learning_rate=float(params["learning_rate"]),
        quantiles=plan.quantiles,
        early_stopping=False,
        eval_every=max(steps // 20, 1),
        progress=params["progress"],
        device=device,
    )
    naive = naive_error_table(panel.y, plan.units["season_length"], panel.first_col)
    return TrainingJob(panel, roles, series, origins, None, config, train_config, params["scaler"], 1, naive_table=naive)


def pretrain_members(
    family: str, steps: int, seeds: Sequence[int] = SEEDS, batch_size: int = 128, workers: int = 1, progress: bool = True
) -> Seq2SeqForecaster:
    """The ``family`` prior as the package ships it: one member per seed, each :func:`pretrain`-ed on its own.

    Each seed draws its own synthetic corpus and initial weights; member k of the result is seed ``seeds[k]``'s network,
    exactly as :func:`pretrain` gives it alone. ``pretraining_`` records every member's run under ``members``.
    """
    return pretrain_families([family], steps, seeds, batch_size, workers, progress)[family]


def pretrain_families(
    families: Sequence[str],
    steps: int,
    seeds: Sequence[int] = SEEDS,
    batch_size: int = 128,
    workers: int = 1,
    progress: bool = True,
    finished: Callable[[str, Seq2SeqForecaster], None] | None = None,
) -> dict[str, Seq2SeqForecaster]:
    """:func:`pretrain_members` for several families, their members trained by ``workers`` processes side by side.

    Training runs on one torch thread, so each process takes one core; all members of all families share one pool,
    the families with the longest series first, so that no core waits for the last family's last seed.
    ``finished(family, prior)`` is called as soon as a family's last member is trained (the command writes it
    then, so a failure later loses only the families not yet done).
    """
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"`seeds` must be distinct and at least one; got {list(seeds)}.")
    if not families or len(set(families)) != len(families):
        raise ValueError(f"`families` must be distinct and at least one; got {list(families)}.")
    order = sorted(families, key=lambda family: -FAMILIES[family].synthetic_lengths[1])
    jobs = [(family, steps, int(seed), batch_size, progress and workers <= 1) for family in order for seed in seeds]
    trained: dict[str, dict[int, Seq2SeqForecaster]] = {family: {} for family in families}
    priors: dict[str, Seq2SeqForecaster] = {}

    def done(job: tuple, model: Seq2SeqForecaster) -> None:
        family, seed = job[0], job[2]
        trained[family][seed] = model
        if len(trained[family]) == len(seeds):
            priors[family] = combine_members([trained[family][seed] for seed in seeds])
            if finished is not None:
                finished(family, priors[family])

    if workers <= 1:
        for job in jobs:
            done(job, pretrain(*job))
    else:
        context = multiprocessing.get_context("spawn")  # torch's thread pools make fork unsafe
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context) as pool:
            futures = {pool.submit(pretrain, *job): job for job in jobs}
            try:
                for future in as_completed(futures):
                    done(futures[future], future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    return {family: priors[family] for family in families}


def combine_members(models: Sequence[Seq2SeqForecaster]) -> Seq2SeqForecaster:
    """One prior whose member k is the single network of ``models[k]``, each trained by :func:`pretrain`.

    Each model carries its run's record as ``pretraining_`` (a loaded prior: set it from its ``<family>.json``).

    Raises:
        ValueError: no model; a model with more than one member; members of other families, steps, batch sizes or
            repeated seeds; estimator parameters or network shapes that differ (a member would mean something else).
    """
    if not models:
        raise ValueError("A prior needs at least one member.")
    first = models[0]
    records = [model.pretraining_ for model in models]

    def meaning(model: Seq2SeqForecaster) -> dict:  # what gives the weights their meaning (not the seed, not progress)
        return {name: value for name, value in model.get_params().items() if name not in TRAINING_ONLY}

    if any(len(model.network_.members) != 1 for model in models):
        raise ValueError("Each model combined into a prior must hold exactly one member (one pretraining seed).")
    recipe = {(record["family"], record["steps"], record["batch_size"]) for record in records}
    seeds = [record["seed"] for record in records]
    if len(recipe) != 1 or len(set(seeds)) != len(seeds):
        raise ValueError(f"Members of one prior share family, steps and batch size, each from its own seed; got {records}.")
    for other in models[1:]:
        if other.state_.network != first.state_.network or meaning(other) != meaning(first):
            raise ValueError("Members of one prior must share the estimator's parameters and the network's shape.")
    network = Ensemble(first.state_.network, len(models))
    for member, model in zip(network.members, models, strict=True):
        member.load_state_dict(model.network_.members[0].state_dict())
    network.eval()
    combined = clone(first).set_params(n_models=None)  # a fit from the prior trains one member per member
    results = [model.train_results_[0] for model in models] if all(model.train_results_ for model in models) else []
    combined.set_fitted(replace(first.state_, n_members=len(models)), network, "cpu", results)
    combined.pretraining_ = {
        "family": records[0]["family"],
        "steps": records[0]["steps"],
        "seeds": seeds,
        "batch_size": records[0]["batch_size"],
        "members": records,
    }
    return combined


def weigh_real(ids: np.ndarray, series: np.ndarray, origins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The windows with those of real series repeated, so that they make up about ``REAL_SHARE`` of the draws."""
    real = ~np.char.startswith(ids.astype(str), "synthetic/")[series]
    n_real, n_synthetic = int(real.sum()), int((~real).sum())
    if n_real == 0 or n_synthetic == 0:
        return series, origins
    repeat = max(1, round(REAL_SHARE / (1 - REAL_SHARE) * n_synthetic / n_real))
    times = np.where(real, repeat, 1)
    return np.repeat(series, times), np.repeat(origins, times)


def write_prior(model: Seq2SeqForecaster, folder: Path) -> None:
    """Save a prior where the package loads it from (the safe model-file format)."""
    model.save(folder)
