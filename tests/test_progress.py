"""Progress of long work: a bar on a terminal, one plain line per step in a log, no escape codes."""

import io

from conftest import fast_model

from forecaster import backtest
from forecaster.datasets import make_panel
from forecaster.evaluation.progress import Progress


def test_a_backtest_logs_each_step_as_a_plain_line_when_stderr_is_not_a_terminal(capsys):
    df, _ = make_panel(n_series=4, length=40, seed=1, short_share=0.0, missing_share=0.0, static=False)
    backtest(fast_model(progress=True), df, n_windows=2, baselines=("seasonal_naive",), progress=True)
    err = capsys.readouterr().err
    for expected in ("fold 1/2: fitting seq2seq on 4 series", "fold 2/2: baseline seasonal_naive", "occlusion check"):
        assert expected in err
    assert "\x1b" not in err and "\r" not in err  # no redrawn bars in a log file


def test_quiet_means_silent_and_a_terminal_gets_a_bar(capsys):
    quiet = Progress(False, 3)
    quiet.step("anything")
    assert capsys.readouterr().err == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = Progress(True, 2, stream=stream)
    for _ in bar.folds(range(2)):
        bar.step("fitting")
    assert "2/2" in stream.getvalue() and "fitting" in stream.getvalue()
