"""Evaluation: metrics (``metrics``), the fold plan (``folds``), the ways of running folds (``executors``), scoring
(``scoring``), statsforecast baselines (``baselines``), the backtest (``backtest``), reports (``report``) and study
specs (``studies``)."""
