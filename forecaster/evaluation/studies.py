"""Backtest studies described by a TOML spec: which data, which model, which backtest.

A spec is checked before anything runs: an unknown table or key, or a value of the wrong kind, raises
:class:`SpecError` naming the table and key and listing the valid keys; nothing is silently ignored.
A CSV or Parquet ``path`` is resolved relative to the spec's folder (an absolute path is used as given).
"""

from __future__ import annotations

import difflib
import inspect
import numbers
import re
from pathlib import Path

import numpy as np
import pandas as pd
import tomllib

from .. import datasets
from ..callers import silenced
from ..data.dates import (
    AmbiguousDatesError,
    UnreadableDatesError,
    in_utc_if_offsets_differ,
    numbers_as_text,
    read_text_dates,
)
from ..data.tables import read_table
from ..estimator import Seq2SeqForecaster
from ..model.params import check_params
from .backtest import BacktestResult, backtest, check_backtest_arguments

LOADERS = {
    "m3": datasets.load_m3,
    "tourism": datasets.load_tourism,
    "electricity": datasets.load_electricity,
    "synthetic": datasets.make_panel,
}
TABLES = ("data", "model", "backtest")
TOP_LEVEL = ("title", *TABLES)
ROLE_KEYS = ("future_covariates", "past_covariates", "static_covariates")
COLUMN_KEYS = ("id_col", "time_col", "target_col")
DATA_KEYS = ("loader", "args", "path", *COLUMN_KEYS, "date_format", *ROLE_KEYS, "freq", "horizon", "max_series")
COLUMN_DEFAULTS = {"id_col": "unique_id", "time_col": "ds", "target_col": "y"}


class SpecError(ValueError):
    """A study spec that cannot run as written; the message names the table and key at fault."""


def model_keys() -> tuple[str, ...]:
    """Keys of [model]: every ``Seq2SeqForecaster`` parameter."""
    return tuple(name for name in inspect.signature(Seq2SeqForecaster.__init__).parameters if name != "self")


def backtest_keys() -> tuple[str, ...]:
    """Keys of [backtest]: every ``backtest`` keyword but the model, the data and the progress switch."""
    return tuple(name for name in inspect.signature(backtest).parameters if name not in ("model", "df", "progress"))


def _valid_keys(table: str) -> tuple[str, ...]:
    return {"data": DATA_KEYS, "model": model_keys(), "backtest": backtest_keys()}[table]


def _check_keys(given: dict, valid: tuple[str, ...], where: str) -> None:
    # The file's columns are named in [data], which the model takes them from: a name in [model] would be a second one.
    named = [k for k in given if k in COLUMN_DEFAULTS and given[k] != COLUMN_DEFAULTS[k]] if where == "[model]" else []
    if named:
        raise SpecError(f"[model] `{named[0]}`: a file's column names are set in [data] (`{named[0]}` there), not in [model].")
    unknown = [key for key in given if key not in valid]
    if unknown:
        close = [key for key in valid if unknown[0] in key] or difflib.get_close_matches(unknown[0], valid, n=1)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        raise SpecError(f"unknown key `{unknown[0]}` in {where}{hint}; valid keys: {', '.join(valid)}.")


def _check_top_level(spec: dict) -> None:
    valid = "`title`, " + ", ".join(f"[{name}]" for name in TABLES)
    for key, value in spec.items():
        if key not in TOP_LEVEL:
            close = difflib.get_close_matches(key, TOP_LEVEL, n=1)
            what = f"table [{key}]" if isinstance(value, dict) else f"top-level key `{key}`"
            hint = f" (did you mean {'`title`' if close == ['title'] else f'[{close[0]}]'}?)" if close else ""
            raise SpecError(f"unknown {what}{hint}; valid: {valid}.")
        if key == "title" and not isinstance(value, str):
            raise SpecError(f"`title` must be a string; got {value!r}.")
        if key in TABLES and not isinstance(value, dict):
            raise SpecError(f"`{key}` must be a table ([{key}] with keys {', '.join(_valid_keys(key))}); got {value!r}.")
    if "data" not in spec:
        raise SpecError(f"the spec has no [data] table; valid keys of [data]: {', '.join(DATA_KEYS)}.")


def _positive_int(data: dict, key: str) -> None:
    value = data.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
        raise SpecError(f"[data] `{key}` must be a positive integer; got {value!r}.")


