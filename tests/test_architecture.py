"""The package's structure: imports run one way, without circles, and only the estimator touches its private members."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "forecaster"

# Floors, lowest first: a module imports from its own floor or lower ones only. ``engines`` (the registry through
# which the estimator and the backtest reach the Dask engines) and ``_version`` are leaves; ``datasets`` sits on ``data``.
FLOORS = {
    "_version": 0,
    "engines": 0,
    "callers": 0,  # where warnings point: a leaf any module may use
    "data": 1,
    "datasets": 2,
    "partners": 2,
    "model": 3,
    "estimator": 4,
    "plots": 5,
    "evaluation": 6,
    "scale": 7,
    "cli": 8,
    "pretraining": 8,
    "__init__": 9,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path) -> set[str]:
    """The package modules ``name`` imports, at module level or inside functions."""
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "forecaster":
                continue
            names = [f"{target}.{alias.name}" for alias in node.names]
            found |= {n for n in names if n in modules()} or {target}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "forecaster"}
    return {target for target in found if target != name}


def floor(name: str) -> int:
    parts = name.split(".")
    return FLOORS["__init__"] if len(parts) == 1 else FLOORS[parts[1]]


def graph() -> dict[str, set[str]]:
    known = modules()
    edges = {}
    for name, path in known.items():
        targets = set()
        for target in imported(name, path):
            while target not in known and "." in target:  # an attribute of a module: the module
                target = target.rsplit(".", 1)[0]
            if target in known and target != name:
                targets.add(target)
        edges[name] = targets
    return edges


def test_every_top_level_part_has_a_floor():
    assert {name.split(".")[1] for name in modules() if "." in name} <= set(FLOORS)


def test_no_import_reaches_a_higher_floor():
    upward = [
        f"{name} (floor {floor(name)}) imports {target} (floor {floor(target)})"
        for name, targets in graph().items()
        for target in targets
        if not target.endswith("__init__") and target != "forecaster" and floor(target) > floor(name)
    ]
    assert not upward, "\n".join(upward)


def test_imports_have_no_circle():
    edges = {name: {t for t in targets if t != "forecaster"} for name, targets in graph().items() if name != "forecaster"}
    seen, on_path, circles = set(), [], []

    def visit(node):
        if node in on_path:
            circles.append(" -> ".join([*on_path[on_path.index(node) :], node]))
            return
        if node in seen:
            return
        seen.add(node)
        on_path.append(node)
        for target in sorted(edges.get(node, ())):
            visit(target)
        on_path.pop()

    for node in sorted(edges):
        visit(node)
    assert not circles, "\n".join(circles)


def private_members() -> set[str]:
    """The estimator's private methods and attributes (``_name``, not dunders)."""
    tree = ast.parse((PACKAGE / "estimator.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_") and not node.name.startswith("__"):
            names.add(node.name)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                names.add(node.attr)
    return names


def test_only_the_estimator_touches_its_private_members():
    private = private_members()
    assert {"_fitted_params", "_cache", "_check_unchanged"} <= private  # the check sees what it guards
    touched = []
    for name, path in modules().items():
        if name == "forecaster.estimator":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in private:
                owner = node.value.id if isinstance(node.value, ast.Name) else "..."
                if owner not in ("self", "cls"):
                    touched.append(f"{name}:{node.lineno} {owner}.{node.attr}")
    assert not touched, "\n".join(touched)


@pytest.mark.parametrize("limit", [80])
def test_no_function_is_longer_than_the_limit(limit):
    long = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert not long, "\n".join(long)


# Lines a module may hold, and the estimator (which checks, plans, runs and holds a fit; everything else is model/'s).
MODULE_LINES, ESTIMATOR_LINES = 400, 350


def test_every_module_is_short():
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE.parent).as_posix()
        limit = ESTIMATOR_LINES if name == "forecaster/estimator.py" else MODULE_LINES
        lines = len(path.read_text().splitlines())
        if lines > limit:
            long.append(f"{name}: {lines} lines (at most {limit})")
    assert not long, "\n".join(long)


def test_importing_the_package_registers_the_dask_engines_without_importing_dask():
    """The estimator and the backtest find the Dask engines by name; Dask itself loads only when one is called."""
    code = (
        "import sys, forecaster\n"
        "from forecaster import engines\n"
        "names = ['dask.fit', 'dask.forecast_frames', 'dask.backtest', 'dask.folds', 'dask.baselines']\n"
        "print(all(callable(engines.engine(n)) for n in names), 'dask' in sys.modules, 'distributed' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "False"]


def test_an_unregistered_engine_is_a_clear_error():
    from forecaster.engines import engine

    with pytest.raises(RuntimeError, match="No 'dask.nothing' engine is registered"):
        engine("dask.nothing")
