"""The seams between the prior, warm starts and model files, and inputs at the edges: each refused by name or right."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model
from test_prior import quarterly

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import make_panel
from forecaster.model import prior as prior_module
from forecaster.model.faithfulness import occlusion
from forecaster.model.prior import PriorUnavailableError


def _one_series(freq: str, length: int = 40) -> pd.DataFrame:
    return pd.DataFrame(
        {"unique_id": "a", "ds": pd.date_range("2000-01-01", periods=length, freq=freq), "y": np.arange(length, dtype=float)}
    )


def _messages(record) -> list[str]:
    return [str(w.message) for w in record]


# ---------------------------------------------------------------------------- 1. numbers as dates in specs
def test_a_spec_reads_years_written_as_numbers_with_its_date_format_and_names_its_own_column_without(tmp_path):
    from forecaster.evaluation.studies import SpecError, load_study_data

    pd.DataFrame({"store": "a", "year": range(1990, 2000), "sales": np.arange(10.0)}).to_csv(tmp_path / "s.csv", index=False)
    data = {"path": "s.csv", "id_col": "store", "time_col": "year", "target_col": "sales"}
    read = load_study_data({**data, "date_format": "%Y"}, tmp_path)[0]
    assert list(read["year"]) == list(pd.date_range("1990-01-01", periods=10, freq="YS"))
    refused = r"\[data\] `time_col` 'year' holds numbers \(int64, e.g. 1990\), not dates; .* e.g. date_format = \"%Y\""
    with pytest.raises(SpecError, match=refused) as error:
        load_study_data(data, tmp_path)
    assert "pd.to_datetime" not in str(error.value)


# ---------------------------------------------------------------------------- 2. more windows than fit
@pytest.mark.parametrize(("freq", "n_windows"), [("YS", 1000), ("QS", 1000), ("MS", 1000), ("D", 100_000)])
def test_more_windows_than_the_series_hold_say_how_many_fit(freq, n_windows):
    """Yearly and quarterly data raised pandas' OutOfBoundsDatetime, daily OutOfBoundsTimedelta."""
    # 40 periods, horizon 4, 5 periods of history at the first origin, 4 apart: (40 - 4 - 5) // 4 + 1 = 8 windows.
    with pytest.raises(ValueError, match=rf"`n_windows`={n_windows} .* the longest series has 40 periods, so at most 8 fit"):
        backtest(fast_model(horizon=4, input_size=8), _one_series(freq), n_windows=n_windows, baselines=(), progress=False)


def test_when_no_window_fits_the_message_names_what_the_fold_needs():
    """Series of 15 months, horizon 6: seasonal naive needs a season of history, 18 periods in all; the message
    blamed `n_windows` (already 1) and `step_size` (no part in it)."""
    df, _ = make_panel(n_series=4, length=15, seed=2, static=False, short_share=0.0)
    with pytest.raises(
        ValueError,
        match=r"No backtest window fits: .*12 periods of history up to it \(one season, for "
        r"the seasonal-naive baseline\), 18 in all, but the longest series has 15\. Lower `horizon`, or "
        r"`season_length`, or leave seasonal_naive out of `baselines`\.",
    ):
        backtest(fast_model(horizon=6, input_size=6), df[["unique_id", "ds", "y"]], n_windows=1, progress=False)


# ---------------------------------------------------------------------------- 3. occlusion's counts
@pytest.fixture(scope="module")
def small_fit():
    df, _ = make_panel(n_series=4, length=30, seed=1, static=False)
    df = df[["unique_id", "ds", "y"]]
    return fast_model(max_steps=2).fit(df), df


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n_points": -1}, r"`n_points` must be a positive integer up to 100,000; got -1"),
        ({"n_points": 2.5}, r"`n_points` must be a positive integer up to 100,000; got 2.5"),
        ({"n_points": 7}, r"`n_points`=7: .* input_size=12 periods; use n_points <= 6"),
        ({"max_series": -1}, r"`max_series` must be a positive integer or None \(every series\); got -1"),
        ({"max_series": 2.5}, r"`max_series` must be a positive integer or None \(every series\); got 2.5"),
    ],
)
def test_occlusion_refuses_counts_it_cannot_use_by_name(small_fit, arguments, message):
    model, df = small_fit
    with pytest.raises(ValueError, match=message):
        occlusion(model, df, **arguments)


# ---------------------------------------------------------------------------- 4, 5, 6, 10. where a fit starts
def test_linear_skip_true_the_priors_own_setting_starts_from_the_prior():
    df = quarterly(n=4)
    assert Seq2SeqForecaster(horizon=4, linear_skip=True, max_steps=1, progress=False).fit(df).init_ == "pretrained"
    zero_shot = Seq2SeqForecaster.from_pretrained(horizon=4, linear_skip=True, progress=False)
    assert len(zero_shot.predict(df=df)) == 4 * 4


