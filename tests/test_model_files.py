"""Model files under attack and accident: symlinks, interrupted saves, edited configs, values JSON cannot type.

Each test names the failure it guards against; all use tiny models (a fit takes well under a second).
"""

import datetime
import decimal
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel
from forecaster.model.files import ModelFileError, store

DATA = Path(__file__).parent / "data"
TINY = dict(hidden_size=8, max_steps=20)


def resign(folder: Path) -> None:
    """Record the current checksum of every file in the manifest: an edit made on purpose, not corruption."""
    manifest = json.loads((folder / "manifest.json").read_text())
    for name in manifest["sha256"]:
        manifest["sha256"][name] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


def leftovers(parent: Path) -> list[str]:
    """Hidden folders a save left next to its target (temporary or set-aside models)."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def small_panel():
    df, _ = make_panel(n_series=5, length=36, seed=3, short_share=0.0, missing_share=0.0, static=False)
    return df.drop(columns=["promo", "traffic"])


@pytest.fixture(scope="module")
def other(panel):
    """A second model, to save over a first one."""
    df, _ = panel
    return fast_model(**TINY, random_state=1, theta_weight=0.0, holt_winters_weight=0.0).fit(df)


def assert_same_forecasts(model, loaded, future=None) -> None:
    pd.testing.assert_frame_equal(model.predict(future_df=future), loaded.predict(future_df=future), check_exact=True)
    pd.testing.assert_frame_equal(model.explain(future_df=future), loaded.explain(future_df=future), check_exact=True)


# ---------------------------------------------------------------------------- 1. symlinks
def test_save_never_writes_through_symlinks_in_the_model_folder(fitted, panel, tmp_path):
    """Catches `save` opening `weights.pt`/`config.json` for writing: a symlink there would redirect it outside."""
    folder = tmp_path / "model"
    fitted.save(folder)
    victims = {name: tmp_path / f"victim-{name}" for name in ("weights.pt", "config.json")}
    for name, victim in victims.items():
        victim.write_bytes(b"precious")
        (folder / name).unlink()
        (folder / name).symlink_to(victim)
    fitted.save(folder)
    assert all(victim.read_bytes() == b"precious" for victim in victims.values())
    assert not any((folder / name).is_symlink() for name in os.listdir(folder))
    assert_same_forecasts(fitted, Seq2SeqForecaster.load(folder), future_frame(panel[0], 6))


def test_save_replaces_a_symlinked_target_and_leaves_what_it_points_to_alone(fitted, tmp_path):
    """Catches `save` following a symlink at `path` and writing into (or wiping) the folder it points to."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("mine")
    (tmp_path / "model").symlink_to(elsewhere, target_is_directory=True)
    fitted.save(tmp_path / "model")
    assert sorted(os.listdir(elsewhere)) == ["notes.txt"]
    assert not (tmp_path / "model").is_symlink()
    assert Seq2SeqForecaster.load(tmp_path / "model").state_.to_dict() == fitted.state_.to_dict()


