"""A fit from scratch screens its future-known covariates on the history: one that moves nothing is not read, and the fit
is then the fit without it, bit for bit."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import future_frame
from test_covariate_check import quarterly_panel

from forecaster import Seq2SeqForecaster
from forecaster.data.panel import Panel
from forecaster.datasets import make_panel
from forecaster.evaluation.backtest import backtest
from forecaster.model.covariate_screen import screen_covariates

HORIZON = 7


def daily_panel(effect: float = 0.0, n: int = 10, seed: int = 0) -> pd.DataFrame:
    """``n`` daily series of 120 days (the prior serves no daily panel: fits train from scratch) with a ``promo`` that
    lifts the target by ``effect`` times the level."""
    df, _ = make_panel(
        n_series=n, length=120, freq="D", seed=seed, static=False, future_effect=effect, missing_share=0.0, short_share=0.0
    )
    return df[["unique_id", "ds", "y", "promo"]]


def with_flag(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with a random 0/1 ``flag`` (seed 0), which carries nothing."""
    return df.assign(flag=np.random.default_rng(0).integers(0, 2, len(df)).astype(float))


def model(**params) -> Seq2SeqForecaster:
    return Seq2SeqForecaster(horizon=HORIZON, progress=False, num_threads=1, **{"hidden_size": 16, **params})


