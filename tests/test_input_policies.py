"""Policies for odd but ordinary input: each fails loudly and clearly, or works, never silently wrong."""

import inspect

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import make_panel
from forecaster.evaluation.studies import run_study
from forecaster.model.params import CONSTRAINTS, DEFAULTS


@pytest.fixture(scope="module")
def data():
    df, _ = make_panel(n_series=5, length=48, seed=6, short_share=0.0, missing_share=0.0, static=False)
    return df


@pytest.mark.parametrize("change", [{"log_target": True}, {"scaler": "robust"}, {"theta_weight": 0.5}, {"horizon": 3}])
def test_parameters_that_give_the_fit_its_meaning_cannot_change_after_fit(data, change):
    model = fast_model().fit(data)
    model.set_params(**change)
    name = next(iter(change))
    with pytest.raises(ValueError, match=f"`{name}` fitted with"):
        model.predict()
    with pytest.raises(ValueError, match="Refit the model, or set them back"):
        model.explain()


def test_training_settings_can_change_after_fit_and_take_effect_at_the_next_fit(data):
    model = fast_model().fit(data)
    before = model.predict()
    model.set_params(max_steps=5, learning_rate=1e-4, progress=True, num_threads=2, random_state=3, dropout=0.5)
    model._cache = None  # forecast again rather than from the cached pass
    pd.testing.assert_frame_equal(model.predict(), before)


@pytest.mark.parametrize("container", [np.array, pd.Series])
def test_quantiles_as_an_array_work_where_the_prior_serves_the_panel(data, container):
    """The default fit (init='auto', the prior's path) failed on an array of quantiles: "truth value of an array"."""
    levels = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    model = Seq2SeqForecaster(horizon=6, quantiles=container(levels), progress=False).fit(data)
    assert model.fit_plan_.start == "prior"
    expected = Seq2SeqForecaster(horizon=6, quantiles=levels, progress=False).fit(data).predict()
    pd.testing.assert_frame_equal(model.predict(), expected)


def test_array_like_parameters_compare_with_their_fitted_values(data):
    model = fast_model(quantiles=np.array([0.1, 0.5, 0.9]), past_covariates=pd.Index(["traffic"])).fit(data)
    first = model.predict()
    assert len(first) == 5 * 6 and {"y_hat_q10", "y_hat_q90"} <= set(first.columns)
    model.set_params(quantiles=[0.1, 0.5, 0.9])  # the same levels in another container
    model._cache = None
    pd.testing.assert_frame_equal(model.predict(), first)
    plain = fast_model(quantiles=[0.1, 0.5, 0.9], past_covariates=["traffic"]).fit(data)  # lists from the start
    pd.testing.assert_frame_equal(plain.predict(), first)


def test_a_series_without_a_row_at_its_cutoff_is_refused_by_name_not_shifted(data):
    gapped = data.drop(data[(data["unique_id"] == "S001") & (data["ds"] == data["ds"].max() - pd.DateOffset(months=6))].index)
    with pytest.raises(ValueError, match=r"series 'S001' has no row at its cutoff"):
        backtest(fast_model(fill_gaps=True), gapped, n_windows=1, baselines=(), progress=False)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"step_size": 0}, "`step_size` must be a positive integer"),
        ({"step_size": 1.5}, "`step_size` must be a positive integer"),
        ({"n_windows": 0}, "`n_windows` must be a positive integer"),
        ({"baselines": "auto_ets"}, "`baselines` must be a tuple of names"),
        ({"baselines": ("ets",)}, "Unknown baseline"),
        # A flag, a fraction or zero as the season was read as season 1, 12 or the default, silently.
        ({"season_length": True}, "`season_length` must be a positive integer up to 100,000 or None"),
        ({"season_length": 12.9}, "`season_length` must be a positive integer up to 100,000 or None"),
        ({"season_length": 0}, "`season_length` must be a positive integer up to 100,000 or None"),
        ({"n_jobs": 0}, "`n_jobs` must be a positive integer"),
        ({"n_jobs": -3}, "`n_jobs` must be a positive integer"),
        ({"n_jobs": "four"}, "`n_jobs` must be a positive integer"),
        ({"n_jobs": 2.5}, "`n_jobs` must be a positive integer"),
    ],
)
def test_malformed_backtest_arguments_are_refused_by_name(data, arguments, message):
    with pytest.raises(ValueError, match=message):
        backtest(fast_model(), data, progress=False, **arguments)


def test_a_series_shorter_than_one_season_at_a_cutoff_is_skipped_and_named(data):
    short = data[data["unique_id"] == "S000"].tail(16)  # 10 periods before the last cutoff: a horizon, not a season
    df = pd.concat([data[data["unique_id"] != "S000"], short], ignore_index=True)
    result = backtest(fast_model(), df, n_windows=1, baselines=("seasonal_naive",), progress=False)
    assert "S000" not in set(result.forecasts["unique_id"])
    reason = result.skipped.set_index("unique_id").loc["S000", "reason"]
    assert "one season, for the seasonal-naive baseline" in reason
    assert np.isfinite(result.forecasts[["seq2seq", "seasonal_naive"]].to_numpy()).all()


