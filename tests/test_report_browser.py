"""report.html in a real browser (headless Chromium): how tall it is, whether it scrolls sideways, where its first
figure sits. Skipped, with the reason, where no Chromium is installed (.ci/run installs it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from conftest import fast_model

import forecaster
from forecaster.datasets import make_panel

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
# What the page reports of itself once laid out, written into the DOM that --dump-dom prints.
PROBE = """<script>
window.addEventListener('load', () => {
  const root = document.documentElement, first = document.querySelector('img');
  const wraps = [...document.querySelectorAll('.table-wrap')].filter(w => w.offsetParent !== null || true);
  const tables = wraps.map(w => w.scrollWidth - w.clientWidth);
  const out = {height: root.scrollHeight, width: root.scrollWidth, viewport: root.clientWidth,
    first_figure_top: first ? first.getBoundingClientRect().top + window.scrollY : null,
    first_figure_bottom: first ? first.getBoundingClientRect().bottom + window.scrollY : null,
    first_figure_alt: first ? first.alt : null, table_overflow: tables.length ? Math.max(...tables) : 0,
    figures: Object.fromEntries([...document.querySelectorAll('img')].map(i => [i.alt, [i.width, i.naturalWidth]]))};
  const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def measure(page: Path, width: int, open_folds: bool = False) -> dict:
    """Lay ``page`` out at ``width`` CSS pixels in headless Chromium; its height, width, widest table overflow and the
    first figure's top and bottom (pixels from the top of the page). ``open_folds``: with every folded section open."""
    text = page.read_text(encoding="utf-8")
    if open_folds:
        text = text.replace('<details class="fold">', '<details class="fold" open>')
    probed = page.with_name(f".probe-{width}-{int(open_folds)}.html")
    probed.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1"]
    command += [f"--window-size={width},900", "--virtual-time-budget=5000", "--dump-dom", probed.resolve().as_uri()]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
    probed.unlink()
    found = re.search(r'<pre id="probe">(.*?)</pre>', out, re.S)
    assert found, f"Chromium printed no measurements: {out[-500:]}"
    return json.loads(found.group(1).replace("&quot;", '"'))


needs_browser = pytest.mark.skipif(
    browser() is None, reason="no Chromium on PATH (install it with `apt-get install -y chromium`; .ci/run does)"
)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The report of a 40-series monthly backtest with three origins, the size the issue measured."""
    df, _ = make_panel(n_series=40, length=72, seed=4, short_share=0.0, missing_share=0.0)
    result = forecaster.backtest(fast_model(horizon=12, input_size=24), df, n_windows=3, progress=False)
    folder = tmp_path_factory.mktemp("browser") / "report"
    result.to_report(folder, title="40-series monthly backtest")
    plt.close("all")
    return folder / "report.html"


@needs_browser
def test_at_1280_px_the_report_is_short_does_not_scroll_sideways_and_opens_with_the_verdict_and_a_figure(page):
    """It was 11,621 px tall with its first figure 5,300 px down, under method and metric jargon."""
    seen = measure(page, 1280)
    assert seen["viewport"] == 1280
    assert seen["height"] <= 4500, seen
    assert seen["width"] <= seen["viewport"], seen  # no sideways scroll
    assert seen["first_figure_alt"] == "Forecasts against actuals"
    assert seen["first_figure_top"] < 400 and seen["first_figure_bottom"] <= 900, seen  # on the first screen
    assert seen["table_overflow"] <= 0, seen


@needs_browser
def test_at_800_px_no_table_or_figure_scrolls_sideways_even_with_every_section_open(page):
    """Below about 940 px the tables scrolled sideways (139 px at 800 px)."""
    seen = measure(page, 800, open_folds=True)
    assert seen["width"] <= seen["viewport"], seen
    assert seen["table_overflow"] <= 0, seen


@needs_browser
def test_opened_the_report_still_holds_everything(page):
    closed, opened = measure(page, 1280), measure(page, 1280, open_folds=True)
    assert opened["height"] > closed["height"] + 1000  # the folded sections hold the analyst's detail
    assert opened["width"] <= opened["viewport"], opened


if __name__ == "__main__":  # python tests/test_report_browser.py report.html: the numbers, at 1280 and 800 px
    for w in (1280, 800):
        print(w, measure(Path(sys.argv[1]), w), measure(Path(sys.argv[1]), w, open_folds=True))


@needs_browser
def test_at_1280_px_the_per_series_scatter_is_drawn_near_its_own_size(page):
    """Beside the histogram it was drawn at half its width: 7-pt ticks came out about 5 px tall."""
    shown, natural = measure(page, 1280, open_folds=True)["figures"]["seq2seq against the baselines, per series"]
    assert shown >= 0.8 * min(natural, 1000), (shown, natural)