def test_save_refuses_to_replace_a_file_or_a_folder_that_holds_more_than_a_model(fitted, tmp_path):
    """Catches a whole-folder swap deleting the user's own files (`model.save("~/Documents")`)."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="notes.txt"):
        fitted.save(folder)
    assert sorted(os.listdir(folder)) == ["notes.txt"]
    (tmp_path / "file").write_text("mine")
    with pytest.raises(FileExistsError, match="not a directory"):
        fitted.save(tmp_path / "file")
    assert (tmp_path / "file").read_text() == "mine" and leftovers(tmp_path) == []


# ---------------------------------------------------------------------------- 2. atomic saves
def _fail_on_call(monkeypatch, name: str, call: int, error: BaseException) -> None:
    """Make ``store.<name>`` raise ``error`` at its ``call``-th call (a crash at that step of a save)."""
    original, calls = getattr(store, name), []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == call:
            raise error
        return original(*args, **kwargs)

    monkeypatch.setattr(store, name, failing)


@pytest.mark.parametrize(
    "step, call",
    [("write_file", 1), ("write_file", 2), ("write_file", 3), ("write_file", 4), ("fsync_dir", 1), ("rename", 2)],
)
def test_a_save_that_dies_midway_leaves_the_old_model_whole_and_no_temporary_folder(
    fitted, other, panel, tmp_path, monkeypatch, step, call
):
    """Catches files written in place one after another: a save killed midway left a folder `load` refused."""
    folder = tmp_path / "model"
    fitted.save(folder)
    _fail_on_call(monkeypatch, step, call, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        other.save(folder)
    monkeypatch.undo()
    assert sorted(os.listdir(folder)) == ["config.json", "history.npz", "manifest.json", "weights.pt"]
    assert leftovers(tmp_path) == []
    assert_same_forecasts(fitted, Seq2SeqForecaster.load(folder), future_frame(panel[0], 6))
    other.save(folder)  # and the next save goes through
    assert_same_forecasts(other, Seq2SeqForecaster.load(folder))
    assert leftovers(tmp_path) == []


def test_an_encoding_failure_touches_nothing(fitted, other, panel, tmp_path, monkeypatch):
    """Catches weights written before the history fails to encode (today's order), leaving a mix `load` refuses."""
    folder = tmp_path / "model"
    fitted.save(folder)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        other.save(folder)
    monkeypatch.undo()
    assert_same_forecasts(fitted, Seq2SeqForecaster.load(folder), future_frame(panel[0], 6))
    assert leftovers(tmp_path) == []


def test_a_save_that_dies_between_its_renames_leaves_the_old_model_recoverable_and_load_says_where(
    fitted, other, panel, tmp_path, monkeypatch
):
    """Catches the one instant with no model at `path`: the old one must be whole beside it, and `load` must say so."""
    folder = tmp_path / "model"
    fitted.save(folder)
    calls = []

    def dies_after_the_first(source, target):  # the first rename happens; the process dies before the second
        calls.append(1)
        if len(calls) == 1:
            os.rename(source, target)
            return
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "rename", dies_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        other.save(folder)
    monkeypatch.undo()
    assert not folder.exists()
    with pytest.raises(ModelFileError, match="previous model is intact in") as error:
        Seq2SeqForecaster.load(folder)
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith(".model.old-")]
    assert str(aside) in str(error.value)
    aside.rename(folder)
    assert_same_forecasts(fitted, Seq2SeqForecaster.load(folder), future_frame(panel[0], 6))


# ---------------------------------------------------------------------------- 3. the config is checked
@pytest.mark.parametrize(
    "edit",
    [
        lambda c: c["fitted"].update(log_target=True),
        lambda c: c["fitted"].update(season_length=4),
        lambda c: c["params"].update(theta_weight=0.9),
        lambda c: c["fitted"].update(quantiles=[0.2, 0.5, 0.8]),
    ],
    ids=["log_target", "season_length", "theta_weight", "relabelled-quantiles"],
)
def test_an_edited_config_is_refused_by_its_checksum(fitted, tmp_path, edit):
    """Catches config.json outside the integrity check: these edits loaded silently and changed every forecast."""
    folder = tmp_path / "model"
    fitted.save(folder)
    config = json.loads((folder / "config.json").read_text())
    edit(config)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    with pytest.raises(ModelFileError, match="`config.json`.*checksum"):
        Seq2SeqForecaster.load(folder)


def _set(path: str, value):
    """An edit of the config at a dotted path: set it, delete it (``KeyError``) or, for ``path+``, update it with a dict."""

    def edit(config):
        *parents, last = path.rstrip("+").split(".")
        node = config
        for key in parents:
            node = node[key]
        if value is KeyError:
            del node[last]
        elif path.endswith("+"):
            node[last].update(value)
        else:
            node[last] = value

    return edit


