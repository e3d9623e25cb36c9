"""forecaster: a global sequence-to-sequence forecaster with attention, and an honest backtester.

The package has four parts, each a folder:

- ``data``: validation of long frames, covariate roles and the leakage guard, the padded panel,
  windows (series, origin) and their scaling;
- ``partners``: the statistical models blended into the forecast (Theta, Holt-Winters);
- ``model``: the network, its training, the fitted state, the inference core and model files;
- ``evaluation``: metrics, rolling-origin folds, baselines, the backtest, reports and studies;

and ``pretraining`` (the prior's corpus and training command; its weights ship in ``pretrained``).

Imports run one way: ``data`` <- ``partners`` <- ``model`` <- ``estimator`` (the scikit-learn-style
facade) <- ``evaluation`` <- ``cli``; ``datasets`` and ``plots`` are leaves that evaluation and the
command line use (``plots`` reaches ``evaluation.faithfulness`` only inside ``attention_diagnostics``).
"""

from ._version import __version__
from .data.roles import LeakageError
from .estimator import Seq2SeqForecaster
from .evaluation.backtest import BacktestResult, backtest
from .model.persistence import ModelFileError
from .model.prior import PriorUnavailableError
from .model.training import TrainingDivergedError

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
