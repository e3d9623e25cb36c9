"""predict and explain on Dask DataFrames, computed on a real two-process cluster, equal the pandas results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import fast_model, future_frame

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from forecaster.datasets import make_panel  # noqa: E402
from forecaster.engines import is_dask_frame  # noqa: E402
from forecaster.scale import dask_fit  # noqa: E402
from forecaster.scale.dask_fit import fit_dask, in_sample  # noqa: E402
from forecaster.scale.dask_frames import by_series, series_partition  # noqa: E402
from forecaster.scale.distributed import fit_distributed  # noqa: E402
from forecaster.scale.window_stream import series_windows  # noqa: E402

HORIZON = 6


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


@pytest.fixture(scope="module")
def data():
    df, _ = make_panel(n_series=13, length=40, seed=4, short_share=0.3)
    return df, future_frame(df, HORIZON)


@pytest.fixture(scope="module")
def with_future(data):
    df, _ = data
    return fast_model(future_covariates=["promo"], static_covariates=["group"]).fit(df)


@pytest.fixture(scope="module")
def plain(data):
    df, _ = data
    return fast_model(attention_values="observations", quantiles=(0.2, 0.5, 0.8)).fit(df)


def _sorted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def _same(lazy, expected: pd.DataFrame, keys: list[str]) -> None:
    assert is_dask_frame(lazy)
    got = lazy.compute()
    assert list(got.columns) == list(lazy._meta.columns) == list(expected.columns)
    # Windows batched otherwise round otherwise in float32: about 1e-6 apart, also where a quantile is near 0. The
    # account's parts are sums of terms in target units (about 100 here, where float32's spacing is 7.6e-6): a
    # step's baseline moved 1.2e-5 between panels of other series with numpy 2.4, so absolute 5e-5.
    pd.testing.assert_frame_equal(_sorted(got, keys), _sorted(expected, keys), check_exact=False, rtol=1e-5, atol=5e-5)


def test_predict_with_future_covariates_equals_pandas(client, data, with_future):
    df, future = data
    ddf, dfuture = dd.from_pandas(df, npartitions=3), dd.from_pandas(future, npartitions=2)
    expected = with_future.predict(df=df, future_df=future)
    _same(with_future.predict(df=ddf, future_df=dfuture), expected, ["unique_id", "ds"])
    # A pandas future frame with a Dask history is accepted, with the same result.
    _same(with_future.predict(df=ddf, future_df=future), expected, ["unique_id", "ds"])


def test_a_frame_indexed_by_series_is_forecast_where_it_lies(client, data, with_future, monkeypatch):
    """Indexed by the id with known divisions (as read from Parquet sorted by id): no shuffle of the history."""
    from forecaster.scale import dask_frames

    df, future = data
    indexed = dd.from_pandas(df.set_index("unique_id").sort_index(), npartitions=3)
    assert indexed.known_divisions and dask_frames.indexed_by_series(indexed, "unique_id")
    shuffled, original = [], dask_frames.by_series
    monkeypatch.setattr(dask_frames, "by_series", lambda *args: shuffled.append(1) or original(*args))
    expected = with_future.predict(df=df, future_df=future)
    _same(with_future.predict(df=indexed, future_df=future), expected, ["unique_id", "ds"])
    future_indexed = dd.from_pandas(future.set_index("unique_id").sort_index(), npartitions=2)
    _same(with_future.predict(df=indexed, future_df=future_indexed), expected, ["unique_id", "ds"])
    assert shuffled == []
    keys = ["unique_id", "ds", "ds_history"]
    _same(with_future.explain(df=indexed, future_df=future), with_future.explain(df=df, future_df=future), keys)
    # partitions that split a series at their boundary (divisions cannot tell): found, and shuffled as any frame
    import dask

    ordered = df.set_index("unique_id").sort_index()
    rows = np.flatnonzero(ordered.index == ordered.index.unique()[4])
    cut = rows[len(rows) // 2]
    first, second = ordered.iloc[:cut], ordered.iloc[cut:]
    divisions = [first.index[0], second.index[0], second.index[-1]]
    split = dd.from_delayed([dask.delayed(first), dask.delayed(second)], meta=ordered.iloc[:0], divisions=divisions)
    assert dask_frames.indexed_by_series(split, "unique_id") and not dask_frames.whole_series(split)
    assert dask_frames.whole_series(indexed)
    _same(with_future.predict(df=split, future_df=future), expected, ["unique_id", "ds"])
    # a future frame for some of the series only, indexed
    some = future[future["unique_id"].isin(df["unique_id"].unique()[2:9])]
    some_indexed = dd.from_pandas(some.set_index("unique_id").sort_index(), npartitions=2)
    part = df[df["unique_id"].isin(some["unique_id"])]
    part_indexed = dd.from_pandas(part.set_index("unique_id").sort_index(), npartitions=2)
    _same(
        with_future.predict(df=part_indexed, future_df=some_indexed),
        with_future.predict(df=part, future_df=some),
        ["unique_id", "ds"],
    )
    # a future beyond the history's ids: the other series' rows are not read, as in pandas
    _same(
        with_future.predict(df=part_indexed, future_df=future_indexed),
        with_future.predict(df=part, future_df=some),
        ["unique_id", "ds"],
    )
    shuffled.clear()
    # an indexed future with a history that is not: keyed like the history
    _same(with_future.predict(df=dd.from_pandas(df, npartitions=3), future_df=future_indexed), expected, ["unique_id", "ds"])
    assert shuffled


def test_explain_with_future_covariates_equals_pandas(client, data, with_future):
    df, future = data
    ddf, dfuture = dd.from_pandas(df, npartitions=3), dd.from_pandas(future, npartitions=3)
    keys = ["unique_id", "ds", "ds_history"]
    _same(with_future.explain(df=ddf, future_df=dfuture), with_future.explain(df=df, future_df=future), keys)
    padded = with_future.explain(df=ddf, future_df=dfuture, include_padding=True)
    _same(padded, with_future.explain(df=df, future_df=future, include_padding=True), keys)


def test_without_future_covariates_and_with_the_account_equals_pandas(client, data, plain):
    df, _ = data
    ddf = dd.from_pandas(df, npartitions=4)
    _same(plain.predict(df=ddf), plain.predict(df=df), ["unique_id", "ds"])
    explained = plain.explain(df=ddf)
    assert "contribution" in explained.columns
    _same(explained, plain.explain(df=df), ["unique_id", "ds", "ds_history"])


def test_more_partitions_than_series_and_text_ids_of_other_dtypes(client, data, plain):
    df, _ = data
    few = df[df["unique_id"].isin(["S000", "S001"])].assign(unique_id=lambda f: f["unique_id"].astype("category"))
    ddf = dd.from_pandas(few, npartitions=2).repartition(npartitions=6)  # some partitions hold no series
    expected = plain.predict(df=few)
    _same(plain.predict(df=ddf), expected, ["unique_id", "ds"])


def test_future_rows_of_series_that_df_lacks_are_not_read(client, data, with_future):
    """A whole calendar as `future_df` (the documented pattern) failed with "`future_df` holds series that `df` does
    not" whenever one of its extra series hashed into a partition without history: by chance of the partition count."""
    df, future = data
    calendar = pd.concat([future, *(future[future["unique_id"] == "S000"].assign(unique_id=f"X{i}") for i in range(30))])
    expected = with_future.predict(df=df, future_df=calendar)
    # 13 series in 14 partitions: one partition at least holds no history, and 30 extra series reach every partition.
    _same(with_future.predict(df=dd.from_pandas(df, npartitions=14), future_df=calendar), expected, ["unique_id", "ds"])


