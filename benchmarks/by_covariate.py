"""Errors and interval coverage by each value of each future-known flag or code, on suite panels.

Runs the suite's backtest of a panel (its 3 origins, ``ceil(h / 2)`` apart, the defaults, the group's baselines) and
prints the report's table by covariate value (``forecaster/evaluation/by_covariate.py``): the scored points on each
value, the mean absolute error of seq2seq and the reference baseline, and the share of actuals inside each one's
outermost interval. It reads a fitted suite run; nothing in it chooses a default.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/by_covariate.py --panels retail_daily_synthetic chicago_daily
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import suite  # noqa: E402

from forecaster import Seq2SeqForecaster, backtest  # noqa: E402
from forecaster.evaluation.by_covariate import covariate_breakdown  # noqa: E402


def breakdown(name: str) -> pd.DataFrame:
    """The suite backtest of panel ``name`` and its table by covariate value."""
    group, load = suite.PANELS[name]
    df, horizon, season, freq, future = load()
    if not future:
        raise SystemExit(f"{name} declares no future-known covariate.")
    model = Seq2SeqForecaster(
        horizon=horizon, freq=freq, season_length=season, progress=False, num_threads=1, future_covariates=list(future)
    )
    baselines = suite.GROUP_BASELINES.get(group) or suite.GROUP_BASELINES.get(suite.ALSO_IN.get(name, ""), suite.BASELINES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = backtest(
            model, df, n_windows=suite.N_ORIGINS, step_size=math.ceil(horizon / 2), baselines=baselines, progress=False
        )
    return covariate_breakdown(result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panels", nargs="+", required=True, help="suite panels with future-known covariates")
    args = parser.parse_args()
    for name in args.panels:
        table = breakdown(name)
        print(f"\n{name}\n" + (table.round(4).to_string(index=False) if len(table) else "no flag or code to split by"))


if __name__ == "__main__":
    main()
