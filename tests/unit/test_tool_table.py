"""The table of tools (``promptpipe.controller.tool_table``) is the only list of them: every module's
tools are its rows' executors, every row has one executor, and no tool's name is spelled as a string
anywhere else in the package's Python code (docstrings, stored flows, prompt texts and corpus files
are documentation and data, outside the rule)."""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest

from promptpipe.controller import tool_table
from promptpipe.controller.definition import NODE_TOOLS
from promptpipe.flow.modules import FeedbackModule, IntakeModule
from promptpipe.flow.tools import registry
from promptpipe.flow.tools.registry import executors
from tests.support import memory_harness

PACKAGE = Path(tool_table.__file__).resolve().parents[1]
TABLE_MODULE = Path(tool_table.__file__).resolve()
# Strings that are the same word but not a tool: the AWS service called "scheduler" (its client).
NOT_A_TOOL = {
    ("scheduler", "adapters/aws.py"),
    ("scheduler", "adapters/eventbridge_timers.py"),
    # The opt-out reader's keyword kind (a key of the OPT_KEYWORDS setting), not the coach's tool.
    ("opt_out", "rules/opt_words.py"),
    ("scheduler", "local/environment.py"),
    ("scheduler", "wiring.py"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def spelled_names(source: str, names: tuple[str, ...]) -> list[tuple[str, int]]:
    """(name, line) for each tool name spelled in a non-docstring string constant of ``source``: a
    snake_case name anywhere as a word ("call save_user_profile"); a plain word ("scheduler") when it
    is the whole string, since as a word in a sentence it is English ("invalid scheduler type")."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    compound = [name for name in names if "_" in name]
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, compound)) + r")\b") if compound else None
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docstrings:
            continue
        text = node.value
        if text.strip() in names and "_" not in text.strip():
            found.append((text.strip(), node.lineno))
        if pattern is not None:
            found += [(match, node.lineno) for match in pattern.findall(text)]
    return found


def test_no_tool_name_is_spelled_outside_the_table() -> None:
    names = tuple(row.name for row in tool_table.TABLE)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == TABLE_MODULE:
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        found += [
            f"{relative}:{line}: {name!r}"
            for name, line in spelled_names(path.read_text(encoding="utf-8"), names)
            if (name, relative) not in NOT_A_TOOL
        ]
    assert found == [], "tool names spelled outside promptpipe/controller/tool_table.py: use the table's rows"


def test_the_scan_finds_a_name_in_code_and_skips_docstrings() -> None:
    source = (
        '"""Uses scheduler."""\nx = "call save_user_profile now"\ndef f():\n    """scheduler"""\n'
        '    return "scheduler"\ny = "invalid scheduler type"\n'
    )
    assert sorted(spelled_names(source, ("scheduler", "save_user_profile"))) == [
        ("save_user_profile", 2),
        ("scheduler", 5),
    ]


def test_each_row_has_one_executor_and_each_executor_a_row() -> None:
    assert sorted(executors()) == sorted(row.name for row in tool_table.TABLE)


@pytest.mark.parametrize("module", tool_table.MODULES)
def test_each_module_offers_its_rows_in_the_tables_order(module: tool_table.Module) -> None:
    deps = memory_harness().app.deps
    built = IntakeModule(deps) if module == "intake" else FeedbackModule(deps)
    assert tuple(built.tools) == tool_table.names_for(module)
    for name, tool in built.tools.items():
        assert tool.definition.name == name
        assert tool.definition.description == tool_table.row(name).describe(
            prep_minutes=deps.config.scheduler_prep_time_minutes
        )


def test_the_flow_definitions_know_the_intake_tools_from_the_table() -> None:
    assert tool_table.names_for("intake") == NODE_TOOLS


def test_each_row_describes_itself_and_derives_an_object_schema() -> None:
    for row in tool_table.TABLE:
        assert row.description.strip()
        assert row.modules and set(row.modules) <= set(tool_table.MODULES)
        schema = row.parameters()
        assert schema["type"] == "object"
        assert "title" not in schema and all("title" not in p for p in schema["properties"].values())
        assert set(schema.get("required", [])) <= set(schema["properties"])


def test_the_shipped_schemas_are_what_the_argument_models_give_in_their_order() -> None:
    """``tool_schemas.json`` (read at run time instead of building the models' schemas at every cold
    start) is what the table derives; after a change, ``python -m tests.unit.test_tool_definitions``
    writes it again."""
    import json

    derived = {row.name: tool_table.derived_parameters(row) for row in tool_table.TABLE}
    shipped = {row.name: row.parameters() for row in tool_table.TABLE}
    assert shipped == derived
    # The properties in the models' order too: the order the model reads them in, and the provider caches.
    assert [list(schema["properties"]) for schema in shipped.values()] == [
        list(schema["properties"]) for schema in derived.values()
    ]
    assert list(json.loads(tool_table.SCHEMAS_FILE.read_text())) == [row.name for row in tool_table.TABLE]


def test_a_row_s_schema_is_a_fresh_copy_each_time() -> None:
    schema = tool_table.SCHEDULER.parameters()
    schema["properties"].clear()
    assert tool_table.SCHEDULER.parameters()["properties"]


def test_an_optional_argument_reads_as_its_plain_type() -> None:
    schema = tool_table.derived_parameters(tool_table.TRANSITION)
    assert schema["properties"]["delay_minutes"] == {
        "type": "number",
        "minimum": 0,
        "description": "Delay before moving.",
    }
    assert schema["required"] == ["target_state"]


def test_a_row_without_an_executor_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "names_for", lambda module: ("note_mood",))
    with pytest.raises(LookupError, match="no executor for the tool"):
        registry.tools_for(memory_harness().app.deps, "feedback")


def test_two_executors_of_one_row_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    twin = types.SimpleNamespace(ROW=tool_table.OPT_OUT, build=lambda deps, module: None, __path__=[], __name__="x")
    infos = [types.SimpleNamespace(name="one"), types.SimpleNamespace(name="two")]
    monkeypatch.setattr(registry.pkgutil, "iter_modules", lambda path: infos)
    monkeypatch.setattr(registry.importlib, "import_module", lambda name: twin)
    registry.executors.cache_clear()
    try:
        with pytest.raises(LookupError, match="two executors for the tool 'opt_out'"):
            registry.executors()
    finally:
        registry.executors.cache_clear()
