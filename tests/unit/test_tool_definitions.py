"""The tool definitions the model sees: each is a valid JSON Schema and equals its committed snapshot.

A typo in a property name, an enum or a required list changes what the model is asked to send, and no
behaviour test notices; the snapshot (tests/data/tool_definitions.json) makes every such change a
deliberate, reviewed edit. Regenerate it, and the schemas the package ships
(``controller/tool_schemas.json``), with ``python -m tests.unit.test_tool_definitions``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from promptpipe.controller import tool_table
from promptpipe.flow.modules import FeedbackModule, IntakeModule
from promptpipe.flow.tools import profile_save, scheduler
from promptpipe.flow.tools.base import definition_of
from promptpipe.settings import Settings
from tests.support import memory_harness

SNAPSHOT = Path(__file__).parent.parent / "data" / "tool_definitions.json"
PREP_MINUTES = 10


def current() -> dict[str, Any]:
    """Every tool's full definition by name, and each conversation module's tools as it offers them
    (``"intake:save_user_profile"``: the profile tool narrowed to intake's fields)."""
    definitions = [definition_of(row, prep_minutes=PREP_MINUTES) for row in tool_table.TABLE]
    deps = memory_harness(settings=Settings(scheduler_prep_time_minutes=PREP_MINUTES)).app.deps
    offered = {
        f"{module.name}:{name}": tool.definition.to_openai()
        for module in (IntakeModule(deps), FeedbackModule(deps))
        for name, tool in module.tools.items()
    }
    return {d.name: d.to_openai() for d in definitions} | offered


SNAPSHOTTED = json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {}


@pytest.mark.parametrize("name", sorted(SNAPSHOTTED))
def test_tool_definition_equals_its_snapshot(name: str) -> None:
    assert current()[name] == SNAPSHOTTED[name]


def test_every_tool_has_a_snapshot() -> None:
    assert sorted(current()) == sorted(SNAPSHOTTED)


@pytest.mark.parametrize("name", sorted(SNAPSHOTTED))
def test_tool_parameters_are_a_valid_json_schema(name: str) -> None:
    function = current()[name]["function"]
    Draft202012Validator.check_schema(function["parameters"])
    assert function["parameters"]["type"] == "object"
    assert function["description"].strip()
    # every required property is declared
    assert set(function["parameters"].get("required", [])) <= set(function["parameters"]["properties"])


def test_scheduler_schema_accepts_a_create_and_refuses_unknown_actions() -> None:
    validator = Draft202012Validator(scheduler.definition(PREP_MINUTES).parameters)
    validator.validate({"action": "create", "type": "fixed", "fixed_time": "08:30", "timezone": "America/Toronto"})
    validator.validate({"action": "delete", "schedule_id": "abc"})
    with pytest.raises(ValidationError, match="'remove' is not one of"):
        validator.validate({"action": "remove"})
    with pytest.raises(ValidationError, match="'weekly' is not one of"):
        validator.validate({"action": "create", "type": "weekly"})
    with pytest.raises(ValidationError, match="'action' is a required property"):
        validator.validate({"type": "fixed"})


def test_scheduler_description_states_the_prep_minutes() -> None:
    assert "prompts arrive up to 25 minutes before" in scheduler.definition(25).description


def test_profile_view_keeps_only_the_fields_asked_for_plus_tone() -> None:
    full = profile_save.ProfileSaveTool().definition.parameters["properties"]
    view = profile_save.definition_for(["habit_domain"]).parameters
    Draft202012Validator.check_schema(view)
    assert "habit_domain" in view["properties"]
    assert set(view["properties"]) < set(full)


if __name__ == "__main__":
    # The schemas the package ships (tool_table.SCHEMAS_FILE) first, in the table's order: current() reads them.
    schemas = {row.name: tool_table.derived_parameters(row) for row in tool_table.TABLE}
    tool_table.SCHEMAS_FILE.write_text(json.dumps(schemas, indent=2, ensure_ascii=False) + "\n")
    SNAPSHOT.write_text(json.dumps(current(), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {tool_table.SCHEMAS_FILE} and {SNAPSHOT}")
