"""each_warning_once: a long run's warnings said once each, under the caller's filters, never hiding its failure."""

import warnings

import pytest

from forecaster.evaluation.warn_once import each_warning_once


@pytest.fixture
def fakelib(tmp_path, monkeypatch):
    """A library on sys.path whose ``note(category)`` warns from its own module, ``fakelib.core``."""
    (tmp_path / "fakelib").mkdir()
    (tmp_path / "fakelib" / "__init__.py").write_text("")
    (tmp_path / "fakelib" / "core.py").write_text(
        'import warnings\n\ndef note(category):\n    warnings.warn("a library\'s note", category, stacklevel=1)\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import fakelib.core

    yield fakelib.core
    monkeypatch.delitem(__import__("sys").modules, "fakelib.core")
    monkeypatch.delitem(__import__("sys").modules, "fakelib")


def test_a_filter_by_module_still_silences_a_librarys_warning(fakelib):
    """Re-issued from the caller's module, a library's FutureWarning escaped the user's filter on that library."""

    @each_warning_once
    def run():
        fakelib.note(FutureWarning)
        fakelib.note(FutureWarning)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=FutureWarning, module="fakelib")
        run()
    assert not caught
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    assert [(w.filename, w.lineno) for w in caught] == [(fakelib.__file__, 4)]  # once, at its own line


def test_python_still_hides_a_librarys_deprecation_warning_by_default(fakelib):
    @each_warning_once
    def run():
        fakelib.note(DeprecationWarning)

    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("ignore", DeprecationWarning)  # Python's default for modules other than __main__
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        run()
    assert not caught


def test_a_failing_run_raises_its_own_error_even_where_its_warnings_are_errors():
    """Under an error filter, the re-issued warning replaced the run's own exception."""

    @each_warning_once
    def run():
        warnings.warn("a note on the data", UserWarning, stacklevel=2)
        raise ValueError("the real failure")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="the real failure"):
            run()