def test_a_time_zone_in_an_arrow_dtype_and_text_with_offsets(client, data, plain):
    """A zone in an Arrow dtype (`read_parquet(dtype_backend="pyarrow")`) ended in a bare pandas TypeError at compute,
    as did text with UTC offsets, whose zone no dtype shows before the partitions are read: now it is refused by name."""
    pa = pytest.importorskip("pyarrow")
    df, _ = data
    df = df[["unique_id", "ds", "y"]]
    arrow = df.assign(ds=df["ds"].dt.tz_localize("UTC").astype(pd.ArrowDtype(pa.timestamp("ns", tz="UTC"))))
    expected = plain.predict(df=df.assign(ds=df["ds"].dt.tz_localize("UTC")))
    _same(plain.predict(df=dd.from_pandas(arrow, npartitions=2)), expected, ["unique_id", "ds"])
    text = df.assign(ds=df["ds"].dt.strftime("%Y-%m-%dT%H:%M:%S+00:00"))
    with pytest.raises(ValueError, match=r"Column `ds` of the Dask `df` is text with UTC offsets: .* dd.to_datetime"):
        plain.predict(df=dd.from_pandas(text, npartitions=2)).compute()
    # Local midnights across a daylight-saving change: whatever a partition holds (one offset or two), refused alike.
    summer = df["ds"].dt.month.between(4, 9)
    written = df["ds"].dt.strftime("%Y-%m-%dT00:00:00") + np.where(summer, "+03:00", "+02:00")
    for npartitions in (1, 13):
        with pytest.raises(ValueError, match=r"text with UTC offsets"):
            plain.predict(df=dd.from_pandas(df.assign(ds=written), npartitions=npartitions)).compute()