def fit_recording(estimator: Seq2SeqForecaster, df: pd.DataFrame) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(df)
    return [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def bare_and_flagged():
    df = daily_panel().drop(columns="promo")
    bare = model()
    bare.fit(df)
    flagged = model(future_covariates=["flag"])
    messages = fit_recording(flagged, with_flag(df))
    return df, bare, flagged, messages


def test_a_flag_that_moves_nothing_leaves_the_fit_as_without_it(bare_and_flagged):
    """Before the screen, the flag was read: the fit took the covariate budget and the partners' covariate weights,
    and its forecasts moved (the suite's ``taylor`` panel by 26%)."""
    df, bare, flagged, messages = bare_and_flagged
    plan = flagged.fit_plan_
    assert plan.screen and not plan.covariates_read and plan.unread == ("flag",)
    assert plan.budget == bare.fit_plan_.budget == "default" and plan.max_steps == bare.fit_plan_.max_steps
    assert plan.check["screen_read"] == 0.0 and plan.check["screen_t"] < plan.check["screen_bar"]
    assert any("['flag'] are not read" in m and "'flag'" in m and "|t|" in m for m in messages)
    assert flagged.state_.calibration.blend == bare.state_.calibration.blend
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the flag in future_df is declared: no "undeclared columns" warning
        mine = flagged.predict(future_df=future_frame(df, HORIZON, freq="D", value=1.0, column="flag"))
    theirs = bare.predict()
    numbers = theirs.select_dtypes("number").columns
    np.testing.assert_array_equal(mine[numbers].to_numpy(), theirs[numbers].to_numpy())
    assert flagged.predict().shape == theirs.shape  # the fitted model needs no flag to forecast


def test_a_screened_model_file_loads_and_forecasts_the_same(bare_and_flagged, tmp_path):
    df, _, flagged, _ = bare_and_flagged
    flagged.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.fit_plan_.unread == ("flag",) and not loaded.fit_plan_.covariates_read
    future = future_frame(df, HORIZON, freq="D", value=0.0, column="flag")
    pd.testing.assert_frame_equal(loaded.predict(future_df=future), flagged.predict(future_df=future))


def test_a_covariate_that_moves_the_target_is_read():
    df = daily_panel(effect=0.3)
    estimator = model(future_covariates=["promo"])
    messages = fit_recording(estimator, df)
    plan = estimator.fit_plan_
    assert plan.screen and plan.covariates_read and plan.unread == () and plan.budget == "covariates"
    assert plan.check["screen_read"] == 1.0 and plan.check["screen_t"] > plan.check["screen_bar"]
    assert estimator.roles_.future == ("promo",)
    assert not any("are not read" in m for m in messages)


def test_a_flag_beside_a_covariate_that_moves_the_target_is_set_aside_alone():
    df = with_flag(daily_panel(effect=0.3))
    both = model(future_covariates=["promo", "flag"])
    messages = fit_recording(both, df)
    plan = both.fit_plan_
    assert plan.screen and plan.covariates_read and plan.unread == ("flag",) and plan.budget == "covariates"
    assert plan.check["screen_read"] == 1.0 and plan.check["screen_unread"] == 1.0
    assert any("['flag'] are not read" in m and "with only ['promo'] declared" in m for m in messages)
    alone = model(future_covariates=["promo"])
    fit_recording(alone, df.drop(columns="flag"))
    future = future_frame(df, HORIZON, freq="D", value=1.0).assign(flag=0.0)
    pd.testing.assert_frame_equal(both.predict(future_df=future), alone.predict(future_df=future.drop(columns="flag")))


@pytest.mark.parametrize("options", [{"init": "scratch"}, {"max_steps": 5}, {"closed_when": {"flag": 1.0}}])
def test_no_screen_where_the_user_chose_the_start_the_budget_or_a_closure(options):
    df = with_flag(daily_panel().drop(columns="promo"))
    estimator = model(future_covariates=["flag"], **options)
    messages = fit_recording(estimator, df)
    assert not estimator.fit_plan_.screen and estimator.fit_plan_.covariates_read and estimator.fit_plan_.check is None
    assert estimator.roles_.future == ("flag",)
    assert not any("are not read" in m for m in messages)


def test_a_learnt_closure_keeps_its_covariate_read():
    """A flag on which every target is zero closes those periods: the closure reads it, so it is not set aside, even
    where its differences follow nothing else."""
    df = with_flag(daily_panel().drop(columns="promo"))
    shut = df["ds"].dt.dayofweek == 6
    df = df.assign(y=df["y"].where(~shut, 0.0), closed=shut.astype(float))
    estimator = model(future_covariates=["flag", "closed"])
    fit_recording(estimator, df)
    assert estimator.fit_plan_.covariates_read and estimator.state_.closed_when == {"closed": [1.0]}


def test_a_backtest_with_a_flag_that_moves_nothing_scores_as_without_it():
    df = daily_panel(n=6).drop(columns="promo")
    settings = dict(n_windows=2, step_size=HORIZON, baselines=("seasonal_naive",), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare = backtest(model(), df, **settings)
        flagged = backtest(model(future_covariates=["flag"]), with_flag(df), **settings)
    pd.testing.assert_frame_equal(flagged.forecasts, bare.forecasts, check_exact=True)
    pd.testing.assert_frame_equal(flagged.metrics, bare.metrics, check_exact=True)


def panel_of(future: np.ndarray, y: np.ndarray) -> Panel:
    """A panel of the rows of ``y`` (N, T) with ``future`` (N, T) as their one future-known covariate (no horizon)."""
    rows, n = y.shape
    return Panel(
        ids=np.arange(rows),
        grid=pd.date_range("2020-01-01", periods=n, freq="h"),
        end=np.full(rows, n - 1),
        length=np.full(rows, n),
        pad=0,
        horizon=0,
        y=y.astype(np.float64),
        past=np.zeros((rows, n, 0), dtype=np.float32),
        future=future[:, :, None].astype(np.float32),
        calendar=np.zeros((n, 0), dtype=np.float32),
        static=np.zeros((rows, 0), dtype=np.float32),
        past_names=(),
        future_names=("temperature",),
    )


def one_series(future: np.ndarray, y: np.ndarray) -> Panel:
    return panel_of(future[None, :], y[None, :])


def test_a_covariate_whose_effect_turns_with_its_level_is_read_on_one_series():
    """Demand rising with both heat and cold: its differences hardly follow the temperature's, their squares do."""
    rng = np.random.default_rng(1)
    n = 24 * 60
    temperature = 18 + 8 * np.sin(2 * np.pi * np.arange(n) / (24 * 20)) + 3 * np.sin(2 * np.pi * np.arange(n) / 24)
    demand = 100 + 0.8 * (temperature - 18) ** 2 + rng.normal(0, 3, n)
    read = screen_covariates(one_series(temperature, demand), season_length=24)
    assert read is not None and read.unread == () and read.figures["temperature"].moves
    unrelated = screen_covariates(one_series(rng.normal(size=n), demand), season_length=24)
    assert unrelated is not None and unrelated.unread == ("temperature",)


def test_after_the_prior_check_a_flag_beside_a_covariate_that_moves_the_target_is_set_aside():
    """On a panel the prior serves, a covariate that moves the target sends the fit to train from scratch (the prior
    check); a flag declared beside it is then screened like any fit from scratch's."""
    df = with_flag(quarterly_panel(effect=1.0))
    estimator = Seq2SeqForecaster(horizon=4, future_covariates=["promo", "flag"], progress=False)
    fit_recording(estimator, df)
    plan = estimator.fit_plan_
    assert estimator.init_ == "scratch" and plan.prior_check and plan.screen and plan.unread == ("flag",)
    assert plan.check["covariates_read"] == 1.0 and plan.check["screen_unread"] == 1.0  # both checks' figures
    assert estimator.roles_.future == ("promo",)


def test_a_flag_whose_effect_changes_sign_between_series_is_read():
    """A holiday lifts half the series and lowers the other half: the mean over every block cancels, the test by
    series does not."""
    rng = np.random.default_rng(2)
    rows, n = 30, 200
    flag = (rng.random((rows, n)) < 0.1).astype(float)
    sign = np.where(np.arange(rows) < rows // 2, 1.0, -1.0)[:, None]
    y = 100 + rng.normal(0, 3, (rows, n)) + 6 * sign * flag
    read = screen_covariates(panel_of(flag, y), season_length=7)
    assert read is not None and read.unread == ()
    noise = screen_covariates(panel_of(flag, 100 + rng.normal(0, 3, (rows, n))), season_length=7)
    assert noise is not None and noise.unread == ("temperature",)


def test_a_promotion_run_in_one_series_of_ten_is_read():
    """A promotion that lifts one shop's sales by 30 noise units and no other's: the mean over the blocks and the
    mean over the series hardly move, the strongest series does."""
    rng = np.random.default_rng(2)
    rows, n = 10, 120
    promo = (rng.random((rows, n)) < 0.2).astype(float)
    y = 100 + rng.normal(0, 1, (rows, n))
    y[0] += 30 * promo[0]
    read = screen_covariates(panel_of(promo, y), season_length=7)
    assert read is not None and read.unread == ()


def test_a_covariate_that_varies_in_too_few_blocks_is_no_evidence_and_is_read():
    """One holiday in a 120-day history varies in one or two blocks: too few to clear any bar, so not evidence that it
    moves nothing, wherever it falls."""
    rng = np.random.default_rng(3)
    n = 120
    for day in (20, 45, 60, 89):
        holiday = (np.arange(n) == day).astype(float)
        y = 100 + 10 * np.sin(2 * np.pi * np.arange(n) / 7) + rng.normal(0, 5, n) - 40 * holiday
        result = screen_covariates(one_series(holiday, y), season_length=7)
        assert result is None or result.unread == ()


def test_a_flag_beside_a_covariate_leaves_its_figures_as_they_are():
    """Each covariate's bar is split over its own tests only: declaring flags beside a weak covariate cannot set it
    aside."""
    rng = np.random.default_rng(4)
    rows, n = 6, 120
    promo = (rng.random((rows, n)) < 0.2).astype(float)
    y = 100 + rng.normal(0, 3, (rows, n)) + 1.5 * promo
    alone = screen_covariates(panel_of(promo, y), season_length=7)
    both = panel_of(promo, y)
    flags = (rng.random((rows, n, 3)) < 0.5).astype(np.float32)
    both = replace(both, future=np.concatenate([both.future, flags], axis=2), future_names=("temperature", "a", "b", "c"))
    beside = screen_covariates(both, season_length=7)
    assert beside.figures["temperature"] == alone.figures["temperature"]


def test_a_warm_start_after_a_screened_fit_continues_with_the_covariate_still_aside(bare_and_flagged):
    df, _, _, _ = bare_and_flagged
    estimator = model(future_covariates=["flag"], warm_start=True)
    fit_recording(estimator, with_flag(df))
    messages = fit_recording(estimator, with_flag(df))
    plan = estimator.fit_plan_
    assert plan.start == "continue" and plan.warm_starts == 1 and plan.unread == ("flag",)
    assert not any("warm_start=True but" in m for m in messages)
    assert estimator.predict(future_df=future_frame(df, HORIZON, freq="D", value=1.0, column="flag")).notna().all().all()


def test_a_covariate_a_closure_reads_counts_as_read_in_the_figures():
    df = with_flag(daily_panel().drop(columns="promo"))
    shut = df["ds"].dt.dayofweek == 6
    df = df.assign(y=df["y"].where(~shut, 0.0), closed=shut.astype(float))
    estimator = model(future_covariates=["flag", "closed"])
    fit_recording(estimator, df)
    plan = estimator.fit_plan_
    assert plan.unread == ("flag",) and plan.check["screen_read"] == 1.0 and plan.check["screen_unread"] == 1.0


def test_a_block_where_the_target_stands_still_still_counts_as_evidence():
    """One series whose target is zero through three blocks (a closed season): the flag moved there and the target did not,
    so the flag's eight blocks are evidence, and a flag that moves nothing is set aside."""
    rng = np.random.default_rng(5)
    n = 400
    y = 100 + rng.normal(0, 3, n)
    y[120:300] = 0.0  # three whole blocks of eight
    flag = (rng.random(n) < 0.5).astype(float)
    result = screen_covariates(one_series(flag, y), season_length=7)
    assert result is not None and result.figures["temperature"].evidence and result.unread == ("temperature",)


def test_an_effect_too_clean_for_any_spread_between_blocks_is_read():
    """A flag that moves two series by +-20 against noise of 0.1: every block's correlation is at the clip, so a
    series' blocks agree exactly. That is the strongest evidence there is, not a series to leave out (it was left out,
    the signs cancelled in the mean, and the flag was set aside at |t| 0)."""
    rng = np.random.default_rng(2)
    flag = (rng.random((2, 160)) < 0.3).astype(float)
    y = 100 + np.array([[20.0], [-20.0]]) * flag + rng.normal(0, 0.1, (2, 160))
    result = screen_covariates(panel_of(flag, y), season_length=7)
    assert result is not None and result.unread == () and result.figures["temperature"].moves


def test_a_daily_cycle_in_a_covariate_whose_sign_differs_by_series_is_read():
    """Heating and cooling load in one hourly panel: the temperature (a daily cycle and the weather) moves two series
    up and two down by a degree's worth each. Each series' correlation is 0.98; the placebo, moved 11 hours, is nearly
    the cycle's opposite, and once each series' strength was read through Student's t over its blocks both reached its
    ceiling, so the test by series could not tell them apart and the temperature was set aside."""
    rng = np.random.default_rng(101)
    n, hours = 24 * 60, np.arange(24 * 60)
    temperature = np.empty((4, n))
    for row in range(4):
        anomaly = np.zeros(n)
        for k in range(1, n):
            anomaly[k] = 0.97 * anomaly[k - 1] + rng.normal(0, 0.5)
        temperature[row] = 15 + 6 * np.sin(2 * np.pi * (hours - 9) / 24) + anomaly
    y = 100 + np.array([[1.0], [-1.0], [1.0], [-1.0]]) * temperature + rng.normal(0, 1.0, (4, n))
    result = screen_covariates(panel_of(temperature, y), season_length=24)
    assert result is not None and result.unread == ()


def test_integer_coded_levels_with_an_effect_of_any_shape_are_read():
    """Five levels coded 0-4 whose effects are +10, -40, +60, -40, +10: neither linear nor U-shaped, so neither the
    covariate nor its square follows the target, while each level does."""
    rng = np.random.default_rng(4)
    rows, n = 4, 160
    code = rng.integers(0, 5, (rows, n)).astype(float)
    effect = 10.0 * np.array([1, -4, 6, -4, 1])
    walk = np.cumsum(rng.normal(0, 1, (rows, n)), axis=1)
    y = 100 + 10 * np.sin(2 * np.pi * np.arange(n) / 7) + walk + rng.normal(0, 2, (rows, n)) + effect[code.astype(int)]
    result = screen_covariates(panel_of(code, y), season_length=7)
    assert result is not None and result.unread == ()
    noise = screen_covariates(panel_of(code, y - effect[code.astype(int)]), season_length=7)
    assert noise is not None and noise.unread == ("temperature",)


def test_every_warm_start_that_keeps_a_covariate_aside_says_so(bare_and_flagged):
    """A warm start keeps the covariates its weights never read aside: each such fit warns, and points at the
    setting that reads them (``init="scratch"`` alone does not: a warm start continues whatever ``init`` says)."""
    df, _, _, _ = bare_and_flagged
    estimator = model(future_covariates=["flag"], warm_start=True)
    fit_recording(estimator, with_flag(df))
    for options in ({}, {"init": "scratch"}):
        estimator.set_params(**options)
        messages = fit_recording(estimator, with_flag(df))
        assert estimator.fit_plan_.start == "continue" and estimator.fit_plan_.unread == ("flag",)
        assert any("['flag']" in m and "warm_start=False" in m for m in messages)


def test_a_closure_on_a_covariate_a_warm_start_set_aside_refits_from_scratch(bare_and_flagged):
    """A closure declared on a covariate the fit it would continue from set aside: those weights never read it, so the
    fit starts from scratch and reads it, and says why (it trained, then failed with "not a future-known covariate")."""
    df, _, _, _ = bare_and_flagged
    estimator = model(future_covariates=["flag"], warm_start=True)
    fit_recording(estimator, with_flag(df))
    estimator.set_params(closed_when={"flag": 1.0})
    messages = fit_recording(estimator, with_flag(df))
    plan = estimator.fit_plan_
    assert plan.start == "scratch" and plan.unread == () and estimator.roles_.future == ("flag",)
    assert any("warm_start=True but" in m and "'flag'" in m for m in messages)


def test_a_holiday_some_shops_close_on_is_judged_on_the_open_days():
    """New Year and Christmas were holidays and closed days: their zeros cancelled the rise on the open holidays
    (+30%), and the screen set the holiday aside (|t| 2.78 against 3.00) with a warning that nothing followed it."""
    from forecaster.data.features import fit_features
    from forecaster.data.validation import clean_history
    from forecaster.model.closures import closed_steps, resolve_closures
    from forecaster.model.inference import model_panel
    from forecaster.model.plan import panel_facts, plan_fit

    rng = np.random.default_rng(0)
    dates = pd.date_range("2023-01-01", "2024-12-31", freq="D")
    holidays = ["01-01", "04-07", "04-10", "05-01", "05-18", "05-29", "10-03", "12-25", "12-26"]
    holiday = dates.strftime("%m-%d").isin(holidays).astype(float)
    open_ = (~dates.strftime("%m-%d").isin(["01-01", "12-25"])).astype(float)
    weekly = np.array([0.85, 0.9, 0.95, 1.0, 1.2, 1.4, 0.7])[dates.dayofweek]
    df = pd.concat(
        [
            pd.DataFrame(
                {
                    "unique_id": f"s{i}",
                    "ds": dates,
                    "y": rng.poisson(rng.uniform(10, 40) * weekly * (1 + 0.3 * holiday) * open_).astype(float),
                    "holiday": holiday,
                    "open": open_,
                }
            )
            for i in range(10)
        ],
        ignore_index=True,
    )
    estimator = model(future_covariates=["holiday", "open"])
    params = estimator.get_params()
    frame, _ = clean_history(df, estimator._columns(), estimator._roles())
    facts = panel_facts(params, frame)
    units = dict(plan_fit(params, facts).units)
    features = fit_features(frame, "unique_id", facts.roles)
    panel = model_panel(frame, estimator._columns(), facts.roles, features, facts.offset, HORIZON, units)
    closing = resolve_closures(params["closed_when"], frame, "y", ["holiday", "open"])
    assert closing == {"open": [0.0]}
    closed = closed_steps(closing, panel.future_names, panel.future, features.numeric)
    judged = screen_covariates(panel, units["season_length"], closed)
    assert judged is not None and "holiday" not in judged.unread
    assert judged.figures["holiday"].t > judged.figures["holiday"].bar
