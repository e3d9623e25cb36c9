"""Scaling out: training across processes, and forecasting Dask DataFrames.

- :mod:`forecaster.scale.distributed`: ``fit_distributed`` trains one model with torch
  ``DistributedDataParallel`` (gloo on CPU, NCCL on GPU), either by spawning processes on one
  machine or in every process that ``torchrun`` starts.
- :mod:`forecaster.scale.dask_frames`: ``predict`` and ``explain`` of a fitted model on Dask
  DataFrames, lazily, one partition of whole series at a time (needs the ``dask`` extra).
- :mod:`forecaster.scale.dask_fit`: ``fit`` of a Dask DataFrame, on a sample of whole series drawn on the
  workers and sized to the step budget.
- :mod:`forecaster.scale.dask_baselines`: a backtest's statsforecast baselines on the workers of an
  active Dask client, one group of whole series per task (its refitted folds go there too, one task each).
- :mod:`forecaster.scale.dispatch`: recognises a Dask DataFrame without importing Dask, so that
  the estimator can route one to the Dask path while Dask stays optional.

Training across processes runs the same loop on every rank, and a Dask partition is forecast by the
same pandas path as a whole frame. Only a Dask ``fit`` differs from a pandas one: it fits a sample of the series.
"""
