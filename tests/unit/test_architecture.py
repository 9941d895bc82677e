"""The import structure of docs/architecture.md#layers: no import cycle, and the layering contracts hold.

The contracts live in ``pyproject.toml`` under ``[tool.importlinter]`` (run them alone with
``lint-imports``); the cycle check walks the module graph that import-linter's ``grimp`` builds.
"""

from __future__ import annotations

import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp", reason="import-linter (and grimp) come with the dev extras: make venv")

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("promptpipe", "functions")
PACKAGE_DIR = ROOT / "shared" / "promptpipe"


def _cycles(graph: object) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(graph.modules)  # type: ignore[attr-defined]
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}  # type: ignore[attr-defined]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            for child in edges[node]:
                if child in on_stack:
                    low[node] = min(low[node], low[child])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _graph() -> object:
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]
    try:
        # Imports under ``if TYPE_CHECKING:`` only name types: they never run, so they form no cycle.
        return grimp.build_graph(*PACKAGES, cache_dir=None, exclude_type_checking_imports=True)
    finally:
        del sys.path[:2]


def test_cycle_finder_finds_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a small package with one cycle a -> b -> c -> a and a tail c -> d, its graph built by
    # grimp's public build_graph (an empty ImportGraph() is abstract in some of the versions allowed)
    package = tmp_path / "cyclepkg"
    package.mkdir()
    imports = {"__init__": [], "a": ["b"], "b": ["c"], "c": ["a", "d"], "d": []}
    for name, imported in imports.items():
        (package / f"{name}.py").write_text("".join(f"from cyclepkg import {other}\n" for other in imported))
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("cyclepkg", cache_dir=None)
    # Then exactly that cycle is reported
    assert _cycles(graph) == [["cyclepkg.a", "cyclepkg.b", "cyclepkg.c"]]


def test_no_import_cycles() -> None:
    # Given the import graph of the core package and the Lambda handlers (deferred imports included)
    graph = _graph()
    # Then no module imports itself through others
    cycles = _cycles(graph)
    details = []
    for cycle in cycles:
        for importer in cycle:
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):  # type: ignore[attr-defined]
                if imported in cycle:
                    lines = graph.get_import_details(importer=importer, imported=imported)  # type: ignore[attr-defined]
                    where = ", ".join(f"l.{d['line_number']}" for d in lines)
                    details.append(f"  {importer} -> {imported} ({where})")
    assert not cycles, "import cycles:\n" + "\n".join(details)


def test_layering_contracts_hold() -> None:
    # Given the contracts in pyproject.toml
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if command is None:
        pytest.skip("import-linter is not installed here (make venv installs the dev extras)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    # When import-linter checks them
    result = subprocess.run(
        [command, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # Then every contract is kept
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _contract(contract_id: str) -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(contract for contract in contracts if contract["id"] == contract_id)


def modules_in_no_layer(modules: Iterable[str], layers: Iterable[str]) -> list[str]:
    """The modules that no layer names: a layer is ``"a"``, ``"a | b"`` (independent parts) or
    ``"a : b"``, each part optional when in parentheses; a part stands for its submodules too."""
    parts = {part.strip().strip("()") for layer in layers for part in re.split(r"[|:]", layer)}
    return sorted(m for m in modules if not any(m == p or m.startswith(p + ".") for p in parts))


def test_a_module_in_no_layer_is_reported() -> None:
    layers = ["pkg.cli", "(pkg.gone) | pkg.flow", "pkg.models : pkg.ports"]
    modules = ["pkg.cli", "pkg.flow", "pkg.flow.session", "pkg.models", "pkg.ports", "pkg.new", "pkg.cli_extra"]
    assert modules_in_no_layer(modules, layers) == ["pkg.cli_extra", "pkg.new"]


def test_every_top_level_module_of_the_package_is_in_a_layer() -> None:
    # Given every module and package at the top of shared/promptpipe
    top = [f"promptpipe.{info.name}" for info in pkgutil.iter_modules([str(PACKAGE_DIR)])]
    assert "promptpipe.rules" in top and "promptpipe.wiring" in top
    # Then the layers contract places each (import-linter checks only the modules its layers name)
    layers = _contract("layers")["layers"]
    assert isinstance(layers, list)
    assert modules_in_no_layer(top, layers) == []