SCHEMA_CASES = [
    ("fitted.n_members", 1_000_000, r"`fitted\.n_members`.*at most|\[1, 1000\]"),
    ("fitted.n_members", 2, r"`fitted\.n_members`.*holds 1 member"),
    ("fitted.network.hidden_size", 10**9, r"`fitted\.network\.hidden_size`"),
    ("fitted.network.hidden_size", 32, r"hidden_size|`fitted\.network`.*shape"),
    ("fitted.network.num_layers", "2", r"`fitted\.network\.num_layers`"),
    ("fitted.network.n_outputs", 5, r"`fitted\.network\.n_outputs`"),
    ("fitted.network+", {"input_size": 99_999, "horizon": 99_999}, r"`fitted\.network\.input_size` x"),
    ("fitted.season_length", "12", r"`fitted\.season_length`"),
    ("fitted.freq", KeyError, r"`fitted\.freq` is missing"),
    ("fitted.freq", "every other tuesday", r"`fitted\.freq`"),
    ("fitted.surprise", 1, r"`fitted\.surprise`.*not a key"),
    ("fitted.scaler", "minmax", r"`fitted\.scaler`"),
    ("fitted.tz", "wall:Nowhere/Atlantis", r"`fitted\.tz`"),
    ("fitted.quantiles", [0.15, 0.25, 0.35, 0.45, 0.5, 0.55, 0.65, 0.75, 0.85], r"`params\.quantiles`"),
    ("fitted.quantiles", [0.5, 0.1, 0.9], r"`fitted\.quantiles`"),
    ("fitted.roles.static", ["group"], r"`fitted\.features`"),
    ("fitted.features.categories.group", [{"type": "str", "value": "A"}], r"`fitted\.network\.static_features`"),
    ("fitted.features.categories.group", ["A", "B", "C"], r"`fitted\.features\.categories\.group\[0\]`"),
    ("fitted.features.numeric.size.std", 0.0, r"`fitted\.features\.numeric\.size\.std`"),
    ("fitted.training_end.ds", [], r"`fitted\.training_end"),
    ("fitted.history_columns", [], r"history_columns|history\.npz"),
    ("params.surprise", 1, r"`params\.surprise`.*not a parameter"),
    ("params.dropout", 5, r"`params`.*`dropout`"),
    ("params.horizon", 7, r"`params\.horizon`"),
    ("params.future_covariates", {"promo": 1}, r"`params\.future_covariates`"),
    ("format_version", 1, r"format version"),
    ("fitted.calibration.factors", [[1e5] * 9] * 6, r"`fitted\.calibration\.factors\[0\]\[0\]`"),
    ("fitted.calibration.factors", [[1, 1, 1, 1, 7, 1, 1, 1, 1]] * 6, r"`fitted\.calibration\.factors`.*1 at the median"),
    ("fitted.calibration.factors", [[1.0] * 9] * 5, r"`fitted\.calibration\.factors` .*6 rows"),
    ("fitted.calibration.blend", {"theta_weight": 0.95, "holt_winters_weight": 0.15}, r"`fitted\.calibration\.blend`"),
    ("fitted.calibration.blend", {"prophet": 0.1}, r"`fitted\.calibration\.blend`"),
    ("fitted.calibration.treatment", "widest", r"`fitted\.calibration\.treatment`"),
    ("fitted.calibration.shape", 3.0, r"`fitted\.calibration\.shape`"),
]


