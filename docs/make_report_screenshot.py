"""docs/report_quickstart.png: the quickstart's report (Tourism quarterly, here a draw of 40 series with the defaults,
so it runs in under a minute), as headless Chromium shows it at 1280 px. Run: python docs/make_report_screenshot.py"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import forecaster
from forecaster.datasets import load_tourism

df, info = load_tourism("quarterly", split="train")
ids = np.random.default_rng(0).choice(sorted(df["unique_id"].unique()), 40, replace=False)
df = df[df["unique_id"].isin(ids)]
model = forecaster.Seq2SeqForecaster(horizon=8, random_state=0, progress=False)
result = forecaster.backtest(model, df, n_windows=2, progress=False)
folder = Path(tempfile.mkdtemp()) / "report"
result.to_report(folder, title="Quickstart: Tourism quarterly, 40 series, 2 rolling origins")
browser = next(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n))
out = Path(__file__).resolve().parent / "report_quickstart.png"
command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,2000"]
subprocess.run([*command, f"--screenshot={out}", (folder / "report.html").as_uri()], check=True, capture_output=True)
print(out)