def test_auto_says_once_why_it_fits_from_scratch_where_the_prior_could_serve():
    df = quarterly(n=4)
    with pytest.warns(
        UserWarning, match=r"init='auto' fits from scratch, not from the quarterly prior: warm_start=True"
    ) as record:
        model = Seq2SeqForecaster(horizon=4, warm_start=True, max_steps=2, progress=False).fit(df)
    assert model.init_ == "scratch" and sum("init='auto'" in m for m in _messages(record)) == 1
    with pytest.warns(
        UserWarning, match=r"not from the quarterly prior: The quarterly prior was trained with hidden_size=64; got 16"
    ):
        Seq2SeqForecaster(horizon=4, hidden_size=16, max_steps=2, progress=False).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # outside the prior's scope (weekly data) auto fits from scratch as documented
        weekly, _ = make_panel(n_series=3, length=60, freq="W", seed=2, static=False)
        weekly_model = Seq2SeqForecaster(horizon=4, input_size=8, max_steps=2, progress=False)
        assert weekly_model.fit(weekly[["unique_id", "ds", "y"]]).init_ == "scratch"
        model.fit(df)  # the warm start continues from its own weights: nothing to say
    assert model.init_ == "warm start"


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A copy of the shipped priors to break, read instead of the package's (the cache cleared around it)."""
    folder = tmp_path / "pretrained"
    shutil.copytree(prior_module.PRIOR_FOLDER, folder)
    monkeypatch.setattr(prior_module, "PRIOR_FOLDER", folder)
    prior_module.load_prior.cache_clear()
    yield folder
    prior_module.load_prior.cache_clear()


def test_a_broken_prior_install_is_named_and_auto_says_it_fits_from_scratch(installed):
    df = quarterly(n=4)
    (installed / "quarterly" / "manifest.json").unlink()
    with pytest.warns(UserWarning, match=r"not from the quarterly prior: The quarterly prior is not installed .* reinstall"):
        assert Seq2SeqForecaster(horizon=4, max_steps=2, progress=False).fit(df).init_ == "scratch"
    shutil.rmtree(installed / "quarterly")
    shutil.copytree(installed / "yearly", installed / "quarterly")  # two families swapped
    swapped = r"installed as the quarterly prior .* trained on 'YS-JAN' data, a yearly prior: the installation is broken"
    with pytest.raises(PriorUnavailableError, match=swapped) as error:
        Seq2SeqForecaster(horizon=4, init="pretrained", max_steps=0, progress=False).fit(df)
    assert "season_length" not in str(error.value)
    with pytest.warns(UserWarning, match=swapped):
        Seq2SeqForecaster(horizon=4, max_steps=2, progress=False).fit(df)


def test_warm_starting_a_zero_shot_model_names_the_path_the_fit_takes():
    """It warned "fitting from scratch" while it fitted from the prior."""
    monthly, _ = make_panel(n_series=3, length=40, freq="MS", seed=1, static=False)
    model = Seq2SeqForecaster.from_pretrained(horizon=4, progress=False)
    model.fit(quarterly(n=3))  # the prior as it is, fitted to quarterly data (a predict would not fit it)
    model.set_params(warm_start=True)
    with pytest.warns(UserWarning, match=r"frequency changed \('QS-OCT' -> 'MS'\); fitting from the monthly prior") as record:
        model.fit(monthly[["unique_id", "ds", "y"]])
    assert model.init_ == "pretrained" and not any("from scratch" in m for m in _messages(record))


# ---------------------------------------------------------------------------- 7. how a model was fitted, saved
def test_a_model_file_records_how_the_fit_started(tmp_path):
    df = quarterly(n=4)
    for model in (
        Seq2SeqForecaster(horizon=4, max_steps=1, progress=False).fit(df),
        Seq2SeqForecaster(horizon=4, init="scratch", max_steps=1, progress=False).fit(df),
    ):
        model.save(tmp_path / model.init_)
        assert Seq2SeqForecaster.load(tmp_path / model.init_).init_ == model.init_
    warm = Seq2SeqForecaster.load(tmp_path / "scratch").set_params(warm_start=True).fit(df)
    warm.save(tmp_path / "warm")
    assert Seq2SeqForecaster.load(tmp_path / "warm").init_ == "warm start"


# ---------------------------------------------------------------------------- 11. dates written day first
def test_day_first_monthly_dates_are_refused_naming_the_column_not_read_as_days_of_january():
    firsts = [f"01/{m:02d}/{2019 + k // 12}" for k, m in enumerate(list(range(1, 13)) * 2)]  # 1 January 2019, ...
    months = pd.DataFrame({"unique_id": "a", "month": firsts, "y": np.arange(24.0)})
    model = fast_model(horizon=2, input_size=4, max_steps=1, time_col="month")
    with pytest.raises(ValueError, match=r"Column `month` holds dates such as '01/02/2019' that read differently day first"):
        model.fit(months)


def test_day_first_daily_dates_that_read_one_way_are_read_so_without_pandas_warning():
    days = pd.date_range("2019-04-13", periods=30, freq="D")
    df = pd.DataFrame({"unique_id": "a", "ds": days.strftime("%d/%m/%Y"), "y": np.arange(30.0)})
    with warnings.catch_warnings(record=True) as record:  # pandas warns from compiled code: recorded, never raised
        warnings.simplefilter("always")
        model = fast_model(horizon=2, input_size=4, max_steps=1).fit(df)
    assert not any("dayfirst" in m for m in _messages(record))
    assert model.freq_ == "D" and model.training_end_["a"] == days[-1]


# ---------------------------------------------------------------------------- the padding warning of the prior's window
def test_the_priors_window_is_not_reported_as_padding_the_user_should_fix():
    """Every zero-shot forecast of series shorter than the prior's window warned (115 copies in the test run): the
    window is the prior's, trained on padded windows, and not the user's to change."""
    monthly, _ = make_panel(n_series=3, length=30, freq="MS", seed=1, static=False)
    monthly = monthly[["unique_id", "ds", "y"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Seq2SeqForecaster.from_pretrained(horizon=4, progress=False).predict(df=monthly)
        Seq2SeqForecaster(horizon=4, init="pretrained", max_steps=0, progress=False).fit(monthly).predict()
    with pytest.warns(UserWarning, match=r"less history than input_size=36"):  # a window the user chose still warns
        fast_model(horizon=4, input_size=36, max_steps=1).fit(monthly)