@pytest.mark.parametrize("path, value, message", SCHEMA_CASES, ids=[f"{p}={v!r}"[:40] for p, v, _ in SCHEMA_CASES])
def test_a_config_edited_with_its_checksum_breaks_the_schema_with_an_error_naming_the_key(fitted, tmp_path, path, value, message):
    """Catches raw AttributeError/KeyError/MemoryError (or minutes of allocation) from configs edited on purpose."""
    folder = tmp_path / "model"
    fitted.save(folder)
    config = json.loads((folder / "config.json").read_text())
    _set(path, value)(config)
    (folder / "config.json").write_text(json.dumps(config))
    resign(folder)
    start = time.perf_counter()
    with pytest.raises(ModelFileError, match=message):
        Seq2SeqForecaster.load(folder)
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize(
    "path, value, message",
    [
        ("fitted.n_members", 1_000_000, r"`fitted\.n_members`"),
        ("fitted.network.cell", "transformer", r"`fitted\.network\.cell`"),
        ("fitted.history_columns.group", "pickle", r"`fitted\.history_columns\.group`"),
        ("params.n_models", -1, r"`n_models`"),
    ],
)
def test_format_1_configs_are_checked_against_the_schema_too(tmp_path, path, value, message):
    """Catches a format-1 file (which has no checksum of its config) bypassing the schema: n_members=1e6 ran for minutes."""
    folder = tmp_path / "model"
    shutil.copytree(DATA / "model_0_1_0", folder)
    config = json.loads((folder / "config.json").read_text())
    _set(path, value)(config)
    (folder / "config.json").write_text(json.dumps(config))
    start = time.perf_counter()
    with pytest.raises(ModelFileError, match=message):
        Seq2SeqForecaster.load(folder)
    assert time.perf_counter() - start < 10


def test_a_saved_model_writes_format_2_with_a_manifest_of_every_file(fitted, tmp_path):
    """Catches a manifest that leaves a file out, or a format version that does not say a manifest exists."""
    fitted.save(tmp_path / "model")
    manifest = json.loads((tmp_path / "model" / "manifest.json").read_text())
    assert manifest["format_version"] == 2 == json.loads((tmp_path / "model" / "config.json").read_text())["format_version"]
    for name in ("config.json", "weights.pt", "history.npz"):
        assert manifest["sha256"][name] == hashlib.sha256((tmp_path / "model" / name).read_bytes()).hexdigest()


# ---------------------------------------------------------------------------- 4-6. types survive the round trip
STATICS = {
    "int_cat": pd.Categorical([1, 2, 3, 1, 2]),
    "int_obj": pd.Series([1, 2, 3, 1, 2], dtype=object),
    "float_cat": pd.Categorical([0.5, 1.5, 0.5, 2.5, 1.5]),
    "flag": pd.Series([True, False, True, False, True]),
    "text": pd.Series(["a", "b", "a", "c", "b"], dtype=object),
    "launch": pd.Series(pd.to_datetime(["2020-01-01", "2021-06-01", "2020-01-01", "2022-03-01", "2021-06-01"])),
    "launch_tz": pd.Series(pd.to_datetime(["2020-01-01", "2021-06-01", "2020-01-01", "2022-03-01", "2021-06-01"])).dt.tz_localize(
        "Europe/Paris"
    ),
    "opened": pd.Series([datetime.date(2020, 1, 1), datetime.date(2021, 1, 1)] * 2 + [datetime.date(2022, 1, 1)], dtype=object),
    "mixed": pd.Series([1, "1", 2.0, 1, "1"], dtype=object),
}


def _with_statics(df: pd.DataFrame) -> pd.DataFrame:
    ids = df["unique_id"].unique()
    out = df.copy()
    position = out["unique_id"].map({uid: i for i, uid in enumerate(ids)}).to_numpy()
    for name, values in STATICS.items():
        series = pd.Series(values)
        out[name] = series.iloc[position].reset_index(drop=True).astype(series.dtype)
    return out


def _typed(values) -> list:
    return [(type(v), v) for v in values]