def test_a_model_from_pretrained_forecasts_a_dask_frame(client, data):
    """It raised NotFittedError ("Call 'fit'"), where the pandas path forecasts any panel without a fit."""
    from forecaster import Seq2SeqForecaster

    df, _ = data
    df = df[["unique_id", "ds", "y"]]
    model = Seq2SeqForecaster.from_pretrained(horizon=HORIZON, progress=False)
    _same(model.predict(df=dd.from_pandas(df, npartitions=3)), model.predict(df=df), ["unique_id", "ds"])
    with pytest.raises(ValueError, match="`explain` of a model from `from_pretrained` takes a pandas `df`"):
        model.explain(df=dd.from_pandas(df, npartitions=3))
    # A new series of two rows alone in its partition: the frequency is the panel's, read once (it was read partition
    # by partition, and two timestamps cannot tell one).
    new = pd.DataFrame({"unique_id": "NEW", "ds": pd.date_range("2010-01-01", periods=2, freq="MS"), "y": [5.0, 6.0]})
    keys = {n: series_partition(pd.Series([*df["unique_id"].unique(), "NEW"]), n) for n in range(8, 64)}
    alone = next(n for n, key in keys.items() if (key[:-1] != key[-1]).all())
    panel = pd.concat([df, new], ignore_index=True)
    _same(model.predict(df=dd.from_pandas(panel, npartitions=alone)), model.predict(df=panel), ["unique_id", "ds"])


def test_a_fitted_model_from_pretrained_explains_a_dask_frame(client, data):
    """`from_pretrained(...).fit(df)` then `explain` of a Dask frame was refused as if the model were not fitted."""
    from forecaster import Seq2SeqForecaster

    df, _ = data
    df = df[["unique_id", "ds", "y"]]
    model = Seq2SeqForecaster.from_pretrained(horizon=HORIZON, progress=False).fit(df)
    _same(model.explain(df=dd.from_pandas(df, npartitions=2)), model.explain(df=df), ["unique_id", "ds", "step", "ds_history"])


@pytest.mark.parametrize("dtype", ["Int64", "int64[pyarrow]", "UInt8", "int32[pyarrow]", "category"])
def test_integer_ids_of_any_dtype_come_back_as_the_pandas_path_gives_them(client, data, plain, dtype):
    """Nullable, Arrow and categorical integer ids came back as objects, or as int64 where pandas kept their width."""
    if "[pyarrow]" in dtype:
        pytest.importorskip("pyarrow")
    df, _ = data
    df = df.assign(unique_id=df["unique_id"].str[1:].astype(int).astype(dtype))
    expected = plain.predict(df=df)
    assert expected["unique_id"].dtype.kind in "iu"
    _same(plain.predict(df=dd.from_pandas(df, npartitions=3)), expected, ["unique_id", "ds"])


def test_the_callers_frames_are_left_alone(client, data, with_future):
    df, future = data
    before_df, before_future = df.copy(), future.copy()
    ddf = dd.from_pandas(df, npartitions=2)
    with_future.predict(df=ddf, future_df=future).compute()
    assert list(ddf.columns) == list(df.columns)
    pd.testing.assert_frame_equal(df, before_df)
    pd.testing.assert_frame_equal(future, before_future)


def test_mismatched_frames_are_refused_with_their_names(client, data, with_future):
    df, future = data
    dfuture = dd.from_pandas(future, npartitions=2)
    with pytest.raises(TypeError, match="`future_df` is a Dask DataFrame but `df` is a DataFrame"):
        with_future.predict(df=df, future_df=dfuture)
    with pytest.raises(TypeError, match="`df` is None"):
        with_future.explain(future_df=dfuture)
    with pytest.raises(ValueError, match="`future_df` is required"):
        with_future.predict(df=dd.from_pandas(df, npartitions=2))
    with pytest.raises(ValueError, match=r"`df` lacks column\(s\) \['ds'\]"):
        with_future.predict(df=dd.from_pandas(df.drop(columns="ds"), npartitions=2), future_df=dfuture)


def test_distributed_fit_takes_pandas_and_says_what_it_got(data):
    df, _ = data
    with pytest.raises(TypeError, match=r"`df` must be a pandas DataFrame; got dask\.DataFrame"):
        fit_distributed(fast_model(), dd.from_pandas(df, npartitions=2), world_size=2)


