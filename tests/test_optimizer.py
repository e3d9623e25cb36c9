"""The fit's Adam: torch's update, without importing torch's compiler stack."""

import subprocess
import sys

import torch

from forecaster.model.optimizer import Adam, cosine_learning_rate


def test_the_update_is_torch_adams():
    torch.manual_seed(0)
    ours, theirs = torch.nn.GRU(3, 8, batch_first=True), torch.nn.GRU(3, 8, batch_first=True)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(16, 10, 3)
    mine = Adam(ours.parameters(), 3e-3)
    reference = torch.optim.Adam(theirs.parameters(), lr=3e-3, foreach=True)
    for _step in range(25):
        for net, optimizer in ((ours, mine), (theirs, reference)):
            optimizer.zero_grad()
            net(x)[0].pow(2).mean().backward()
            optimizer.step()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def test_the_schedule_falls_from_the_rate_to_five_percent_of_it():
    assert cosine_learning_rate(0.01, 0, 100) == 0.01
    assert abs(cosine_learning_rate(0.01, 100, 100) - 0.0005) < 1e-15
    assert abs(cosine_learning_rate(0.01, 50, 100) - 0.01 * (0.5 * 0.95 + 0.05)) < 1e-15


def test_a_fit_does_not_import_torchs_compiler_stack():
    """torch.optim's optimizers import torch._dynamo (1-12 s) on first use; a fit and a forecast never do."""
    script = (
        "import sys\n"
        "from forecaster import Seq2SeqForecaster\n"
        "from forecaster.datasets import make_panel\n"
        "df, _ = make_panel(n_series=4, length=48)\n"
        "Seq2SeqForecaster(horizon=6, max_steps=3, progress=False).fit(df).predict()\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    assert run.stdout.strip().splitlines()[-1] == "False"


def test_loading_a_model_does_not_import_torchs_compiler_stack(tmp_path):
    """Checking a file's shapes on the meta device imported torch._dynamo; a fit from the prior loads one."""
    script = (
        "import sys\n"
        "from forecaster import Seq2SeqForecaster\n"
        "from forecaster.datasets import make_panel\n"
        "df, _ = make_panel(n_series=4, length=48, static=False)\n"
        f"Seq2SeqForecaster(horizon=6, max_steps=3, progress=False).fit(df).save({str(tmp_path / 'm')!r})\n"
        "dynamo = 'torch._dynamo' in sys.modules\n"
        f"Seq2SeqForecaster.load({str(tmp_path / 'm')!r}).predict()\n"
        "print(dynamo, 'torch._dynamo' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    assert run.stdout.strip().splitlines()[-1] == "False False"
