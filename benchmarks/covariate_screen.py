"""What the covariate screen (``forecaster.model.covariate_screen``) reads on the validation suite's panels, per origin.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/covariate_screen.py
    OMP_WAIT_POLICY=PASSIVE python benchmarks/covariate_screen.py --panels daily covariates --no-flag

For every panel and each of the suite's three origins (each series cut before its last ``horizon + step * k`` rows,
as the backtest's rolling origins cut it), the screen a fit from scratch would run: with the panel's own future-known
covariates, and with a random 0/1 flag declared besides (``suite.py --irrelevant-flag``) or alone where the panel has
none. Prints the covariates set aside and the closest test of a covariate set aside (of any covariate where none
is): its |t|, its bar and the blocks or series it read. No training step.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
import pandas as pd
import suite

from forecaster import Seq2SeqForecaster
from forecaster.data.features import fit_features
from forecaster.data.validation import clean_history
from forecaster.model.closures import closed_steps, resolve_closures
from forecaster.model.covariate_screen import screen_covariates
from forecaster.model.inference import model_panel
from forecaster.model.plan import panel_facts, plan_fit


def cut(df: pd.DataFrame, periods: int) -> pd.DataFrame:
    """Each series without its last ``periods`` rows."""
    position = df.groupby("unique_id", sort=False).cumcount(ascending=False)
    return df[position >= periods]


def screened(df: pd.DataFrame, horizon: int, season: int, freq: str, future: tuple[str, ...]) -> dict:
    """The screen of ``df`` as a fit with ``future`` declared runs it."""
    model = Seq2SeqForecaster(horizon=horizon, freq=freq, season_length=season, future_covariates=list(future))
    params = model.get_params()
    frame, _ = clean_history(df, model._columns(), model._roles())
    facts = panel_facts(params, frame)
    plan = plan_fit(params, facts)
    features = fit_features(frame, "unique_id", facts.roles)
    panel = model_panel(frame, model._columns(), facts.roles, features, facts.offset, horizon, dict(plan.units))
    closing = resolve_closures(params["closed_when"], frame, "y", list(future))
    closed = closed_steps(closing, panel.future_names, panel.future, features.numeric) if closing else None
    result = screen_covariates(panel, plan.units["season_length"], closed)
    scratch = plan.start == "scratch" and not plan.prior_check
    if result is None:
        return {"screens": scratch, "closest": None, "t": math.nan, "bar": math.nan, "units": 0, "set aside": ""}
    name, closest = max(result.figures.items(), key=lambda item: item[1].t - item[1].bar)
    if result.unread:  # the covariate set aside that came closest to its bar
        name, closest = max(((n, result.figures[n]) for n in result.unread), key=lambda item: item[1].t - item[1].bar)
    return {
        "screens": scratch,
        "closest": name,
        "t": closest.t,
        "bar": closest.bar,
        "units": closest.n_units,
        "set aside": " ".join(result.unread),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--panels", nargs="+", default=["large", "daily", "high-frequency", "covariates"])
    parser.add_argument("--no-flag", action="store_true", help="only the panels' own covariates")
    args = parser.parse_args()
    rows = []
    for name in suite.selected(args.panels):
        _, load = suite.PANELS[name]
        df, horizon, season, freq, future = load()
        flagged = df.assign(flag=np.random.default_rng(0).integers(0, 2, len(df)).astype(float))
        step = math.ceil(horizon / 2)
        variants = [("own", df, tuple(future))] if future else []
        if not args.no_flag:
            variants.append(("with the flag", flagged, (*future, "flag")))
        for label, frame, declared in variants:
            for k in range(suite.N_ORIGINS):
                periods = horizon + step * (suite.N_ORIGINS - 1 - k)
                with warnings.catch_warnings():  # the panels' own warnings (series that end early) are the suite's
                    warnings.simplefilter("ignore")
                    row = {
                        "panel": name,
                        "covariates": label,
                        "origin": k,
                        **screened(cut(frame, periods), horizon, season, freq, declared),
                    }
                rows.append(row)
                print(
                    f"{name:26} {label:14} {k}  screens {row['screens']!s:5}  {row['closest']!s:16} |t| {row['t']:7.2f}  "
                    f"bar {row['bar']:5.2f}  units {row['units']:5}  set aside: {row['set aside']}",
                    flush=True,
                )
    print(pd.DataFrame(rows).to_string(index=False, float_format="%.2f"))


if __name__ == "__main__":
    main()