def _same_weights(a, b) -> bool:
    first, second = a.network_.state_dict(), b.network_.state_dict()
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_fit_on_a_dask_frame_with_few_windows_fits_every_series(client, data):
    df, future = data
    lazy, eager = fast_model(future_covariates=["promo"]), fast_model(future_covariates=["promo"])
    lazy.fit(dd.from_pandas(df, npartitions=3))
    eager.fit(df)
    assert _same_weights(lazy, eager)
    pd.testing.assert_frame_equal(lazy.predict(future_df=future), eager.predict(future_df=future))


def test_fit_on_a_sample_of_series_drawn_on_the_workers(client, data):
    df, _ = data
    keep = in_sample(df["unique_id"], 0.5)
    kept = df.loc[keep, "unique_id"].nunique()
    assert 0 < kept < df["unique_id"].nunique()
    with pytest.warns(UserWarning, match=rf"trained on {kept} sampled series.*pass `df` to forecast all"):
        lazy = fit_dask(fast_model(), dd.from_pandas(df, npartitions=3), fraction=0.5)
    assert _same_weights(lazy, fast_model().fit(df.loc[keep]))
    assert len(lazy.training_end_) == kept
    indexed = dd.from_pandas(df.set_index("unique_id").sort_index(), npartitions=3)  # as read from Parquet sorted by id
    with pytest.warns(UserWarning, match=rf"trained on {kept} sampled series"):
        assert _same_weights(fit_dask(fast_model(), indexed, fraction=0.5), lazy)


def test_the_sample_keeps_a_share_of_the_series_by_their_ids():
    ids = pd.Series([f"S{i}" for i in range(20_000)])
    assert in_sample(ids, 0.25).mean() == pytest.approx(0.25, abs=0.02)
    assert in_sample(ids, 1.0).all()
    np.testing.assert_array_equal(in_sample(ids.astype("category"), 0.3), in_sample(ids, 0.3))
    np.testing.assert_array_equal(series_windows(np.array([120, 20, 3]), 12, 6), [103, 3, 0])


def _windows(df: pd.DataFrame) -> int:
    """The training windows of the fast model (input 12, so 3 periods of history at least) on ``df``."""
    return int(series_windows(df.groupby("unique_id").size().to_numpy(), HORIZON, 3).sum())


@pytest.fixture()
def streamed(monkeypatch):
    """Panels above a few hundred windows train on windows streamed from the workers."""
    monkeypatch.setattr(dask_fit, "ANCHOR_WINDOWS", 150)


def _rare_category(df: pd.DataFrame) -> tuple[pd.DataFrame, object]:
    """``df`` with a static category that only a series outside the client's sample holds."""
    ids = pd.Series(df["unique_id"].unique())
    share = dask_fit.ANCHOR_WINDOWS / _windows(df)
    outside = ids[~in_sample(ids, share)].iloc[-1]
    df = df.copy()
    df["group"] = df["group"].astype(object)
    df.loc[df["unique_id"] == outside, "group"] = "rare"
    return df, outside


def test_fit_streams_windows_of_every_series_from_the_workers(client, data, streamed):
    df, future = data
    df, outside = _rare_category(df)
    n_series = df["unique_id"].nunique()
    model = fast_model(static_covariates=["group"], future_covariates=["promo"], max_steps=60)
    with pytest.warns(UserWarning, match=rf"trained on windows of all {n_series} series, drawn on the workers"):
        model.fit(dd.from_pandas(df, npartitions=3))
    kept = len(model.training_end_)
    assert 0 < kept < n_series and outside not in model.training_end_.index
    # the encodings are the whole frame's, not the sample's: the rare category of a series outside it is known
    assert model.features_.categories["group"] == sorted(df["group"].unique())
    forecast = model.predict(df=df, future_df=future)
    assert forecast["unique_id"].nunique() == n_series and np.isfinite(forecast["y_hat"]).all()
    # repeatable on the same partitions, from an id-indexed frame too (as read from Parquet sorted by id)
    again = fast_model(static_covariates=["group"], future_covariates=["promo"], max_steps=60)
    indexed = dd.from_pandas(df.set_index("unique_id").sort_index(), npartitions=3)
    with pytest.warns(UserWarning, match="drawn on the workers"):
        again.fit(indexed)
    twice = fast_model(static_covariates=["group"], future_covariates=["promo"], max_steps=60)
    with pytest.warns(UserWarning, match="drawn on the workers"):
        twice.fit(indexed)
    assert _same_weights(again, twice)