@pytest.mark.parametrize("names", [[name] for name in STATICS] + [list(STATICS)], ids=[*STATICS, "all"])
def test_static_categories_of_every_type_round_trip_and_forecast_bit_identically(small_panel, tmp_path, names):
    """Catches int categories coming back as strings (one-hot all zeros, forecasts changed without an error) and
    datetime statics failing `save` with "Timestamp is not JSON serializable" halfway through writing the folder."""
    df = _with_statics(small_panel)
    model = fast_model(**TINY, static_covariates=names).fit(df)
    assert set(model.state_.features.categories) == set(names)  # every one is one-hot encoded
    model.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert_same_forecasts(model, loaded)
    for name, values in model.state_.features.categories.items():
        assert _typed(loaded.state_.features.categories[name]) == _typed(values), name
    pd.testing.assert_frame_equal(loaded.history_, model.history_, check_exact=True)
    for name in names:
        assert _typed(loaded.history_[name]) == _typed(model.history_[name]), name
    assert loaded.state_.to_dict() == model.state_.to_dict()


def test_mixed_type_ids_stay_three_series_of_their_own_types(small_panel, tmp_path):
    """Catches ids 1, '1' and 2.0 (three series) coming back as two series of strings."""
    df = small_panel[small_panel["unique_id"].isin(["S000", "S001", "S002"])].copy()
    df["unique_id"] = df["unique_id"].map({"S000": 1, "S001": "1", "S002": 2.0}).astype(object)
    model = fast_model(**TINY).fit(df)
    model.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    before, after = model.predict(), loaded.predict()
    pd.testing.assert_frame_equal(before, after, check_exact=True)
    assert _typed(after["unique_id"].unique()) == _typed(before["unique_id"].unique())
    assert sorted(_typed(after["unique_id"].unique()), key=repr) == sorted([(int, 1), (str, "1"), (float, 2.0)], key=repr)
    pd.testing.assert_series_equal(loaded.training_end_, model.training_end_, check_exact=True)
    assert _typed(loaded.training_end_.index) == _typed(model.training_end_.index)
    pd.testing.assert_frame_equal(loaded.history_, model.history_, check_exact=True)


def test_integer_categorical_ids_come_back_as_integer_categories(small_panel, tmp_path):
    """Catches a categorical id column of integers coming back as a column of strings."""
    df = small_panel.copy()
    df["unique_id"] = pd.Categorical(df["unique_id"].map({f"S00{i}": 10 * (i + 1) for i in range(5)}))
    model = fast_model(**TINY).fit(df)
    model.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert isinstance(loaded.history_["unique_id"].dtype, pd.CategoricalDtype)
    pd.testing.assert_frame_equal(loaded.history_, model.history_, check_exact=True)
    pd.testing.assert_index_equal(loaded.training_end_.index, model.training_end_.index, exact=True)
    pd.testing.assert_frame_equal(model.predict(), loaded.predict(), check_exact=True)


def test_a_value_no_model_file_can_hold_is_refused_before_anything_is_written(small_panel, tmp_path):
    """Catches `save` failing midway (a folder without config.json) on a value JSON cannot type."""
    df = small_panel.copy()
    df["kind"] = df["unique_id"].map(lambda uid: decimal.Decimal(uid[-1]))
    model = fast_model(**TINY, static_covariates=["kind"]).fit(df)
    with pytest.raises(TypeError, match="`kind`.*Decimal"):
        model.save(tmp_path / "model")
    assert os.listdir(tmp_path) == []


def test_an_offset_object_as_freq_saves_and_loads(small_panel, tmp_path):
    """Catches `freq=pd.offsets.MonthBegin()` (an accepted parameter) making `save` fail with a JSON error."""
    model = fast_model(**TINY, freq=pd.offsets.MonthBegin()).fit(small_panel)
    model.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.freq == "MS"
    pd.testing.assert_frame_equal(model.predict(), loaded.predict(), check_exact=True)


