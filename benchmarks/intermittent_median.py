"""The median of intermittent daily series: how often it sits above zero where most days are zero.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/intermittent_median.py

30 daily series of 758 days, each day selling 1 + Poisson(2) units with probability 0.25 (zero otherwise), fitted
with the defaults on all but the last 28 days and forecast 28 days ahead. Prints the share of zeros in those days,
the share of medians above zero, the largest median, and the mean absolute error of the median and of a forecast of
zero (docs/model.md, `nonnegative`).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from forecaster import Seq2SeqForecaster


def main() -> None:
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    ds = pd.date_range("2023-01-01", periods=758, freq="D")
    sales = [(rng.random(758) < 0.25) * (1 + rng.poisson(2, 758)).astype(float) for _ in range(30)]
    df = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": ds, "y": y}) for i, y in enumerate(sales)])
    cut = ds[-29]
    train, test = df[df["ds"] <= cut], df[df["ds"] > cut]
    tick = time.perf_counter()
    model = Seq2SeqForecaster(28, progress=False, random_state=0).fit(train)
    forecast = model.predict().merge(test, on=["unique_id", "ds"])
    blend = model.state_.calibration.blend if model.state_.calibration else None
    print(f"fit + predict {time.perf_counter() - tick:.0f} s; partners' weights {blend}")
    print(
        f"zeros among the actuals {np.mean(forecast['y'] == 0):.3f}; medians above zero {np.mean(forecast['y_hat'] > 0):.3f} "
        f"(largest {forecast['y_hat'].max():.2f}); 10% quantiles above zero {np.mean(forecast['y_hat_q10'] > 0):.3f}"
    )
    mae, zero = np.abs(forecast["y"] - forecast["y_hat"]).mean(), np.abs(forecast["y"]).mean()
    print(f"MAE of the median {mae:.4f}; of a forecast of zero {zero:.4f}")


if __name__ == "__main__":
    main()