def test_a_streamed_fit_learns_and_uses_the_whole_panels_budget(client, streamed, monkeypatch):
    from forecaster.model import plan

    df, _ = make_panel(n_series=40, length=60, seed=2)
    budgets = []
    real = plan.BUDGETS["default"]
    monkeypatch.setitem(plan.BUDGETS, "default", lambda windows, batch, cap: budgets.append(windows) or real(windows, batch, cap))
    model = fast_model(max_steps=None, hidden_size=32)
    with pytest.warns(UserWarning, match="drawn on the workers"):
        model.fit(dd.from_pandas(df, npartitions=4))
    assert budgets == [_windows(df)]
    losses = model.train_results_[0].train_loss
    assert np.mean(losses[-50:]) < np.mean(losses[:20])
    # accuracy on the last horizon, held out: better than the seasonal-naive forecast
    history = df.groupby("unique_id").head(60 - HORIZON)
    actual = df.groupby("unique_id").tail(HORIZON).reset_index(drop=True)
    fitted = fast_model(max_steps=None, hidden_size=32)
    with pytest.warns(UserWarning, match="drawn on the workers"):
        fitted.fit(dd.from_pandas(history, npartitions=4))
    forecast = fitted.predict(df=history).merge(actual, on=["unique_id", "ds"])
    naive = history.assign(ds=history["ds"] + pd.DateOffset(months=12))[["unique_id", "ds", "y"]]
    scored = forecast.merge(naive.rename(columns={"y": "naive"}), on=["unique_id", "ds"]).dropna(subset=["y", "naive"])
    assert len(scored) > 150
    naive_error = np.abs(scored["naive"] - scored["y"]).mean()
    assert np.abs(scored["y_hat"] - scored["y"]).mean() < 0.9 * naive_error


def test_fit_dask_names_bad_arguments(data):
    df, _ = data
    for bad in (0, 1.5, -0.1, "half", True):
        with pytest.raises(ValueError, match="`fraction` must be in"):
            fit_dask(fast_model(), dd.from_pandas(df, npartitions=2), fraction=bad)
    with pytest.raises(TypeError, match="`df` must be a Dask DataFrame"):
        fit_dask(fast_model(), df)


def test_errors_in_the_rows_surface_when_computed(client, data, with_future):
    df, future = data
    lazy = with_future.predict(df=dd.from_pandas(df, npartitions=2), future_df=future.drop(columns="promo"))
    with pytest.raises(ValueError, match="promo"):
        lazy.compute()


def test_a_series_lands_in_one_partition_whatever_its_id_dtype():
    ids = pd.Series(["a", "b", "c", "a"])
    for same in (ids.astype("category"), ids.astype("string[pyarrow]"), ids.astype(object)):
        np.testing.assert_array_equal(series_partition(same, 5), series_partition(ids, 5))
    parts = series_partition(pd.Series([f"S{i}" for i in range(200)]), 4)
    assert set(parts.tolist()) == {0, 1, 2, 3}


def test_partition_k_holds_exactly_the_series_of_key_k(client):
    df = pd.DataFrame({"unique_id": [f"S{i}" for i in range(40)] * 2, "value": np.arange(80)})
    parts = by_series(dd.from_pandas(df, npartitions=3), "unique_id", 4)
    assert parts.npartitions == 4
    sizes = []
    for k in range(4):
        part = parts.partitions[k].compute()
        assert (series_partition(part["unique_id"], 4) == k).all()
        sizes.append(len(part))
    assert sum(sizes) == 80 and min(sizes) > 0


def test_pandas_frames_never_take_the_dask_path(data, with_future, monkeypatch):
    from forecaster.scale import dask_frames

    df, future = data
    assert not is_dask_frame(df) and not is_dask_frame(None)

    def refuse(*args, **kwargs):
        raise AssertionError("a pandas frame went down the Dask path")

    monkeypatch.setattr(dask_frames, "forecast_frames", refuse)
    assert isinstance(with_future.predict(df=df, future_df=future), pd.DataFrame)
    assert isinstance(with_future.explain(df=df, future_df=future), pd.DataFrame)