def _check_data(data: dict) -> None:
    _check_keys(data, DATA_KEYS, "[data]")
    if ("loader" in data) == ("path" in data):
        raise SpecError("[data] needs exactly one of `loader` (a built-in dataset) or `path` (a CSV or Parquet file).")
    if "loader" in data:
        name = data["loader"]
        if name not in LOADERS:
            raise SpecError(f"[data] `loader` must be one of {', '.join(LOADERS)}; got {name!r}.")
        if not isinstance(data.get("args", {}), dict):
            raise SpecError(f'[data] `args` must be a table, e.g. args = {{ group = "monthly" }}; got {data["args"]!r}.')
        valid = tuple(inspect.signature(LOADERS[name]).parameters)
        _check_keys(data.get("args", {}), valid, f"[data] args of loader {name!r}")
        for key in COLUMN_KEYS:
            if key in data:
                raise SpecError(f"[data] `{key}` names a column of a `path` file; loader {name!r} gives unique_id, ds and y.")
    else:
        if "args" in data:
            raise SpecError("[data] `args` are the arguments of a `loader`; a `path` file takes none.")
        for key in ("path", *COLUMN_KEYS, "date_format"):
            if key in data and not isinstance(data[key], str):
                raise SpecError(f"[data] `{key}` must be a string; got {data[key]!r}.")
    for key in ROLE_KEYS:
        value = data.get(key, [])
        if not isinstance(value, str) and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise SpecError(f'[data] `{key}` must be a list of column names, e.g. {key} = ["promo"]; got {value!r}.')
    if "freq" in data and not isinstance(data["freq"], str):
        raise SpecError(f'[data] `freq` must be a pandas offset alias such as "MS"; got {data["freq"]!r}.')
    _positive_int(data, "horizon")
    _positive_int(data, "max_series")


def load_spec(path: str | Path) -> dict:
    """Read and check a study spec.

    Raises:
        SpecError: the file is missing or not TOML, or a table or key is unknown or of the wrong kind.
    """
    try:
        spec = tomllib.loads(Path(path).read_text())
    except OSError as error:
        raise SpecError(f"cannot read the spec {str(path)!r}: {error.strerror or error}.") from error
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{str(path)!r} is not valid TOML: {error}.") from error
    _check_top_level(spec)
    _check_data(spec["data"])
    for table in ("model", "backtest"):
        _check_keys(spec.get(table, {}), _valid_keys(table), f"[{table}]")
    baselines = spec.get("backtest", {}).get("baselines")
    if baselines is not None and not isinstance(baselines, list):
        raise SpecError(f'[backtest] `baselines` must be a list such as ["seasonal_naive", "auto_ets"]; got {baselines!r}.')
    return spec


def _roles(data: dict) -> dict:
    """The covariate roles [data] declares; a SpecError where one names the file's id, time or target column."""
    roles = {key: [data[key]] if isinstance(data[key], str) else list(data[key]) for key in ROLE_KEYS if key in data}
    columns = {data.get(key, default): key for key, default in COLUMN_DEFAULTS.items()}
    for key, names in roles.items():
        taken = next((name for name in names if name in columns), None)
        if taken is not None:
            raise SpecError(f"[data] `{key}` names {taken!r}, the file's {columns[taken]} column; a covariate is another column.")
    return roles


# strftime directives a quarter format may hold besides %q (the quarter, 1-4), as regular expressions.
_QUARTER_PARTS = {"%Y": r"(?P<Y>\d{4})", "%y": r"(?P<y>\d{2})", "%q": r"(?P<q>[1-4])", "%%": "%"}


# Where a spec gives its date format, as errors name it.
SPEC_SETTING = "[data] `date_format`"


def _quarters(values: pd.Series, date_format: str, where: str, setting: str = SPEC_SETTING) -> pd.Series:
    """Dates written as quarters (``date_format`` with ``%q``, e.g. ``"%Y Q%q"`` for "1998 Q1"): each quarter's first day."""
    pattern = "".join(_QUARTER_PARTS.get(part, re.escape(part)) for part in re.split(r"(%.)", date_format) if part)
    found = values.astype(str).str.extract(f"^{pattern}$")
    bad = found.isna().any(axis=1).to_numpy() if len(found.columns) else np.ones(len(values), dtype=bool)
    if bad.any():
        raise SpecError(f"{where} holds {values[bad].iloc[0]!r}, which does not match {setting} {date_format!r}.")
    year = found["Y"].astype(int) if "Y" in found else 2000 + found["y"].astype(int) - 100 * (found["y"].astype(int) > 68)
    month = 3 * (found["q"].astype(int) - 1) + 1
    return pd.to_datetime(pd.DataFrame({"year": year, "month": month, "day": 1}))


