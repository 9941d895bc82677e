"""Bundled flow definitions: ``prompts/flows/*.json``, seeded into the store when absent."""

from __future__ import annotations

from pathlib import Path

from promptpipe.controller.definition import FlowDefinition, parse_text
from promptpipe.controller.problems import DefinitionInvalid


def load_flow_files(directory: Path) -> dict[str, FlowDefinition]:
    """Every ``*.json`` under ``directory``, by flow id. A shipped file that does not validate is
    a build error, so it raises ``DefinitionInvalid`` naming the file."""
    flows: dict[str, FlowDefinition] = {}
    if not directory.is_dir():
        return flows
    for path in sorted(directory.glob("*.json")):
        definition, problems = parse_text(path.read_text(encoding="utf-8"))
        if definition is None:
            raise DefinitionInvalid([p.model_copy(update={"path": f"{path.name}:{p.path}"}) for p in problems])
        flows[definition.id] = definition
    return flows