@pytest.mark.parametrize("change", [{"horizon": 7}, {"theta_weight": 0.5}, {"hidden_size": 32}])
def test_save_refuses_what_predict_refuses_and_keeps_the_saved_model(data, change, tmp_path):
    """A parameter changed after fit was written into the file: the file then failed to load (horizon, hidden_size), or
    loaded as another model than the one fitted (theta_weight: forecasts up to 7.5 apart), and the good file was gone."""
    model = fast_model().fit(data)
    model.save(tmp_path / "model")
    before = Seq2SeqForecaster.load(tmp_path / "model").predict()
    model.set_params(**change)
    with pytest.raises(ValueError, match=f"`{next(iter(change))}` fitted with"):
        model.save(tmp_path / "model")
    pd.testing.assert_frame_equal(Seq2SeqForecaster.load(tmp_path / "model").predict(), before)


def test_unused_categories_of_a_categorical_id_are_not_series(data):
    df = data.assign(unique_id=pd.Categorical(data["unique_id"], categories=[*sorted(data["unique_id"].unique()), "gone"]))
    forecast = fast_model().fit(df).predict()
    assert set(forecast["unique_id"]) == set(data["unique_id"])


def test_categorical_ids_forecast_as_their_text_does_whatever_the_categories_order(data):
    """The series' order decides the training batches and the held-out series: categories in another order than their
    values' gave other forecasts (up to 0.10 apart) for the same panel."""
    text = fast_model().fit(data).predict()
    order = sorted(data["unique_id"].unique(), reverse=True)
    categorical = data.assign(unique_id=pd.Categorical(data["unique_id"], categories=order))
    kept = categorical.copy()
    forecast = fast_model().fit(categorical).predict()
    assert categorical.equals(kept)
    by_text = text.set_index(["unique_id", "ds"]).sort_index()
    by_category = forecast.assign(unique_id=forecast["unique_id"].astype(str)).set_index(["unique_id", "ds"]).sort_index()
    pd.testing.assert_frame_equal(by_category, by_text)


def test_integer_time_indexes_are_refused_without_suggesting_a_nanosecond_conversion(data):
    numbered = data.assign(ds=data.groupby("unique_id").cumcount() + 1)
    with pytest.raises(TypeError, match="not timestamps") as error:
        fast_model().fit(numbered)
    assert "format='%Y'" in str(error.value) and "nanoseconds after 1970" in str(error.value)


def test_a_study_csv_with_integer_years_is_refused_not_read_as_nanoseconds(tmp_path):
    years = pd.DataFrame({"unique_id": np.repeat(["a", "b"], 30), "ds": np.tile(np.arange(1990, 2020), 2), "y": np.arange(60.0)})
    years.to_csv(tmp_path / "years.csv", index=False)
    (tmp_path / "study.toml").write_text('[data]\npath = "years.csv"\nhorizon = 4\n[backtest]\nn_windows = 1\n')
    from forecaster.evaluation.studies import SpecError

    with pytest.raises(SpecError, match=r"`time_col` 'ds' holds numbers .* date_format = \"%Y\""):
        run_study(tmp_path / "study.toml", progress=False)


def test_a_calendar_far_larger_than_the_data_is_refused_before_allocating():
    first = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2000-01-01", periods=10, freq="min"), "y": np.arange(10.0)})
    second = first.assign(unique_id="b", ds=pd.date_range("2020-01-01", periods=10, freq="min"))
    with pytest.raises(ValueError, match="spans 10,519,210 periods of 'min'"):
        fast_model(horizon=2, input_size=4).fit(pd.concat([first, second]))
    with pytest.raises(ValueError, match="holds only 20 rows"):
        backtest(fast_model(horizon=2, input_size=4), pd.concat([first, second]), n_windows=1, progress=False)


def test_column_names_must_be_strings_so_that_they_survive_a_model_file(data):
    with pytest.raises(ValueError, match="`id_col` must be a column name"):
        fast_model(id_col=0).fit(data.rename(columns={"unique_id": 0}))


@pytest.mark.parametrize(("column", "value"), [("promo", 1e300), ("size", 1e308), ("y", -1e120), ("traffic", 1e101)])
def test_values_beyond_the_supported_range_are_refused_naming_the_column(data, column, value):
    """A future covariate of 1e300 ended in 'non-finite forecasts, please report', a static of 1e308 in 'training diverged'."""
    df = data.assign(size=data["unique_id"].map(lambda uid: float(uid[1:])))
    rows = df["unique_id"] == "S002" if column == "size" else df.index == 5
    df.loc[rows, column] = value
    model = fast_model(future_covariates=["promo"], past_covariates=["traffic"], static_covariates=["size"])
    with pytest.raises(
        ValueError, match=rf"Column `{column}` holds .* beyond 1e\+100 in magnitude are outside the supported range"
    ):
        model.fit(df)


