"""Windows drawn partition by partition (as Dask workers draw them) are the pandas fit's windows, and the
covariate encodings merged from the partitions are the whole frame's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")

from forecaster.data.features import feature_parts, fit_features, merge_features  # noqa: E402
from forecaster.data.frequency import normalise_freq  # noqa: E402
from forecaster.data.roles import CovariateRoles  # noqa: E402
from forecaster.data.scaling import naive_error_table  # noqa: E402
from forecaster.data.validation import Columns, clean_history  # noqa: E402
from forecaster.data.windows import admissible_origins, assemble  # noqa: E402
from forecaster.datasets import make_panel  # noqa: E402
from forecaster.model.inference import model_panel  # noqa: E402
from forecaster.scale.window_stream import StreamPlan, WindowStream, draw_windows, partition_facts  # noqa: E402

HORIZON = 6
ROLES = CovariateRoles(future=("promo",), past=("traffic",), static=("group", "size"))
COLUMNS = Columns()
FACTS = (COLUMNS, ROLES, "MS", HORIZON, 3, False)
UNITS = {"input_size": 12, "season_length": 12, "log_target": False, "seasonal_profile": True, "trend_line": True}


@pytest.fixture(scope="module")
def frame():
    df, _ = make_panel(n_series=24, length=50, seed=7, short_share=0.25)
    # a category held by one series only, in the last part
    df.loc[df["unique_id"] == df["unique_id"].iloc[-1], "group"] = "rare"
    cleaned, _ = clean_history(df, COLUMNS, ROLES)
    return cleaned


def _parts(frame: pd.DataFrame, n: int) -> list[pd.DataFrame]:
    ids = frame["unique_id"].unique()
    return [frame.loc[frame["unique_id"].isin(chunk)] for chunk in np.array_split(ids, n)]


def _plan(frame: pd.DataFrame, cuts: dict | None = None, cut_every: int = 0) -> StreamPlan:
    return StreamPlan(
        columns=COLUMNS,
        roles=ROLES,
        features=fit_features(frame, "unique_id", ROLES),
        freq="MS",
        horizon=HORIZON,
        units=UNITS,
        fill_gaps=False,
        input_size=12,
        min_history=3,
        scaler="standard",
        weigh_by_naive_error=True,
        cut_every=cut_every,
        cuts=cuts or {},
    )


def test_encodings_merged_from_parts_are_the_whole_frames(frame):
    whole = fit_features(frame, "unique_id", ROLES)
    merged = merge_features([feature_parts(part, "unique_id", ROLES) for part in _parts(frame, 4)])
    assert merged.categories == whole.categories and "rare" in merged.categories["group"]
    assert list(merged.numeric) == list(whole.numeric)
    for name, scaling in whole.numeric.items():
        assert merged.numeric[name].mean == pytest.approx(scaling.mean, rel=1e-12, abs=1e-12)
        assert merged.numeric[name].std == pytest.approx(scaling.std, rel=1e-12)
        seen = merged.numeric[name]  # the values the parts saw, joined: what the whole frame saw
        assert (seen.low, seen.high, seen.codes) == (scaling.low, scaling.high, scaling.codes)
    # one part gives exactly what fit_features gives
    assert merge_features([feature_parts(frame, "unique_id", ROLES)]) == whole
    facts = [partition_facts(part, *FACTS) for part in _parts(frame, 3)]
    assert sum(f.rows for f in facts) == len(frame) and sum(f.series for f in facts) == frame["unique_id"].nunique()
    whole = model_panel(frame, COLUMNS, ROLES, whole, normalise_freq("MS"), HORIZON, UNITS)
    n_windows = len(admissible_origins(whole, 12, HORIZON, np.full(len(whole.ids), whole.last_col), 3)[0])
    assert sum(f.windows for f in facts) == n_windows  # no missing targets at the ends: every origin is admissible


def test_drawn_windows_are_the_pandas_fits_windows(frame):
    """Every window a partition draws is admissible in the whole panel and carries exactly its inputs and targets."""
    plan = _plan(frame)
    whole = model_panel(frame, COLUMNS, ROLES, plan.features, normalise_freq("MS"), HORIZON, UNITS)
    series, origins = admissible_origins(whole, 12, HORIZON, np.full(len(whole.ids), whole.last_col), 3)
    admissible = set(zip(whole.ids[series].tolist(), whole.timestamps(series, origins).tolist(), strict=True))
    part = _parts(frame, 3)[1]
    draw = draw_windows(part, 200, seed=3, plan=plan)
    assert len(draw.ids) == 200 and set(draw.ids) <= set(part["unique_id"])
    assert len(set(draw.ids)) > 1
    keys = list(zip(draw.ids.tolist(), draw.origins.tolist(), strict=True))
    assert set(keys) <= admissible
    row = pd.Index(whole.ids).get_indexer(draw.ids)
    col = whole.last_col - (whole.end[row] - whole.grid.get_indexer(pd.DatetimeIndex(draw.origins)))
    table = naive_error_table(whole.y, 12, whole.first_col)
    expected = assemble(whole, ROLES, row, col, 12, HORIZON, "standard", True, table)
    for name, value in expected.__dict__.items():
        np.testing.assert_array_equal(getattr(draw.batch, name), value, err_msg=name)
    # the same seed draws the same windows
    again = draw_windows(part, 200, seed=3, plan=plan)
    np.testing.assert_array_equal(again.batch.past_target, draw.batch.past_target)


def test_held_out_tails_are_never_drawn(frame):
    part = _parts(frame, 2)[0]
    ids = part["unique_id"].unique()
    cut = {ids[0]: 10, ids[1]: 8}
    draw = draw_windows(part, 2000, seed=0, plan=_plan(frame, cut))
    end = part.groupby("unique_id")["ds"].max()
    for uid, periods in cut.items():
        origins = pd.DatetimeIndex(draw.origins[draw.ids == uid])
        assert len(origins)
        last_target = origins + pd.DateOffset(months=HORIZON)
        assert (last_target <= end[uid] - pd.DateOffset(months=periods)).all()
    other = pd.DatetimeIndex(draw.origins[~np.isin(draw.ids, list(cut))])
    assert (other == other.max()).any()  # series without a cut give their last window too


def test_a_stream_gives_full_batches_over_every_partition_and_repeats_with_its_seed(frame, monkeypatch):
    from forecaster.scale import window_stream

    monkeypatch.setattr(window_stream, "ROUND_STEPS", 4)
    parts = [dask.delayed(part) for part in _parts(frame, 3)]
    windows = [len(part) - part["unique_id"].nunique() * HORIZON for part in _parts(frame, 3)]

    def sync(*tasks):
        return dask.compute(*tasks, scheduler="sync")

    def batches(seed: int, steps: int):
        stream = WindowStream(parts, windows, _plan(frame), batch_size=16, total_windows=16 * steps, seed=seed, compute=sync)
        try:
            return [stream() for _ in range(steps)], stream.drawn
        finally:
            stream.close()

    first, drawn = batches(0, 30)
    assert all(len(b.loc) == 16 for b in first) and drawn >= 16 * 30
    second, _ = batches(0, 30)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a.past_target, b.past_target)
    other, _ = batches(1, 30)
    assert not np.array_equal(first[0].past_target, other[0].past_target)
    # rounds draw from every partition: the scale statistics of all series' windows show up
    seen = np.concatenate([b.scale for b in first])
    assert len(np.unique(np.round(seen, 6))) > 100


def test_bad_rows_in_a_partition_are_named(frame):
    bad = frame.copy()
    bad.loc[bad.index[5], "promo"] = np.nan
    with pytest.raises(ValueError, match="promo"):
        partition_facts(bad, *FACTS)
    uid = frame["unique_id"].iloc[0]
    gapped = frame.drop(index=frame.index[frame["unique_id"] == uid][10])
    with pytest.raises(ValueError, match=rf"gaps in `ds`.*in series '{uid}'"):
        partition_facts(gapped, *FACTS)
    short = frame.loc[(frame["unique_id"] != uid) | (frame.groupby("unique_id").cumcount() < 4)]
    with pytest.raises(ValueError, match=rf"1 of \d+ series are shorter than one horizon \(\d+ periods\): \['{uid}'\]"):
        partition_facts(short, *FACTS)


def test_early_stoppings_tails_are_held_out_of_every_series_and_draws_ignore_row_order(frame):
    part = _parts(frame, 2)[1]
    draw = draw_windows(part, 1500, seed=1, plan=_plan(frame, cut_every=HORIZON + 1))
    end = part.groupby("unique_id")["ds"].max()
    last_target = pd.DatetimeIndex(draw.origins) + pd.DateOffset(months=HORIZON)
    allowed = pd.DatetimeIndex(end.reindex(draw.ids).to_numpy()) - pd.DateOffset(months=HORIZON + 1)
    assert (last_target <= allowed).all() and (last_target == allowed).any()
    shuffled = part.sample(frac=1.0, random_state=0)
    again = draw_windows(shuffled, 1500, seed=1, plan=_plan(frame, cut_every=HORIZON + 1))
    np.testing.assert_array_equal(again.ids, draw.ids)
    np.testing.assert_array_equal(again.batch.past_target, draw.batch.past_target)


def test_rounds_draw_each_partition_in_proportion_to_its_windows(frame):
    """Every window has the same chance: a partition with most of the windows gets most of the draws."""
    windows = [7400] + [100] * 26 + [1] * 5

    def nothing(*tasks):
        return ()

    stream = WindowStream([None] * len(windows), windows, _plan(frame), batch_size=16, total_windows=0, seed=0, compute=nothing)
    got = np.zeros(len(windows))
    for _ in range(2000):
        got += stream._allocate(1024)
    stream.close()
    share = got / got.sum()
    expected = np.asarray(windows) / sum(windows)
    assert share[0] == pytest.approx(expected[0], abs=0.01)  # 0.74 of the windows, 0.74 of the draws
    assert share[1:27].mean() == pytest.approx(expected[1], rel=0.05)
    np.testing.assert_allclose(share[1:27], expected[1:27], rtol=0.25)
    assert got[27:].sum() > 0  # the smallest partitions are drawn too, in proportion


def test_the_clients_sample_always_holds_a_training_window():
    """A sample that would keep only series too short for a window is widened until it holds one."""
    import dask.dataframe as dd

    from forecaster.scale.dask_fit import _client_sample, in_sample

    ids = [f"S{i}" for i in range(40)]
    order = np.argsort(pd.util.hash_array(np.asarray(ids, dtype=object)))
    long = ids[order[-1]]  # the id that a hash-based sample keeps last
    rows = [(uid, t, 1.0) for uid in ids for t in pd.date_range("2000-01-01", periods=60 if uid == long else 8, freq="MS")]
    frame = pd.DataFrame(rows, columns=["unique_id", "ds", "y"])
    assert not in_sample(pd.Series([long]), 0.5).all()
    with dask.config.set(scheduler="sync"):
        sample = _client_sample(dd.from_pandas(frame, npartitions=2), COLUMNS, 1e-6, HORIZON, 3)
    assert long in set(sample["unique_id"])


def test_empty_rows_before_a_series_weigh_nothing_in_a_draw(frame):
    """Series are picked in proportion to the periods they are read over: 200 empty leading rows before one series
    made a partition pick it about 7 times as often as its neighbour of the same length."""
    part = _parts(frame, 3)[0]
    first = part["unique_id"].iloc[0]
    start = part.loc[part["unique_id"] == first, "ds"].min()
    empty = part[part["unique_id"] == first].iloc[:1].copy()
    leading = pd.concat([empty] * 200, ignore_index=True)
    leading["ds"] = pd.date_range(end=start, periods=201, freq="MS")[:-1]
    leading["y"] = np.nan
    padded = pd.concat([leading, part], ignore_index=True)
    plan = _plan(frame)
    clean_draw, padded_draw = draw_windows(part, 400, 5, plan), draw_windows(padded, 400, 5, plan)
    np.testing.assert_array_equal(padded_draw.ids, clean_draw.ids)
    np.testing.assert_array_equal(padded_draw.origins, clean_draw.origins)
