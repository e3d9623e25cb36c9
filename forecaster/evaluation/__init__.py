"""Evaluation: metrics (``metrics``), rolling-origin folds (``splits``), statsforecast baselines
(``baselines``), the backtest (``backtest``), reports (``report``) and study specs (``studies``)."""