@pytest.mark.parametrize(
    ("key", "value"),
    [("hidden_size", 16), ("input_size", 24), ("log_target", True), ("freq", "D"), ("attention_values", "observations")],
)
def test_parameters_edited_with_their_checksums_must_still_describe_the_fitted_model(tmp_path, key, value):
    """A config re-checksummed after an edit of its parameters is refused, not loaded with get_params() lying."""
    import hashlib

    df, _ = make_panel(n_series=4, length=40, seed=1, short_share=0.0, missing_share=0.0, static=False)
    model = Seq2SeqForecaster(horizon=6, input_size=12, hidden_size=8, max_steps=5, progress=False).fit(df)
    folder = tmp_path / "m"
    model.save(folder)
    config = json.loads((folder / "config.json").read_text())
    config["params"][key] = value
    (folder / "config.json").write_text(json.dumps(config))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["sha256"]["config.json"] = hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelFileError, match=r"`params"):
        Seq2SeqForecaster.load(folder)


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_manifest_that_is_not_a_regular_file_is_refused_without_reading_it(fitted, tmp_path, kind):
    """A FIFO manifest blocked load forever, a link to /dev/zero read until MemoryError, a folder raised IsADirectoryError."""
    fitted.save(tmp_path / "m")
    manifest = tmp_path / "m" / "manifest.json"
    manifest.unlink()
    if kind == "fifo":
        os.mkfifo(manifest)
    elif kind == "device":
        manifest.symlink_to("/dev/zero")
    else:
        manifest.mkdir()
    with pytest.raises(ModelFileError, match="`manifest.json` in .* is not a regular file"):
        Seq2SeqForecaster.load(tmp_path / "m")


def test_saving_over_the_folder_the_process_works_in_is_refused_and_changes_nothing(fitted, tmp_path, monkeypatch):
    """save('.') from inside the model folder renamed the working directory aside and deleted it."""
    fitted.save(tmp_path / "m")
    before = {p.name: p.read_bytes() for p in (tmp_path / "m").iterdir()}
    monkeypatch.chdir(tmp_path / "m")
    with pytest.raises(FileExistsError, match="holds the current working directory"):
        fitted.save(".")
    assert Path(os.getcwd()) == (tmp_path / "m").resolve() and Path(".").resolve().exists()
    assert {p.name: p.read_bytes() for p in (tmp_path / "m").iterdir()} == before
    monkeypatch.chdir(tmp_path)
    fitted.save("m")  # from outside, the same folder is replaced as usual
    assert Seq2SeqForecaster.load("m").history_.equals(fitted.history_)


def test_a_resigned_history_with_an_inf_target_is_refused_at_load(fitted, tmp_path):
    """It loaded and predict() forecast from it, while predict(df=model.history_) refused the same frame."""
    folder = tmp_path / "m"
    fitted.save(folder)
    columns = list(fitted.history_.columns)
    with np.load(folder / "history.npz", allow_pickle=False) as stored:
        arrays = dict(stored)
    key = f"c{columns.index('y')}"
    arrays[key] = arrays[key].copy()
    arrays[key][3] = np.inf
    np.savez(folder / "history.npz", **arrays)
    resign(folder)
    with pytest.raises(ModelFileError, match=r"history in history.npz is not valid input: Column `y` holds inf"):
        Seq2SeqForecaster.load(folder)


def test_a_load_racing_repeated_saves_reads_one_complete_version(fitted, tmp_path):
    """While one process saved a folder over and over, loads failed with false checksum errors or FileNotFoundError."""
    import threading

    folder = tmp_path / "m"
    fitted.save(folder)
    stop = threading.Event()

    def save_again():
        while not stop.is_set():
            fitted.save(folder)

    writer = threading.Thread(target=save_again)
    writer.start()
    failures = []
    try:
        for _ in range(300):
            try:
                Seq2SeqForecaster.load(folder)
            except (ModelFileError, OSError) as error:
                failures.append(str(error))
    finally:
        stop.set()
        writer.join()
    assert failures == []


