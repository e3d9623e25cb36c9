"""forecaster: a global sequence-to-sequence forecaster with attention, and an honest backtester."""

__version__ = "0.1.0"

from .backtest import BacktestResult, backtest  # noqa: E402
from .estimator import Seq2SeqForecaster  # noqa: E402
from .roles import LeakageError  # noqa: E402
from .training import TrainingDivergedError  # noqa: E402

__all__ = ["BacktestResult", "LeakageError", "Seq2SeqForecaster", "TrainingDivergedError", "__version__", "backtest"]
