"""An interrupt (Ctrl-C) ends a fit or a backtest: it propagates, keeps nothing, and leaves no worker behind."""

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
from conftest import fast_model

import forecaster.model.members as members
import forecaster.model.training as training
from forecaster import backtest
from forecaster.datasets import make_panel

TESTS = Path(__file__).parent
LONG = dict(max_steps=10**6, early_stopping=False)  # trains for hours unless stopped


@pytest.fixture(scope="module")
def clean():
    df, _ = make_panel(n_series=5, length=36, seed=7, short_share=0.0, missing_share=0.0, static=False)
    return df


def _interrupt_at_step(monkeypatch, step, member=None):
    """Raise KeyboardInterrupt at training step ``step`` of ``member`` (1-based; None: of any member)."""
    real_loss, real_member = training.batch_loss, members._fit_member
    seen = {"members": 0, "steps": 0}

    def fit_member(*args, **kwargs):
        seen["members"] += 1
        seen["steps"] = 0
        return real_member(*args, **kwargs)

    def batch_loss(*args, **kwargs):
        if not torch.is_inference_mode_enabled():  # a training step, not an evaluation
            seen["steps"] += 1
            if seen["steps"] == step and member in (None, seen["members"]):
                raise KeyboardInterrupt
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(members, "_fit_member", fit_member)
    monkeypatch.setattr(training, "batch_loss", batch_loss)
    return seen


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody has reaped yet counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# ----------------------------------------------------------------------------- in this process
def test_interrupted_fit_raises_and_a_fresh_estimator_stays_unfitted(clean, monkeypatch):
    _interrupt_at_step(monkeypatch, 60)  # after the checkpoint at step 50, which the old code kept
    model = fast_model(max_steps=200)
    with pytest.raises(KeyboardInterrupt):
        model.fit(clean)
    for name in ("network_", "state_", "train_results_"):
        assert not hasattr(model, name)


@pytest.mark.parametrize("warm_start", [False, True])
def test_interrupted_refit_keeps_the_previous_fit_exactly(clean, monkeypatch, warm_start):
    model = fast_model(warm_start=warm_start).fit(clean)
    forecast, state, results = model.predict(), model.state_, model.train_results_
    weights = {k: v.clone() for k, v in model.network_.state_dict().items()}
    model.set_params(max_steps=200)
    _interrupt_at_step(monkeypatch, 60)
    with pytest.raises(KeyboardInterrupt):
        model.fit(clean)
    assert model.state_ is state and model.train_results_ is results
    after = model.network_.state_dict()
    assert after.keys() == weights.keys() and all(torch.equal(after[k], v) for k, v in weights.items())
    pd.testing.assert_frame_equal(model.predict(), forecast)


def test_interrupted_backtest_raises_instead_of_returning_a_result(clean, monkeypatch):
    seen = _interrupt_at_step(monkeypatch, 60)
    result = "not set"
    with pytest.raises(KeyboardInterrupt):
        result = backtest(fast_model(max_steps=200), clean, n_windows=2, baselines=("seasonal_naive",), progress=False)
    assert result == "not set"
    assert seen["members"] == 1  # the first fold's fit was the last: no fold trains after the interrupt


def test_interrupt_in_a_later_member_does_not_leave_a_smaller_ensemble(clean, monkeypatch):
    seen = _interrupt_at_step(monkeypatch, 60, member=2)
    model = fast_model(max_steps=200, n_models=3, n_jobs=1)
    with pytest.raises(KeyboardInterrupt):
        model.fit(clean)
    assert seen["members"] == 2  # member 1 finished, member 2 was interrupted, member 3 never started
    assert not hasattr(model, "network_") and not hasattr(model, "state_")