def test_a_file_with_weights_its_version_accepted_still_loads_and_forecasts(tmp_path):
    """A 0.3.0-0.9.0 file with theta_weight=0.8 and Holt-Winters unset (0.15 then, 0.95 in all) loads and forecasts
    with its recorded blend, though 0.8 plus today's default of 0.25 would pass 1 in a new fit."""
    from test_persistence import rewrite_config

    folder = tmp_path / "model"
    shutil.copytree(DATA / "model_0_3_0", folder)
    config = json.loads((folder / "config.json").read_text())
    config["params"]["theta_weight"] = 0.8
    config["params"]["holt_winters_weight"] = None
    config["fitted"]["calibration"]["blend"] = {"theta_weight": 0.8, "holt_winters_weight": 0.15}
    rewrite_config(folder, config)
    model = Seq2SeqForecaster.load(folder)
    assert model._blend_weights() == {"theta_weight": 0.8, "holt_winters_weight": 0.15}
    assert model.predict()["y_hat"].notna().all()
    with pytest.raises(ValueError, match="sum to at most 1"):  # a new fit counts the unset weight at today's default
        Seq2SeqForecaster(horizon=6, theta_weight=0.8, progress=False).fit(make_panel(n_series=3, length=40, seed=0)[0])


@pytest.mark.parametrize("race", ["another save holds the folder aside", "another save puts its model in"])
def test_saves_racing_on_one_folder_succeed_and_leave_one_whole_model(fitted, other, tmp_path, monkeypatch, race):
    """Three processes saving one folder at once raised a raw OSError a few times in 450 saves: another save had set the
    folder aside (FileNotFoundError) or put its own model in place (Directory not empty) between this one's renames."""
    folder = tmp_path / "model"
    fitted.save(folder)
    original, calls = store.rename, []

    def raced(source, target):
        calls.append(1)
        if len(calls) == 1 and race == "another save holds the folder aside":  # between that save's two renames
            os.rename(folder, tmp_path / "held_by_another_save")
        if len(calls) == 2 and race == "another save puts its model in":  # after this save set the old one aside
            monkeypatch.setattr(store, "rename", original)
            fitted.save(folder)
            monkeypatch.setattr(store, "rename", raced)
        original(source, target)

    monkeypatch.setattr(store, "rename", raced)
    other.save(folder)
    monkeypatch.undo()
    assert_same_forecasts(other, Seq2SeqForecaster.load(folder))  # this save, the last one, is the model there
    assert leftovers(tmp_path) == []


def test_a_weights_file_holding_code_is_refused_without_advice_to_load_it_anyway(fitted, tmp_path):
    """torch's message was passed on: ANSI codes, and advice to load with weights_only=False or add_safe_globals."""
    import io

    import torch

    class Payload:
        def __reduce__(self):
            return (print, ("ran",))

    folder = tmp_path / "model"
    fitted.save(folder)
    buffer = io.BytesIO()
    torch.save({"members.0.x": Payload()}, buffer)
    (folder / "weights.pt").write_bytes(buffer.getvalue())
    resign(folder)
    with pytest.raises(ModelFileError, match=r"`weights.pt` holds objects other than tensors \(.*print") as error:
        Seq2SeqForecaster.load(folder)
    message = str(error.value)
    assert "weights_only" not in message and "safe_globals" not in message and "\x1b" not in message
    assert "never runs code from a model file" in message


def test_a_model_file_that_cannot_be_read_is_a_model_file_error(fitted, tmp_path, monkeypatch):
    """A weights file without read permission raised a bare PermissionError (a traceback in `forecaster explain`)."""
    import builtins

    fitted.save(tmp_path / "model")
    real_open = builtins.open

    def refusing(file, mode="r", *args, **kwargs):
        if str(file).endswith("weights.pt") and "r" in mode:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing)
    with pytest.raises(ModelFileError, match=r"`weights.pt` in .* cannot be read \(Permission denied\)"):
        Seq2SeqForecaster.load(tmp_path / "model")
