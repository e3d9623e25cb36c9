"""The README's front door: the commands CI runs, and what it says about installing torch."""

from pathlib import Path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_the_readme_says_how_to_get_the_cpu_build_of_torch():
    """PyPI's torch is the CUDA build on a stock Linux machine: the README must not claim pinning avoids it."""
    assert "keeps pip from pulling a multi-GB CUDA build" not in README
    assert "--index-url https://download.pytorch.org/whl/cpu" in README


def test_the_readme_test_command_is_the_one_ci_runs():
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "python -m pytest -q -n 2\n" in README and "python -m pytest -q -n 2\n" in ci
