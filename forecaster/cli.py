"""The `forecaster` command: run backtest studies and draw attention plots for saved models."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")

if TYPE_CHECKING:
    from .estimator import Seq2SeqForecaster


class UsageError(Exception):
    """A command's arguments do not fit its inputs; reported in one line, with exit status 2 as argparse does."""


def _expected_errors() -> tuple[type[Exception], ...]:
    """Errors whose message says what to fix: reported as one line (exit status 2) instead of a traceback.

    The package's checks raise ValueError or TypeError (LeakageError, ModelFileError, ColumnTypeError and
    the study spec's SpecError among them); anything else is unexpected and keeps its traceback.
    """
    from .data.roles import LeakageError
    from .evaluation.studies import SpecError
    from .model.files import ModelFileError

    return (SpecError, LeakageError, ModelFileError, ValueError, TypeError)


def _writable_out(out: Path) -> Path:
    """``out`` if files can be written there, else a UsageError: checked before the work, not after it."""
    import tempfile

    blocked = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise UsageError(f"--out {str(out)!r}: {str(blocked)!r} is a file, not a folder.")
    existing = next(p for p in (out, *out.parents) if p.exists())  # where the first file or folder will be made
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".forecaster-probe-", dir=existing))
    except OSError as error:
        raise UsageError(f"--out {str(out)!r}: cannot write in {str(existing)!r} ({error.strerror}).") from None
    return out


def _backtest(args: argparse.Namespace) -> int:
    from .evaluation.studies import run_study

    out = _writable_out(Path(args.out or Path("reports") / Path(args.spec).stem))
    result, spec = run_study(args.spec, progress=not args.quiet)
    if not args.quiet:
        print(f"writing the report to {out} ...", file=sys.stderr, flush=True)
    report = result.to_report(out, title=spec.get("title"))
    print(summary_lines(result.summary()))
    print(f"\nReport written to {report} (and report.html beside it).")
    return 0


# Columns of the printed summary, under short names, so that it fits 100 columns (summary.csv has them all).
SUMMARY_COLUMNS = {
    "mean_mase": "MASE",
    "median_mase": "median",
    "rel_mase_vs_auto_ets": "vs AutoETS",
    "rel_mase_vs_seasonal_naive": "vs naive",
    "rel_mase_vs_mstl": "vs MSTL",
    "win_rate": "wins",
    "coverage": "coverage",
    "wql": "WQL",
    "fit_seconds": "fit s",
    "predict_seconds": "predict s",
}


def summary_lines(summary) -> str:
    """The backtest summary as printed: the main columns under short names, at most 100 characters wide."""
    table = summary[[c for c in SUMMARY_COLUMNS if c in summary.columns]].rename(columns=SUMMARY_COLUMNS)
    return table.to_string(float_format=lambda v: f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}", line_width=100)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}")
    return value


def _read_frame(path: str, option: str, names: dict[str, tuple[str, str]], id_dtype=None, date_format: str | None = None):
    """A CSV/Parquet file with its columns renamed to the model's: ``names`` maps a flag to (the file's name, the model's).

    Dates are read one way only, as a spec's are (``evaluation.studies.parse_dates``): ``date_format`` exactly,
    else ISO dates, else text that reads the same day-first and month-first.
    """
    from .data.tables import read_table

    where = Path(path)
    if not os.path.lexists(where):
        raise UsageError(f"{option} {path!r}: no such file.")
    if where.is_dir():
        raise UsageError(f"{option} {path!r} is a folder; give the path of a CSV or Parquet file.")
    if not where.is_file():  # a device (/dev/zero), a FIFO: reading would never end or block
        raise UsageError(f"{option} {path!r} is not a regular file; give the path of a CSV or Parquet file.")
    # Ids are read as the model's training ids are typed: '0001' stays text for a model fitted on text ids.
    id_name = names["--id-col"][0] if "--id-col" in names else None
    dtype = {id_name: str} if id_dtype is str and id_name is not None else None
    frame = read_table(path, dtype)
    columns = ", ".join(map(repr, map(str, frame.columns)))
    for flag, (name, model_name) in names.items():
        if name not in frame.columns:
            raise UsageError(
                f"{option} {path!r} has no column {name!r} (the model's is {model_name!r}; name the file's with {flag}); "
                f"its columns are {columns}."
            )
        if name != model_name and model_name in frame.columns:
            raise UsageError(f"{option} {path!r} has both {name!r} ({flag}) and the model's column {model_name!r}.")
    frame = frame.rename(columns={name: model_name for name, model_name in names.values()})
    own, time = names["--time-col"]
    from .evaluation.studies import SpecError, parse_dates

    try:  # numbers too: with --date-format they are read as its digits (1990 as %Y), without it refused by name
        frame[time] = parse_dates(frame[time], date_format, f"{option} {path!r} column {own!r}", "--date-format")
    except SpecError as error:
        raise UsageError(str(error)) from None
    return frame


