"""Evaluation: metrics (``metrics``), the fold plan (``folds``), the ways of running folds (``executors``), scoring
(``scoring``), statsforecast baselines (``baselines``), the backtest (``backtest``), the numbers a report shows
(``analysis``), reports (``report`` and its ``report_*`` parts) and study specs (``studies``)."""