def test_a_future_frame_beyond_the_supported_range_is_refused_at_predict(data):
    model = fast_model(future_covariates=["promo"]).fit(data)
    future = future_frame(data, 6)
    future.loc[3, "promo"] = 1e300
    with pytest.raises(ValueError, match=r"Column `promo` holds 1e\+300 at"):
        model.predict(future_df=future)


def test_a_series_too_short_for_autoets_at_a_cutoff_is_skipped_and_named_not_a_crash():
    """statsforecast's AutoETS raised "tiny datasets" on a yearly series of 5 periods and ended the whole backtest."""
    rng = np.random.default_rng(0)
    frames = [
        pd.DataFrame(
            {
                "unique_id": uid,
                "ds": pd.date_range(end="2020-01-01", periods=n, freq="YS"),
                "y": 50 + rng.normal(0, 1, n).cumsum(),
            }
        )
        for uid, n in (("long1", 30), ("long2", 25), ("tiny", 6))
    ]
    df = pd.concat(frames, ignore_index=True)
    result = backtest(fast_model(horizon=1, input_size=4), df, n_windows=1, baselines=("auto_ets",), progress=False)
    assert set(result.forecasts["unique_id"]) == {"long1", "long2"}
    assert "the fewest AutoETS fits" in result.skipped.set_index("unique_id").loc["tiny", "reason"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden_size": 10**6}, "`hidden_size` must be a positive integer up to 16,384"),
        ({"num_layers": 10**4}, "`num_layers` must be a positive integer up to 64"),
        ({"horizon": 2 * 10**5}, "`horizon` must be a positive integer up to 100,000"),
        ({"batch_size": 10**9}, "`batch_size` must be a positive integer up to 1,048,576"),
        ({"input_size": 10**6}, "`input_size` must be a positive integer up to 100,000"),
        ({"num_threads": 10**5}, "`num_threads` must be a positive integer up to 1,024"),
        ({"n_models": 10**5}, "`n_models` must be a positive integer up to 1,000"),
        ({"quantiles": list(np.linspace(0.001, 0.999, 10**5))}, "`quantiles` lists 100,000 levels; at most 999"),
        ({"batch_size": 2**20, "input_size": 5000}, r"would need about [\d,.]+ GiB \(activations.*this machine has"),
        ({"input_size": 10**5, "horizon": 10**3}, r"`horizon` x `input_size` x `n_models` is 100,000,000; at most 10,000,000"),
    ],
)
def test_sizes_are_refused_before_anything_is_allocated(data, change, message):
    """They ended in allocator errors or MemoryError, or ran for minutes."""
    params = {"horizon": 6, **change}
    model = fast_model(**params)
    with pytest.raises(ValueError, match=message):
        model.fit(data)


def test_a_huge_n_windows_in_a_spec_is_refused_naming_its_table(tmp_path):
    from pathlib import Path

    from forecaster.evaluation.studies import SpecError

    text = Path("backtests/csv_example.toml").read_text()
    import re

    text = re.sub(r"(?m)^n_windows = .*$", "n_windows = 1000000000", text)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "example.csv").write_text(Path("backtests/data/example.csv").read_text())
    (tmp_path / "spec.toml").write_text(text)
    with pytest.raises(SpecError, match=r"\[backtest\]: `n_windows` must be a positive integer up to 100,000"):
        run_study(tmp_path / "spec.toml", progress=False)


def _example_with_dates(tmp_path, dates, date_format=None):
    from forecaster.evaluation.studies import load_study_data

    frame = pd.DataFrame({"store": "a", "month": dates, "sales": np.arange(len(dates), dtype=float)})
    frame.to_csv(tmp_path / "sales.csv", index=False)
    data = {"path": "sales.csv", "id_col": "store", "time_col": "month", "target_col": "sales"}
    if date_format:
        data["date_format"] = date_format
    return load_study_data(data, tmp_path)[0]


def test_day_first_dates_in_a_spec_file_are_refused_as_ambiguous_not_read_month_first(tmp_path):
    """A dd/mm/yyyy CSV was read month-first without a word, then failed on the frequency grid."""
    from forecaster.evaluation.studies import SpecError

    dates = [f"01/{m:02d}/1998" for m in range(1, 13)]
    with pytest.raises(SpecError, match=r"\[data\] `time_col` 'month' holds dates such as '01/02/1998' that read differently"):
        _example_with_dates(tmp_path, dates)
    read = _example_with_dates(tmp_path, dates, "%d/%m/%Y")
    assert list(read["month"]) == list(pd.date_range("1998-01-01", periods=12, freq="MS"))


