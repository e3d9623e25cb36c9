"""forecaster: a global sequence-to-sequence forecaster with attention, and an honest backtester.

The package has five parts, each a folder:

- ``data``: validation of long frames, covariate roles and the leakage guard, the padded panel,
  windows (series, origin) and their scaling;
- ``partners``: the statistical models blended into the forecast (Theta, Holt-Winters);
- ``model``: the network, its training, the fitted state, the inference core and model files;
- ``evaluation``: the fold plan, its executors, scoring, baselines, the backtest, reports and studies;
- ``scale``: the Dask engines (fit, forecasts, backtests of Dask frames and on Dask clients) and training
  across processes;

and ``pretraining`` (the prior's corpus and training command; its weights ship in ``pretrained``).

Imports run one way: ``data`` <- ``partners`` <- ``model`` <- ``estimator`` (the scikit-learn-style
facade) <- ``plots`` <- ``evaluation`` <- ``scale`` <- ``cli`` and ``pretraining``; ``engines`` (the registry
through which the estimator and the backtest reach the Dask engines) is a leaf and ``datasets`` sits on ``data``
(tests/test_architecture.py checks it).
"""

from ._version import __version__
from .data.roles import LeakageError
from .estimator import Seq2SeqForecaster
from .evaluation.backtest import BacktestResult, backtest
from .model.files import ModelFileError
from .model.prior import PriorUnavailableError
from .model.training import TrainingDivergedError
from .scale.engines import register as _register_engines

_register_engines()

__all__ = [
    "BacktestResult",
    "LeakageError",
    "ModelFileError",
    "PriorUnavailableError",
    "Seq2SeqForecaster",
    "TrainingDivergedError",
    "__version__",
    "backtest",
]