def _example(setting: str, date_format: str) -> str:
    """How to give ``date_format`` where ``setting`` is set: a spec key or a command-line option."""
    return f'{setting} "{date_format}"' if setting.startswith("--") else f'date_format = "{date_format}"'


def parse_dates(values: pd.Series, date_format: str | None, where: str, setting: str = SPEC_SETTING) -> pd.Series:
    """A file's dates as timestamps, read one way only (``setting``: where a format is given, named in errors).

    With ``date_format`` (any ``strftime`` format, or one with ``%q`` for quarters such as ``"%Y Q%q"``, each dated on
    its first day; ISO weeks ``"%G-W%V"`` without a weekday are dated on their Monday, their first day), exactly
    that format, also for a column of numbers (years written as 1990 with ``"%Y"``, months as 199001 with ``"%Y%m"``).
    Without it, ISO dates as they are; other text only when it reads one way: dates that read
    differently day-first and month-first (03/04/1998) are refused, never read month-first without a word; numbers
    are refused (read directly they would be nanoseconds after 1970).

    Raises:
        SpecError: naming ``where`` (the ``time_col``), the first value that does not parse, and what to set.
    """
    numeric = pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)
    if date_format is not None:
        text = numbers_as_text(values) if numeric else values
        if "%q" in date_format:
            return _quarters(text, date_format, where, setting)
        if "%V" in date_format and not re.search("%[uwaA]", date_format):  # an ISO week names no day: its Monday
            text, date_format = text.astype(str) + "\x001", f"{date_format}\x00%u"
        try:
            with silenced(FutureWarning):  # pandas 2 warns where the text holds several UTC offsets (read below)
                parsed = pd.to_datetime(text, format=date_format)
            if pd.api.types.is_datetime64_any_dtype(parsed):
                return parsed
            problem = "its UTC offsets differ"
        except (ValueError, TypeError) as error:
            problem = str(error)
        instants = None if numeric else in_utc_if_offsets_differ(text, where, date_format)
        if instants is not None:
            return instants
        shown = date_format.removesuffix("\x00%u")  # as the user wrote it, and pandas' first line without its advice
        problem = problem.splitlines()[0].split(". You might")[0].replace("\x00%u", "").replace("\x001", "")
        raise SpecError(f"{where} does not match {setting} {shown!r}: {problem.rstrip('.')}.")
    if pd.api.types.is_datetime64_any_dtype(values):
        return values
    if numeric:
        example = values.iloc[0] if len(values) else None
        raise SpecError(
            f"{where} holds numbers ({values.dtype}, e.g. {example}), not dates; set {setting} to the format their "
            f"digits spell, e.g. {_example(setting, '%Y')} for years written as 1990 or {_example(setting, '%Y%m')} "
            "for months written as 199001."
        )
    try:
        return read_text_dates(values, where)
    except UnreadableDatesError as error:
        raise SpecError(
            f"{where} holds dates such as {error.example!r} that no common format reads; set {setting}, "
            f"e.g. {_example(setting, '%b-%y')} for Apr-98, {_example(setting, '%Y Q%q')} for 1998 Q1 or "
            f"{_example(setting, '%G-W%V')} for ISO weeks such as 2020-W01 (each dated on its Monday)."
        ) from None
    except AmbiguousDatesError as error:
        raise SpecError(
            f"{where} holds dates such as {error.example!r} that read differently day-first and month-first; set "
            f"{_example(setting, '%d/%m/%Y')} (day first) or {_example(setting, '%m/%d/%Y')} (month first), with your separator."
        ) from None


def _read_file(value: str, data: dict, base: Path, where: str = "[data] `path`") -> pd.DataFrame:
    """A CSV or Parquet file of the spec (relative to its folder), under its own column names, its times parsed."""
    path = (base / value).resolve()
    if path.is_dir():
        raise SpecError(f"{where} {value!r} is resolved relative to the spec's folder: {path} is a folder, not a file.")
    if not path.is_file():
        raise SpecError(f"{where} {value!r} is resolved relative to the spec's folder: {path} does not exist.")
    try:
        df = read_table(path)
    except ValueError as error:
        raise SpecError(f"{where} {value!r}: {error}") from None
    names = {key: data.get(key, default) for key, default in COLUMN_DEFAULTS.items()}
    if where != "[data] `path`":  # future-known covariates: no target
        names.pop("target_col")
    for key, name in names.items():
        if name not in df.columns:
            raise SpecError(
                f"[data] `{key}` {name!r} is not a column of {path.name}; its columns are {', '.join(map(str, df.columns))}."
            )
    time = names["time_col"]
    df[time] = parse_dates(df[time], data.get("date_format"), f"[data] `time_col` {time!r}")
    return df