def _pick_ids(requested: list[str] | None, known: list, max_series: int) -> list:
    """The series to plot: ``--ids`` matched to the model's ids (as written, or as text), else the first few."""
    if not requested:
        return known[:max_series]
    by_text = {str(uid): uid for uid in reversed(known)}
    picked = [uid if uid in known else by_text.get(uid) for uid in requested]
    unknown = [uid for uid, match in zip(requested, picked, strict=True) if match is None]
    if unknown:
        examples = ", ".join(repr(str(uid)) for uid in known[:5]) + (", ..." if len(known) > 5 else "")
        raise UsageError(
            f"--ids names series with no forecast: {', '.join(map(repr, unknown))}; the {len(known)} known series are {examples}"
        )
    return list(dict.fromkeys(picked))


def _explain(args: argparse.Namespace) -> int:
    import pandas as pd

    from .estimator import Seq2SeqForecaster
    from .evaluation.staged_folder import staged_folder
    from .model.fitted import history_in_zone
    from .plots import attention_diagnostics

    out = _writable_out(Path(args.out))
    model = Seq2SeqForecaster.load(args.model_dir)
    names = {
        "--id-col": (args.id_col or model.id_col, model.id_col),
        "--time-col": (args.time_col or model.time_col, model.time_col),
        "--target-col": (args.target_col or model.target_col, model.target_col),
    }
    ids_known = model.training_end_.index
    id_dtype = str if len(ids_known) and all(isinstance(uid, str) for uid in ids_known) else None
    df = _read_frame(args.data, "--data", names, id_dtype, args.date_format) if args.data else None
    keys = {flag: names[flag] for flag in ("--id-col", "--time-col")}  # the future holds no target
    future = _read_frame(args.future, "--future", keys, id_dtype, args.date_format) if args.future else None
    if future is None and model.roles_.future:
        raise UsageError(
            f"--future is required: the model uses future-known covariates {list(model.roles_.future)}; pass a "
            "CSV/Parquet file with their values over the horizon after each series' last timestamp."
        )
    explanation = model.explain(df=df, future_df=future, include_padding=True)
    forecasts = model.predict(df=df, future_df=future)
    ids = _pick_ids(args.ids, list(pd.unique(forecasts[model.id_col])), args.max_series)
    history = df if df is not None else history_in_zone(model)
    with staged_folder(out) as staging:  # every file or none: an interrupt leaves the folder as it was
        _explain_files(staging, model, explanation, forecasts, history, ids)
    diagnostics = attention_diagnostics(
        explanation, model.season_length_, id_col=model.id_col, model=model, df=history, future_df=future
    )
    shares = diagnostics.share_occlusion_ratio
    share_words = f"shares' occlusion ratio {shares:.2f}" if shares == shares else "no shares (log_target)"
    print(
        f"occlusion ratio {diagnostics.occlusion_ratio:.2f} ({_occlusion_words(diagnostics.occlusion_ratio)}), "
        f"{share_words}, padded mass {diagnostics.padded_mass:.3g}, entropy {diagnostics.normalised_entropy:.2f} of "
        f"uniform, last-season share {diagnostics.last_season_share:.2f}; {_history_words(args.data, model)}; plots in {out}"
    )
    return 0


