"""The `forecaster` command: run backtest studies and draw attention plots for saved models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")


def _backtest(args: argparse.Namespace) -> int:
    from .evaluation.studies import run_study

    result, spec = run_study(args.spec, progress=not args.quiet)
    out = Path(args.out or Path("reports") / Path(args.spec).stem)
    report = result.to_report(out, title=spec.get("title"))
    print(result.summary().round(3).to_string())
    print(f"\nReport written to {report} (and report.html beside it).")
    return 0


def _read_frame(path: str):
    import pandas as pd

    frame = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)
    return frame


def _explain(args: argparse.Namespace) -> int:
    import matplotlib.pyplot as plt
    import pandas as pd

    from .estimator import Seq2SeqForecaster
    from .plots import attention_diagnostics, plot_attention, plot_attention_profile, plot_forecast

    model = Seq2SeqForecaster.load(args.model_dir)
    df = _read_frame(args.data) if args.data else None
    future = _read_frame(args.future) if args.future else None
    for frame in (df, future):
        if frame is not None and model.time_col in frame:
            frame[model.time_col] = pd.to_datetime(frame[model.time_col])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    explanation = model.explain(df=df, future_df=future, include_padding=True)
    forecasts = model.predict(df=df, future_df=future)
    ids = args.ids or list(pd.unique(forecasts[model.id_col]))[: args.max_series]
    history = df if df is not None else model.history_
    for uid in ids:
        fig = plot_attention(
            explanation,
            df=history,
            unique_id=uid,
            forecasts=forecasts,
            id_col=model.id_col,
            time_col=model.time_col,
            target_col=model.target_col,
        )
        fig.savefig(out / f"attention_{uid}.png", dpi=110, bbox_inches="tight")
        plt.close(fig)
    fig = plot_attention_profile(explanation, model.season_length_, relative_to="target", id_col=model.id_col)
    fig.savefig(out / "attention_profile.png", dpi=110, bbox_inches="tight")
    fig = plot_forecast(
        forecasts, history, unique_ids=ids, id_col=model.id_col, time_col=model.time_col, target_col=model.target_col
    )
    fig.savefig(out / "forecasts.png", dpi=110, bbox_inches="tight")
    diagnostics = attention_diagnostics(explanation, model.season_length_, id_col=model.id_col)
    explanation.to_csv(out / "attention.csv", index=False)
    print(
        f"padded mass {diagnostics.padded_mass:.3g}, entropy {diagnostics.normalised_entropy:.2f} of uniform, "
        f"last-season share {diagnostics.last_season_share:.2f}; plots in {out}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="forecaster", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("backtest", help="run a backtest study (TOML spec) and write its report")
    run.add_argument("spec", help="path to a study spec, e.g. backtests/quickstart.toml")
    run.add_argument("--out", help="report directory (default reports/<spec name>)")
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.set_defaults(func=_backtest)
    explain = commands.add_parser("explain", help="write attention and forecast plots of a saved model")
    explain.add_argument("model_dir")
    explain.add_argument("--data", help="history CSV/Parquet to forecast from (default: the training tail)")
    explain.add_argument("--future", help="future-known covariates CSV/Parquet for the horizon")
    explain.add_argument("--out", required=True)
    explain.add_argument("--ids", nargs="*", help="series to plot (default: the first few)")
    explain.add_argument("--max-series", type=int, default=3)
    explain.set_defaults(func=_explain)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