def test_backtest_baselines_run_on_the_workers_of_an_active_client(client, data, monkeypatch):
    """The same baseline forecasts as in process, computed by tasks on the cluster's workers."""
    from forecaster import backtest
    from forecaster.evaluation import backtest as backtest_module

    df, _ = data
    options = dict(n_windows=2, baselines=("seasonal_naive", "auto_ets"), progress=False)
    with distributed.get_task_stream(client) as stream:
        spread = backtest(fast_model(), df, **options)
    assert any("run_baselines" in str(task["key"]) for task in stream.data)
    monkeypatch.setattr(backtest_module, "active_client", lambda: None)
    with distributed.get_task_stream(client) as stream:
        local = backtest(fast_model(), df, **options)
    assert not any("run_baselines" in str(task["key"]) for task in stream.data)
    columns = [c for c in local.forecasts.columns if c.startswith(("seasonal_naive", "auto_ets"))]
    assert len(columns) > 4
    keys = ["unique_id", "cutoff", "ds"]
    pd.testing.assert_frame_equal(
        spread.forecasts.sort_values(keys)[keys + columns].reset_index(drop=True),
        local.forecasts.sort_values(keys)[keys + columns].reset_index(drop=True),
    )


def test_backtest_folds_are_fitted_on_the_workers_of_an_active_client(client, data, monkeypatch):
    """Refitted folds are independent: each is a task on the cluster, with the same forecasts as in process."""
    from forecaster import backtest
    from forecaster.evaluation import backtest as backtest_module

    df, _ = data
    options = dict(n_windows=2, baselines=("seasonal_naive",), progress=False)
    with distributed.get_task_stream(client) as stream:
        spread = backtest(fast_model(), df, **options)
    assert sum("fit_and_forecast" in str(task["key"]) for task in stream.data) == 2
    with distributed.get_task_stream(client) as stream:
        backtest(fast_model(), df, refit=2, **options)  # the second fold reuses the first's model: in process
        backtest(fast_model(warm_start=True), df, **options)
    assert not any("fit_and_forecast" in str(task["key"]) for task in stream.data)
    monkeypatch.setattr(backtest_module, "active_client", lambda: None)  # folds and baselines in process
    with distributed.get_task_stream(client) as stream:
        local = backtest(fast_model(), df, **options)
    assert not stream.data
    pd.testing.assert_frame_equal(spread.forecasts, local.forecasts)
    pd.testing.assert_frame_equal(spread.metrics, local.metrics)
    pd.testing.assert_frame_equal(spread.attention, local.attention)
    assert spread.settings["occlusion"] == local.settings["occlusion"]
    assert spread.settings["blend_weights"] == local.settings["blend_weights"]


def _by_keys(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    frame = frame.assign(**{k: frame[k].astype(str) for k in keys if k == "unique_id"})
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def test_a_backtest_of_a_dask_frame_equals_the_in_process_one(client, data):
    """A panel small enough for a whole fit: the same models, so every forecast, baseline and score is the same."""
    from forecaster import backtest

    df, _ = data
    model = fast_model(future_covariates=["promo"], static_covariates=["group"])
    eager = backtest(model, df, n_windows=2, progress=False)
    lazy = backtest(model, dd.from_pandas(df, npartitions=3), n_windows=2, progress=False)
    assert is_dask_frame(lazy.forecasts)
    keys = ["unique_id", "cutoff", "model"]
    got, expected = _by_keys(lazy.metrics, keys), _by_keys(eager.metrics, keys)
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-5, atol=1e-6, check_dtype=False)
    forecast_keys = ["unique_id", "cutoff", "ds"]
    got = _by_keys(lazy.forecasts.compute(), forecast_keys)
    expected = _by_keys(eager.forecasts, forecast_keys)
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-5, atol=1e-5, check_dtype=False)
    timed = ["fit_seconds", "predict_seconds"]
    pd.testing.assert_frame_equal(lazy.summary().drop(columns=timed), eager.summary().drop(columns=timed), rtol=1e-5, atol=1e-6)
    pd.testing.assert_frame_equal(lazy.calibration(), eager.calibration(), check_exact=False, rtol=1e-9)
    with pytest.raises(ValueError, match="pooled over folds"):
        lazy.calibration(by="fold")
    assert _by_keys(lazy.skipped, ["unique_id", "fold"]).equals(_by_keys(eager.skipped, ["unique_id", "fold"]))
    assert lazy.settings["cutoffs"] == eager.settings["cutoffs"]
    assert lazy.settings["verdict"] == eager.settings["verdict"]
    with pytest.raises(TypeError, match="keeps its forecasts on the workers"):
        lazy.to_report("never-written")
    with pytest.raises(ValueError, match="`future_covariates_df` is not taken with a Dask `df`"):
        backtest(model, dd.from_pandas(df, npartitions=3), future_covariates_df=df[["unique_id", "ds", "promo"]])


