"""Training and inference throughput of Seq2SeqForecaster on a synthetic panel.

  OMP_WAIT_POLICY=PASSIVE python benchmarks/throughput.py

Prints batch assembly time, training steps per second for 1 and 2 torch threads, the
wall time of a 2-member ensemble (300 steps each) trained sequentially and in 2 worker
processes, predict throughput (series per second) with and without the statistical blend, and
the time and peak memory of each statistical partner (Theta, damped Holt-Winters) alone on
100,000 series, and the time and peak traced memory of mixing Holt-Winters' distribution into the
nine deciles of 100,000 forecasts.
"""

from __future__ import annotations

import resource
import time
import tracemalloc

import numpy as np

from forecaster import Seq2SeqForecaster
from forecaster.data.features import fit_features
from forecaster.data.frequency import normalise_freq
from forecaster.data.panel import build_panel, with_decomposition
from forecaster.data.roles import CovariateRoles
from forecaster.data.validation import Columns, clean_history
from forecaster.data.windows import admissible_origins, assemble
from forecaster.datasets import make_panel
from forecaster.partners.blend import PartnerForecast, blend_quantiles, mix_offsets
from forecaster.partners.holt_winters import holt_winters_distribution, holt_winters_forecasts
from forecaster.partners.standard_theta import standard_theta_forecasts


def main() -> None:
    df, _ = make_panel(n_series=1000, length=120, seed=0)
    print(f"panel: {df['unique_id'].nunique()} series, {len(df)} rows, horizon 18 (default input 24, hidden 64)")

    roles = CovariateRoles(future=("promo",), past=("traffic",))
    frame, _ = clean_history(df, Columns(), roles)
    panel = build_panel(frame, Columns(), roles, fit_features(frame, "unique_id", roles), normalise_freq("MS"), 36, 18)
    series, origins = admissible_origins(panel, 36, 18, np.full(len(panel.ids), panel.last_col), 9)
    for label, source in (("", panel), (", with trend line and seasonal profile", with_decomposition(panel, 12, True, True))):
        rng = np.random.default_rng(0)
        tick = time.perf_counter()
        for _ in range(200):
            pick = rng.integers(0, len(series), 128)
            assemble(source, roles, series[pick], origins[pick], 36, 18, "standard", True)
        milliseconds = (time.perf_counter() - tick) / 200 * 1e3
        print(f"batch assembly{label}: {milliseconds:.2f} ms per batch of 128, input 36 ({len(series)} windows)")

    for threads in (1, 2):
        model = Seq2SeqForecaster(horizon=18, max_steps=100, early_stopping=False, progress=False, num_threads=threads)
        tick = time.perf_counter()
        model.fit(df)
        print(f"training, {threads} thread(s): {100 / (time.perf_counter() - tick):.1f} steps/s (batch 128)")

    for jobs in (1, 2):  # 300 steps: worker start-up (about 5 s) dominates shorter fits
        model = Seq2SeqForecaster(horizon=18, max_steps=300, early_stopping=False, progress=False, n_models=2, n_jobs=jobs)
        tick = time.perf_counter()
        model.fit(df)
        print(f"2-member ensemble of 300 steps, n_jobs={jobs}: {time.perf_counter() - tick:.1f} s")

    for weight, label in ((0.0, "network alone"), (None, "default, blended with Theta and Holt-Winters")):
        model.theta_weight = model.holt_winters_weight = weight  # applied at predict time; the network is the same
        tick = time.perf_counter()
        forecast = model.predict()
        seconds = time.perf_counter() - tick
        print(f"predict, {label}: {forecast['unique_id'].nunique() / seconds:.0f} series/s ({seconds:.2f} s for 1000 series)")

    for name, fit in (("Theta method", standard_theta_forecasts), ("damped Holt-Winters", holt_winters_forecasts)):
        partner_on_a_large_panel(name, fit, 100_000, 120)
    interval_mix_on_a_large_panel(100_000, 120)


def partner_on_a_large_panel(name: str, fit, n_series: int, length: int) -> None:
    """One statistical partner alone on a large panel: random-walk series with a yearly season, 24 to ``length`` months."""
    rng = np.random.default_rng(0)
    t = np.arange(length)
    y = 100 + 10 * np.sin(2 * np.pi * t / 12) + 0.3 * rng.normal(0, 3, (n_series, length)).cumsum(axis=1)
    lengths = rng.integers(24, length + 1, n_series)
    tick = time.perf_counter()
    fit(y, lengths, 18, 12)
    seconds = time.perf_counter() - tick
    per_series = seconds / n_series * 1e3
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name} alone, {n_series} series of up to {length} months: {seconds:.1f} s ({per_series:.3f} ms per series)")
    print(f"  peak RSS so far: {rss:.0f} MB")


def interval_mix_on_a_large_panel(n_series: int, length: int) -> None:
    """Blending Holt-Winters into nine deciles of ``n_series`` forecasts: the median alone, then with its distribution too."""
    rng = np.random.default_rng(1)
    t = np.arange(length)
    y = 100 + 10 * np.sin(2 * np.pi * t / 12) + 0.3 * rng.normal(0, 3, (n_series, length)).cumsum(axis=1)
    fit = holt_winters_distribution(y, np.full(n_series, length), 18, 12)
    partner = PartnerForecast(fit.center, fit)
    levels = tuple(np.round(np.arange(0.1, 1.0, 0.1), 1))
    values = 100 + np.sort(rng.normal(0, 5, (n_series, 18, len(levels))), axis=2)
    for label, mixed in (("median blend only", False), ("median blend + the distribution mixed in", True)):
        tracemalloc.start()
        tick = time.perf_counter()
        out = blend_quantiles(values, [fit.center], [0.15], 4)
        if mixed:
            out = mix_offsets(out, [partner], [0.15], 4, levels)
        seconds = time.perf_counter() - tick
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"{label}, {n_series} forecasts x 18 steps x 9 levels: {seconds:.2f} s, peak traced {peak:.0f} MB")


if __name__ == "__main__":
    main()
