"""The executors of the table's tools (``promptpipe.controller.tool_table``), found by their module.

An executor module of this package registers against a row with two names: ``ROW`` (the row it
runs) and ``build(deps, module) -> Tool`` (the executor a conversation module offers). A module's
tools are its rows' executors, in the table's order: adding a tool is one row and one module here
(docs/architecture.md, "Adding a tool"); nothing lists the modules by hand.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from promptpipe.controller.tool_table import Module, ToolRow, names_for

if TYPE_CHECKING:
    from promptpipe.flow.deps import FlowDeps
    from promptpipe.flow.tools.base import Tool

ToolFactory = Callable[["FlowDeps", Module], "Tool"]
_NOT_EXECUTORS = frozenset({"base", "registry"})


@functools.cache
def executors() -> Mapping[str, ToolFactory]:
    """Each row's name -> its executor factory; ``LookupError`` when two modules run one row."""
    found: dict[str, ToolFactory] = {}
    package = importlib.import_module(__package__ or "promptpipe.flow.tools")
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in _NOT_EXECUTORS:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        row: ToolRow | None = getattr(module, "ROW", None)
        if row is None:
            continue
        if row.name in found:
            raise LookupError(f"two executors for the tool {row.name!r}")
        found[row.name] = module.build
    return found


def tools_for(deps: FlowDeps, module: Module) -> list[Tool]:
    """The executors ``module`` offers, in the table's order; ``LookupError`` for a row without one."""
    factories = executors()
    missing = [name for name in names_for(module) if name not in factories]
    if missing:
        raise LookupError(f"no executor for the tool(s) {', '.join(missing)} (a module in flow/tools/)")
    return [factories[name](deps, module) for name in names_for(module)]