def test_a_dask_backtest_fold_never_reads_past_its_cutoffs(client, streamed):
    """With windows streamed from the workers: rewriting every row after the first fold's cutoffs leaves that fold as it was."""
    from forecaster import backtest

    df, _ = make_panel(n_series=30, length=48, seed=5)
    model = fast_model(future_covariates=["promo"], max_steps=40)
    first = backtest(model, dd.from_pandas(df, npartitions=3), n_windows=2, baselines=("seasonal_naive",), progress=False)
    cutoffs = first.forecasts.compute().groupby("unique_id")["cutoff"].min()
    late = df["ds"].to_numpy() > df["unique_id"].map(cutoffs).to_numpy()
    changed = df.copy()
    changed.loc[late, "y"] = changed.loc[late, "y"] * 3 + 100
    changed.loc[late, "traffic"] = -changed.loc[late, "traffic"]
    second = backtest(model, dd.from_pandas(changed, npartitions=3), n_windows=2, baselines=("seasonal_naive",), progress=False)
    keys = ["unique_id", "cutoff", "ds"]
    columns = ["seq2seq", "seq2seq_q10", "seq2seq_q90", "seasonal_naive"]
    one, two = (_by_keys(r.forecasts.compute(), keys) for r in (first, second))
    fold0 = one["cutoff"].to_numpy() == one["unique_id"].map(cutoffs.set_axis(cutoffs.index.astype(str))).to_numpy()
    assert fold0.sum() > 100
    pd.testing.assert_frame_equal(one.loc[fold0, keys + columns], two.loc[fold0, keys + columns], check_exact=True)
    assert not np.allclose(one.loc[~fold0, "seq2seq"], two.loc[~fold0, "seq2seq"])


def test_the_workers_hold_out_and_encode_as_the_fit_does(client, data, streamed, monkeypatch):
    """Early stopping holds out the tails of every series on the workers too; a warm start's encodings (the trained
    scalings, new categories appended) are the ones the workers build windows with."""
    from forecaster.scale import window_stream

    plans = []
    real = window_stream.WindowStream.__init__

    def spy(self, parts, windows, plan, *args, **kwargs):
        plans.append(plan)
        real(self, parts, windows, plan, *args, **kwargs)

    monkeypatch.setattr(window_stream.WindowStream, "__init__", spy)
    df, _ = data
    model = fast_model(static_covariates=["group"], future_covariates=["promo"], max_steps=60, early_stopping=True)
    with pytest.warns(UserWarning, match="drawn on the workers"):
        model.fit(dd.from_pandas(df, npartitions=3))
    assert plans[-1].cut_every >= HORIZON and plans[-1].cuts == {}
    assert plans[-1].features == model.features_
    model.set_params(warm_start=True, early_stopping=None)
    changed, _ = _rare_category(df.assign(promo=df["promo"] * 3 + 1))
    with pytest.warns(UserWarning, match="drawn on the workers"):
        model.fit(dd.from_pandas(changed, npartitions=3))
    assert model.features_.categories["group"][-1] == "rare"  # appended after the trained ones
    assert plans[-1].features == model.features_
    assert plans[-1].cut_every == 0 and len(plans[-1].cuts) > 0  # calibration holds out some of the sample's series


def test_a_streamed_fit_fills_gaps_when_asked_and_names_them_otherwise(client, streamed):
    df, _ = make_panel(n_series=20, length=48, seed=6)
    gapped = df.drop(index=df.groupby("unique_id").head(30).groupby("unique_id").tail(5).index)  # 5 months missing in each
    with pytest.warns(UserWarning, match="drawn on the workers"):
        model = fast_model(fill_gaps=True, freq="MS", max_steps=30).fit(dd.from_pandas(gapped, npartitions=2))
    assert np.isfinite(model.predict(df=gapped)["y_hat"]).all()
    with pytest.raises(ValueError, match="have gaps in `ds`"):
        fast_model(freq="MS", max_steps=30).fit(dd.from_pandas(gapped, npartitions=2))


def test_a_dask_backtest_refuses_a_timestamp_off_the_calendar(client, data):
    from forecaster import backtest

    df, _ = data
    stray = df.copy()
    last = stray["ds"].max()
    stray.loc[(stray["unique_id"] == "S001") & (stray["ds"] == last), "ds"] = last + pd.Timedelta(days=14)
    with pytest.raises(ValueError, match=r"series 'S001' is not on the 'MS' grid"):
        backtest(fast_model(), dd.from_pandas(stray, npartitions=3), n_windows=2, baselines=(), progress=False)