@pytest.mark.parametrize(
    ("dates", "date_format", "first"),
    [(["1998 Q1", "1998 Q2", "1998 Q3"], "%Y Q%q", "1998-01-01"), (["Apr-98", "May-98", "Jun-98"], "%b-%y", "1998-04-01")],
)
def test_dates_as_people_write_them_are_read_with_a_date_format(tmp_path, dates, date_format, first):
    read = _example_with_dates(tmp_path, dates, date_format)
    assert read["month"].iloc[0] == pd.Timestamp(first) and read["month"].is_monotonic_increasing


def test_a_date_that_does_not_match_the_date_format_is_named(tmp_path):
    from forecaster.evaluation.studies import SpecError

    with pytest.raises(SpecError, match=r"\[data\] `time_col` 'month' holds '1998 Q5', which does not match"):
        _example_with_dates(tmp_path, ["1998 Q4", "1998 Q5"], "%Y Q%q")


def test_a_synthetic_panel_too_large_to_generate_is_refused_naming_the_spec_key(tmp_path):
    """A synthetic n_series of 10^9 in a spec ended in a traceback."""
    from forecaster.evaluation.studies import SpecError, load_study_data

    with pytest.raises(SpecError, match=r"\[data\] `args` of loader 'synthetic'.*`n_series` x `length` is 120,000,000,000 rows"):
        load_study_data({"loader": "synthetic", "args": {"n_series": 10**9}}, tmp_path)


def test_the_parameter_table_holds_the_estimators_defaults():
    """A model file read without an estimator (the priors) completes its parameters from this table."""
    signature = inspect.signature(Seq2SeqForecaster).parameters
    defaults = {name: p.default for name, p in signature.items() if p.default is not inspect.Parameter.empty}
    assert defaults == DEFAULTS
    assert set(signature) == set(CONSTRAINTS)


@pytest.mark.parametrize("names", [{"id_col": "step_id"}, {"time_col": "step_start"}, {"id_col": "weighted"}])
def test_column_names_that_no_output_holds_are_fine(data, names, tmp_path):
    renamed = data.rename(columns={"unique_id": names.get("id_col", "unique_id"), "ds": names.get("time_col", "ds")})
    model = fast_model(**names).fit(renamed)
    assert len(model.explain(by="step")) == len(model.predict()) == 5 * 6
    model.save(tmp_path / "model")
    Seq2SeqForecaster.load(tmp_path / "model").predict()


def test_every_column_explain_and_predict_add_is_a_name_refused_for_ids(data):
    from forecaster.model.outputs import output_columns

    model = fast_model(quantiles=[0.1, 0.5, 0.9]).fit(data)
    added = {*model.explain(include_padding=True).columns, *model.explain(by="step").columns, *model.predict().columns}
    added -= {"unique_id", "ds"} | {c for c in added if c.startswith("y_hat_q")}  # quantile columns: refused by pattern
    assert added <= output_columns("ds"), added - output_columns("ds")


@pytest.mark.parametrize(
    ("names", "message"),
    [
        ({"id_col": "step"}, "`id_col`='step' is the name of a column the forecasts or explanations add"),
        ({"time_col": "lag"}, "`time_col`='lag' is the name of a column"),
        ({"id_col": "y_hat"}, "`id_col`='y_hat' is the name"),
        ({"id_col": "y_hat_q90"}, "`id_col`='y_hat_q90' is the name"),
        ({"id_col": "partners_weighted"}, "`id_col`='partners_weighted' is the name"),
        ({"time_col": "weight"}, "e.g. df.rename(columns={'weight': 'time'})"),
        ({"time_col": "y"}, "must name three different columns"),
    ],
)
def test_column_names_that_outputs_would_overwrite_or_that_repeat_are_refused_by_name(data, names, message):
    """An id named 'step' came back as step numbers from explain, a time column named 'lag' as integer lags; the same
    name for two roles ended in pandas' "truth value of a Series is ambiguous"."""
    renamed = data.rename(columns={"unique_id": names.get("id_col", "unique_id"), "ds": names.get("time_col", "ds")})
    if names.get("time_col") == "y":
        renamed = data
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fast_model(**names).fit(renamed)


def test_a_column_given_twice_is_refused_and_an_index_named_like_a_column_is_not_read(data):
    twice = pd.concat([data, data[["y"]]], axis=1)
    with pytest.raises(ValueError, match="`df` has column\\(s\\) `y` more than once"):
        fast_model().fit(twice)
    indexed = data.set_index(["unique_id", "ds"], drop=False)  # the keys as index levels and as columns
    pd.testing.assert_frame_equal(fast_model().fit(indexed).predict(), fast_model().fit(data).predict())
