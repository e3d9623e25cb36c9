"""The long-run seasonal profile over the week on sub-daily data: a measurement (not in the package).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/week_profile.py --panels electricity_halfhourly taylor_halfhourly \
        demand_hourly_synthetic --out /tmp/week.csv

The decoder reads each horizon step's long-run seasonal profile and trend line (``data.decomposition``), computed
over the data's season: the day on hourly and half-hourly data. Here they are computed over the week (the season
times 7) wherever the season is a day of hours or half-hours, so the profile carries each hour-of-week's deviation
(weekends, a Monday's morning) at no cost in window length; nothing else changes (the window, MASE's season, the
partners). The other arguments are ``suite.py``'s; seasonal naive is the only baseline run (the others are
deterministic: their rows of another label serve). ``WEEK_PROFILE=0`` runs the defaults the same way.
"""

from __future__ import annotations

import os

from forecaster.model import inference

DAY_SEASONS = (24, 48)  # hours, half-hours
_original = inference.with_decomposition


def _week_decomposition(panel, season_length, seasonal, trend):
    week = 7 * season_length if season_length in DAY_SEASONS else season_length
    return _original(panel, week, seasonal, trend)


def main() -> None:
    if os.environ.get("WEEK_PROFILE", "1") == "1":  # WEEK_PROFILE=0: the defaults, run the same way
        inference.with_decomposition = _week_decomposition
    import suite

    suite.main_against_seasonal_naive("0.17.6, the seasonal profile over the week on sub-daily data (not shipped)")


if __name__ == "__main__":
    main()
