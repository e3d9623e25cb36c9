"""Scaling out: training across processes, and forecasting Dask DataFrames.

- :mod:`forecaster.scale.distributed`: ``fit_distributed`` trains one model with torch
  ``DistributedDataParallel`` (gloo on CPU, NCCL on GPU), either by spawning processes on one
  machine or in every process that ``torchrun`` starts.
- :mod:`forecaster.scale.dask_frames`: ``predict`` and ``explain`` of a fitted model on Dask
  DataFrames, lazily, one partition of whole series at a time (needs the ``dask`` extra).
- :mod:`forecaster.scale.dask_fit` and :mod:`forecaster.scale.window_stream`: ``fit`` of a Dask DataFrame,
  on training windows of every series drawn on the workers and streamed to the training loop.
- :mod:`forecaster.scale.dask_backtest`: ``backtest`` of a Dask DataFrame, each partition forecast,
  baselined and scored where it lies.
- :mod:`forecaster.scale.dask_baselines`: a backtest's statsforecast baselines on the workers of an
  active Dask client, one group of whole series per task (its refitted folds go there too, one task each).
- :mod:`forecaster.scale.dispatch`: recognises a Dask DataFrame without importing Dask, so that
  the estimator can route one to the Dask path while Dask stays optional.

Training across processes runs the same loop on every rank, and a Dask partition is forecast by the
same pandas path as a whole frame. A Dask ``fit`` trains on windows drawn on the workers, with the encodings and
step budget of the whole panel; what needs the series themselves (validation, calibration) uses a sample of them.
"""