def _explain_files(out: Path, model, explanation, forecasts, history, ids: list) -> None:
    """The files of ``forecaster explain``: each series' attention map, the profile, the forecasts, attention.csv."""
    import matplotlib.pyplot as plt

    from .plots import plot_attention, plot_attention_profile, plot_forecast, series_file_name

    columns = dict(id_col=model.id_col, time_col=model.time_col, target_col=model.target_col)
    for uid in ids:
        fig = plot_attention(explanation, df=history, unique_id=uid, forecasts=forecasts, **columns)
        fig.savefig(series_file_name(out, "attention_", uid), dpi=110, bbox_inches="tight")
        plt.close(fig)
    fig = plot_attention_profile(explanation, model.season_length_, relative_to="target", id_col=model.id_col)
    fig.savefig(out / "attention_profile.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    fig = plot_forecast(forecasts, history, unique_ids=ids, **columns)
    fig.savefig(out / "forecasts.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    explanation.to_csv(out / "attention.csv", index=False)


def _explain_once(args: argparse.Namespace) -> int:
    """``_explain`` with each distinct warning said once: it forecasts the history again for every plot and check."""
    from .evaluation.warn_once import each_warning_once

    return each_warning_once(_explain)(args)


def _history_words(data: str | None, model: Seq2SeqForecaster) -> str:
    """Which history the forecasts and the occlusion check read: the figures differ with it (the partners are fitted
    on all of it, and occluding a point moves only what reads that point)."""
    if data:
        return f"measured on the history in {data}"
    kept = model.history_.groupby(model.id_col, observed=True).size()
    periods = f"{int(kept.min())}-{int(kept.max())}" if kept.min() != kept.max() else f"{int(kept.min())}"
    return f"measured on the model's stored history ({periods} periods a series; --data for the full one)"


def _occlusion_words(ratio: float) -> str:
    """What an occlusion ratio says, in words that cannot be read as reassurance where it is low."""
    if not ratio == ratio:  # NaN: nothing to compare
        return "not measured"
    if ratio < 1:
        return "WARNING: the most attended points move the forecast less than the least attended; the maps are not an explanation"
    if ratio < 2:
        return "WARNING: the maps show where the network read, not what drove the forecast; read the shares"
    return "the most attended points drive the forecast"


class Terminated(BaseException):
    """SIGTERM (``kill``, a scheduler's time limit) arrived: raised where the command is, so that what it was writing
    is removed as for Ctrl-C instead of being left half-written. Not an ``Exception``: nothing may swallow it."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _warning_line(prog: str, message, category: type[Warning]) -> str:
    """A warning as a line of the command: the package's own (``UserWarning`` and its kinds) as "warning", others with
    their kind (a library's ``FutureWarning``)."""
    kind = "warning" if issubclass(category, UserWarning) else category.__name__
    return f"{prog}: {kind}: {message}\n"


def main(argv: list[str] | None = None) -> int:
    from . import __version__

    parser = argparse.ArgumentParser(prog="forecaster", description=__doc__)
    parser.add_argument("--version", action="version", version=f"forecaster {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("backtest", help="run a backtest study (TOML spec) and write its report")
    run.add_argument("spec", help="path to a study spec, e.g. backtests/quickstart.toml")
    run.add_argument("--out", help="report directory (default reports/<spec name>)")
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.set_defaults(func=_backtest)
    explain = commands.add_parser("explain", help="write attention and forecast plots of a saved model")
    explain.add_argument("model_dir", help="a folder written by Seq2SeqForecaster.save")
    explain.add_argument("--data", help="history CSV/Parquet to forecast from (default: the training tail)")
    explain.add_argument(
        "--future", help="future-known covariates CSV/Parquet for the horizon (required where the model uses them)"
    )
    explain.add_argument("--out", required=True, help="folder for the plots and attention.csv (made if absent)")
    explain.add_argument("--ids", nargs="*", help="series to plot (default: the first few)")
    explain.add_argument("--max-series", type=_positive_int, default=3, help="series to plot without --ids (default 3)")
    explain.add_argument(
        "--date-format",
        help='how --data and --future write dates, e.g. "%%d/%%m/%%Y" or "%%Y Q%%q" (default: ISO, or unambiguous)',
    )
    for what in ("id", "time", "target"):
        explain.add_argument(
            f"--{what}-col", help=f"the {what} column of --data/--future (default: the model's); renamed to the model's"
        )
    explain.set_defaults(func=_explain_once)
    args = parser.parse_args(argv)
    command = commands.choices[args.command]
    # Only the main thread may set a handler; a SIGTERM the launcher ignores (``trap '' TERM``) stays ignored.
    installed = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN
    previous = signal.signal(signal.SIGTERM, _terminated) if installed else None
    formatted = warnings.formatwarning  # a warning reads as one of the command's lines, not as a source location
    if installed:  # the process-wide hook only where the signal handler is, and so restored by the same thread
        warnings.formatwarning = lambda message, category, *_, **__: _warning_line(command.prog, message, category)
    try:
        return args.func(args)
    except (UsageError, *_expected_errors()) as error:  # a clear message, e.g. a spec's unknown key: one line, status 2
        command.exit(2, f"{command.prog}: error: {_one_line(error)}\n")
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for it; a report is written whole or not at all
        command.exit(130, f"{command.prog}: interrupted.\n")
    except Terminated:  # SIGTERM: the same, with the shell's status for it
        command.exit(143, f"{command.prog}: terminated.\n")
    finally:
        warnings.formatwarning = formatted
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


if __name__ == "__main__":
    sys.exit(main())
