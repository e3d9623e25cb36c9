"""Scaling out: training across processes, and forecasting Dask DataFrames.

- :mod:`forecaster.scale.distributed`: ``fit_distributed`` trains one model with torch
  ``DistributedDataParallel`` (gloo on CPU, NCCL on GPU), either by spawning processes on one
  machine or in every process that ``torchrun`` starts.
- :mod:`forecaster.scale.dask_frames`: ``predict`` and ``explain`` of a fitted model on Dask
  DataFrames, lazily, one partition of whole series at a time (needs the ``dask`` extra).
- :mod:`forecaster.scale.dask_fit` and :mod:`forecaster.scale.window_stream`: ``fit`` of a Dask DataFrame,
  on training windows of every series drawn on the workers and streamed to the training loop.
- :mod:`forecaster.scale.dask_backtest`: ``backtest`` of a Dask DataFrame, each partition forecast,
  baselined and scored where it lies, with the in-process backtest's fold plan, fold forecast and scorer.
- :mod:`forecaster.scale.dask_folds` and :mod:`forecaster.scale.dask_baselines`: a pandas backtest's refitted folds
  (one task each, when they do not depend on each other) and its baselines on the workers of an active Dask client.
- :mod:`forecaster.scale.engines`: registers these as the engines that the estimator and the backtest look up by
  name (``forecaster.engines``), so that they never import this floor and Dask stays optional.

Training across processes runs the same loop on every rank, and a Dask partition is forecast by the
same pandas path as a whole frame. A Dask ``fit`` trains on windows drawn on the workers, with the encodings and
step budget of the whole panel; what needs the series themselves (validation, calibration) uses a sample of them.
"""