def _file_columns(data: dict) -> dict:
    """The model's ``id_col``, ``time_col`` and ``target_col``: the file's own names, which warnings, errors, the
    report and its figures then use (a file renamed to unique_id, ds and y was described under those names)."""
    return {key: data.get(key, default) for key, default in COLUMN_DEFAULTS.items()}


def load_study_data(data: dict, base: Path) -> tuple[pd.DataFrame, dict]:
    """The frame and the model defaults (freq, horizon, roles) that a checked [data] table names."""
    given = {**_roles(data), **{key: data[key] for key in ("freq", "horizon") if key in data}}
    if "loader" in data:
        try:
            df, info = LOADERS[data["loader"]](**data.get("args", {}))
        except ImportError as error:
            raise SpecError(f"[data] `loader` {data['loader']!r}: {error}") from error
        except (TypeError, ValueError) as error:  # an argument the loader refuses: name the table and key
            raise SpecError(f"[data] `args` of loader {data['loader']!r}: {error}") from None
        defaults = {
            "horizon": info.horizon,
            "freq": info.freq,
            "season_length": info.season_length,
            **{key: list(getattr(info, key)) for key in ROLE_KEYS},
        }
        return df, {"description": f"{info.name} ({info.source})", **defaults, **given}
    df = _read_file(data["path"], data, base)
    defaults = {**{key: [] for key in ROLE_KEYS}, **_file_columns(data)}
    return df, {"description": str(Path(data["path"]).name), **defaults, **given}


def run_study(path: str | Path, progress: bool = True) -> tuple[BacktestResult, dict]:
    """Run the backtest a spec describes; returns the result and the spec.

    Raises:
        SpecError: the spec is wrong (see :func:`load_spec`), its file is missing or lacks a named column.
    """
    spec = load_spec(path)
    df, defaults = load_study_data(spec["data"], Path(path).parent)
    if "max_series" in spec["data"]:
        ids = defaults.get("id_col", COLUMN_DEFAULTS["id_col"])
        keep = pd.unique(df[ids])[: int(spec["data"]["max_series"])]
        df = df[df[ids].isin(keep)]
    description = defaults.pop("description")
    columns = {key: defaults.pop(key) for key in COLUMN_DEFAULTS if key in defaults}  # a file's names, from [data]
    params = {**defaults, "progress": progress, **spec.get("model", {}), **columns}  # [model] progress = false quiets training
    if "horizon" not in params:
        raise SpecError("the spec sets no horizon: give `horizon` in [data] or [model].")
    model = Seq2SeqForecaster(**params)
    try:  # a bad value is a spec error too: name where it came from
        check_params(model.get_params())
    except ValueError as error:
        table = "[model]" if any(f"`{key}`" in str(error) for key in spec.get("model", {})) else "[data] or [model]"
        raise SpecError(f"{table}: {error}") from None
    settings = dict(spec.get("backtest", {}))
    if "baselines" in settings:
        settings["baselines"] = tuple(settings["baselines"]) if isinstance(settings["baselines"], list) else settings["baselines"]
    try:
        check_backtest_arguments(
            settings.get("n_windows", 3),
            settings.get("step_size"),
            settings.get("refit", True),
            settings.get("baselines", ()),
            settings.get("season_length"),
            settings.get("n_jobs", 1),
        )
    except ValueError as error:
        raise SpecError(f"[backtest]: {error}") from None
    if "future_covariates_df" in settings:  # a file beside the data, with the same column names
        where = "[backtest] `future_covariates_df`"
        if not isinstance(settings["future_covariates_df"], str):
            raise SpecError(f"{where} must be the path of a CSV or Parquet file; got {settings['future_covariates_df']!r}.")
        settings["future_covariates_df"] = _read_file(settings["future_covariates_df"], spec["data"], Path(path).parent, where)
    result = backtest(model, df, progress=progress, **settings)
    result.settings["data"] = description
    return result, spec