@pytest.fixture
def interruptible():
    """SIGINT raising KeyboardInterrupt, as in a terminal: a runner started as a background job without job control
    (`(pytest &)` in a script) inherits SIGINT ignored, and the interrupt under test would never arrive."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_interrupt_while_worker_processes_train_ends_them_within_seconds(clean, interruptible):
    """SIGINT to the main process alone (as `kill -INT`): fit raises at once and its workers are terminated."""
    before = {p.pid for p in multiprocessing.active_children()}
    main = threading.main_thread().ident
    events = {"workers": [], "sent": None}
    finished = threading.Event()

    def workers():
        return [p for p in multiprocessing.active_children() if p.pid not in before]

    def interrupt():
        _wait_until(lambda: len(workers()) >= 2, 60.0)
        time.sleep(1.0)  # let them start (the interrupt must not depend on what they are doing)
        events["workers"] = workers()
        events["sent"] = time.monotonic()
        signal.pthread_kill(main, signal.SIGINT)
        if not finished.wait(20.0):  # the fit waits for its workers: end them, or this test would hang
            for process in workers():
                process.kill()

    thread = threading.Thread(target=interrupt, daemon=True)
    model = fast_model(n_models=2, n_jobs=2, **LONG)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            model.fit(clean)
        raised = time.monotonic()
    finally:
        finished.set()
        thread.join()
    assert len(events["workers"]) == 2
    assert raised - events["sent"] < 5.0, f"fit raised {raised - events['sent']:.1f} s after the interrupt"
    assert _wait_until(lambda: not any(p.is_alive() for p in events["workers"]), 5.0), "workers outlived the interrupt"
    assert not hasattr(model, "network_")


def test_orphan_guard_exits_only_once_the_parent_is_gone():
    exits = []
    members.exit_if_orphaned(4321, 7, getppid=lambda: 4321, exit=exits.append)
    assert exits == []
    members.exit_if_orphaned(4321, 8, getppid=lambda: 1, exit=exits.append)  # re-parented to init
    assert exits == [members.ORPHANED_EXIT_CODE]
    members.exit_if_orphaned(os.getppid())  # the real check, with our real parent: nothing happens


def test_train_calls_its_step_hook_before_every_step_and_stops_on_what_it_raises(clean):
    model = fast_model(max_steps=30)
    steps = []

    def hook(step):
        steps.append(step)
        if step == 12:
            raise KeyboardInterrupt

    real = training.train

    def hooked(*args, **kwargs):
        return real(*args[:5], on_step=hook)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(members, "train", hooked)
        with pytest.raises(KeyboardInterrupt):
            model.fit(clean)
    assert steps == list(range(1, 13))


# ----------------------------------------------------------------------------- a real orphan
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_exit_when_the_main_process_is_killed(clean, tmp_path):
    """SIGKILL the main process of an ``n_jobs=2`` fit while its workers train: they exit within seconds."""
    marks = tmp_path / "marks"
    marks.mkdir()
    data = tmp_path / "data.csv"
    clean.to_csv(data, index=False)
    script = tmp_path / "fit_in_workers.py"
    script.write_text(
        textwrap.dedent(f"""
        import os, pathlib, sys
        import torch
        import forecaster.model.training as training

        def marking(*args, _real=training.batch_loss, **kwargs):
            if not torch.is_inference_mode_enabled():  # this worker is training
                pathlib.Path({str(marks)!r}, str(os.getpid())).touch()
            return _real(*args, **kwargs)

        if __name__ == "__mp_main__":  # a spawned worker imports this file under that name
            training.batch_loss = marking
        if __name__ == "__main__":
            import pandas as pd
            sys.path.insert(0, {str(TESTS)!r})
            from conftest import fast_model
            df = pd.read_csv({str(data)!r}, parse_dates=["ds"])
            fast_model(n_models=2, n_jobs=2, **{LONG!r}).fit(df)
        """)
    )
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=stderr)
    worker_pids: list[int] = []
    try:
        started = _wait_until(lambda: len(list(marks.iterdir())) >= 2 or parent.poll() is not None, 90.0)
        assert started and parent.poll() is None, f"the fit did not start its workers:\n{log.read_text()}"
        worker_pids = [int(mark.name) for mark in marks.iterdir()]
        parent.kill()
        parent.wait()
        assert _wait_until(lambda: not any(_alive(pid) for pid in worker_pids), 5.0), "the workers train on as orphans"
    finally:
        parent.kill()
        for pid in worker_pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_script_without_a_main_guard_gets_told_how_to_fit_in_worker_processes(clean, tmp_path):
    """Spawned workers import the script; without ``if __name__ == "__main__":`` they fail, and the error says so."""
    data = tmp_path / "data.csv"
    clean.to_csv(data, index=False)
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        import pandas as pd
        sys.path.insert(0, {str(TESTS)!r})
        from conftest import fast_model
        df = pd.read_csv({str(data)!r}, parse_dates=["ds"])
        fast_model(n_models=2, n_jobs=2).fit(df)
        """)
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("concurrent.futures.process.BrokenProcessPool: A worker process of `n_jobs=2`"), last
    assert 'if __name__ == "__main__":' in last
