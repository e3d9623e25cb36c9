"""The Dask engines, registered under the names the estimator and the backtest look up (``forecaster.engines``).

Each one imports its module when first called, so that importing forecaster does not import Dask.
"""

from __future__ import annotations

from .. import engines


def _fit(model, df):
    from .dask_fit import fit_dask

    return fit_dask(model, df)


def _forecast_frames(model, method: str, df, future_df, **options):
    from .dask_frames import forecast_frames

    return forecast_frames(model, method, df, future_df, **options)


def _backtest(model, df, future_covariates_df, **arguments):
    from .dask_backtest import backtest_dask

    return backtest_dask(model, df, future_covariates_df, **arguments)


def _folds(plan, template, folds, report, client):
    from .dask_folds import cluster_folds

    return cluster_folds(plan, template, folds, report, client)


def _baselines(client, train, id_col: str, **arguments):
    from .dask_baselines import cluster_baselines

    return cluster_baselines(client, train, id_col, **arguments)


def register() -> None:
    """Register every Dask engine (``forecaster/__init__.py`` calls this once)."""
    for name, function in (
        ("dask.fit", _fit),
        ("dask.forecast_frames", _forecast_frames),
        ("dask.backtest", _backtest),
        ("dask.folds", _folds),
        ("dask.baselines", _baselines),
    ):
        engines.register(name, function)
