"""Warnings raised deep inside a fit or a forecast point at the user's line on every path (``callers.user_stacklevel``)."""

import warnings

import numpy as np
import pandas as pd
from conftest import fast_model


def _panel(lengths: tuple[int, ...]) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.concat(
        [
            pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2015-01-01", periods=n, freq="MS"), "y": 10 + rng.random(n)})
            for i, n in enumerate(lengths)
        ],
        ignore_index=True,
    )


def _lines(call, text: str) -> set[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    found = {w.filename for w in caught if text in str(w.message)}
    assert found, f"no warning containing {text!r}"
    return found


def test_the_short_history_warning_points_at_fit_and_at_predict():
    """It pointed inside the package (estimator.py) at predict(df=...), one frame short of the caller."""
    model = fast_model()
    assert _lines(lambda: model.fit(_panel((60, 60, 8))), "less history than input_size") == {__file__}
    assert _lines(lambda: model.predict(_panel((60, 9))), "less history than input_size") == {__file__}