def test_a_dask_backtest_refuses_partitions_on_different_calendars(client, monkeypatch):
    """Refused while the spans are read, before cutoffs are placed and any fold is fitted."""
    import forecaster.scale.dask_backtest as dask_backtest
    from forecaster import backtest

    def never(*args, **kwargs):
        raise AssertionError("a fold was fitted")

    monkeypatch.setattr(dask_backtest, "fit_whole_series", never)

    def daily(uid: str, hour: int) -> pd.DataFrame:
        ds = pd.date_range("2020-01-01", periods=60, freq="D") + pd.Timedelta(hours=hour)
        return pd.DataFrame({"unique_id": uid, "ds": ds, "y": np.sin(np.arange(60)) + 5.0})

    df = pd.concat([daily("a", 0), daily("b", 12)], ignore_index=True)  # each on a daily calendar, not the same one
    ddf = dd.from_pandas(df, npartitions=2)
    assert ddf.npartitions == 2
    with pytest.raises(ValueError, match=r"timestamp 2020-01-01 12:00:00 of series 'b' is not on the 'D' grid"):
        backtest(fast_model(freq="D", season_length=7), ddf, n_windows=2, baselines=(), progress=False)


def test_a_dask_backtest_gives_timestamps_back_in_the_callers_zone(client):
    from forecaster import backtest

    df, _ = make_panel(n_series=6, length=120, freq="h", seed=1, short_share=0.0, missing_share=0.0, static=False)
    df["ds"] = df["ds"].dt.tz_localize("Europe/Berlin")
    model = fast_model(horizon=6, input_size=24, future_covariates=["promo"])
    eager = backtest(model, df, n_windows=2, baselines=("seasonal_naive",), progress=False)
    lazy = backtest(model, dd.from_pandas(df, npartitions=2), n_windows=2, baselines=("seasonal_naive",), progress=False)
    got = lazy.forecasts.compute()
    assert str(got["ds"].dt.tz) == str(got["cutoff"].dt.tz) == str(lazy.metrics["cutoff"].dt.tz) == "Europe/Berlin"
    assert got["ds"].max() == df["ds"].max() and lazy.settings["cutoffs"] == eager.settings["cutoffs"]
    keys = ["unique_id", "cutoff", "ds"]
    pd.testing.assert_frame_equal(_by_keys(got, keys), _by_keys(eager.forecasts, keys), check_exact=False, rtol=1e-5, atol=1e-5)


def test_a_streamed_fit_learns_the_closures_of_the_whole_panel_not_of_its_sample(client, data, streamed):
    """The closures were learnt from the client's sample: a flag value on which the series outside it sold every day
    was learnt as closed (their forecasts there set to 0), and closures held only outside it were not learnt."""
    df, _ = data
    ids = pd.Series(df["unique_id"].unique())
    outside = set(ids[~in_sample(ids, dask_fit.ANCHOR_WINDOWS / _windows(df))])
    assert outside and len(outside) < len(ids)
    shut = df["ds"].dt.month.isin([1, 7]).astype(float)  # a flag on two months of every year
    away = df["unique_id"].isin(outside).to_numpy()
    on = (shut == 1).to_numpy()
    # Zeros inside the sample and sales outside it: not a closure. Zeros outside and nothing observed inside: one.
    inside_zero = np.where(on & ~away, 0.0, df["y"])
    outside_zero = np.where(on & away, 0.0, np.where(on, np.nan, df["y"]))
    for y, expected in ((inside_zero, {}), (outside_zero, {"shut": [1.0]})):
        frame = df.assign(shut=shut, y=y)
        model = fast_model(future_covariates=["shut"], max_steps=5)
        with pytest.warns(UserWarning, match="drawn on the workers"):
            model.fit(dd.from_pandas(frame, npartitions=3))
        assert model.closed_when_ == expected == fast_model(future_covariates=["shut"], max_steps=1).fit(frame).closed_when_


def test_a_streamed_fit_on_threads_leaves_the_warning_filters_as_they_were(data, streamed):
    """Worker threads each silenced warnings with ``warnings.catch_warnings``, which is not thread-safe: after a
    streamed fit on the threaded scheduler every warning of the process was ignored."""
    import warnings

    import dask

    df, _ = data
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        before = list(warnings.filters)
        for _ in range(3):  # a race: each run interleaves the threads anew
            # Threads, not the module's cluster; a shuffle the threaded scheduler can run (p2p needs the cluster).
            with dask.config.set({"scheduler": "threads", "dataframe.shuffle.method": "tasks"}):
                fast_model(max_steps=5).fit(dd.from_pandas(df, npartitions=4))
            assert warnings.filters == before
