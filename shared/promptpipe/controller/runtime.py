"""The controller's runtime state of one conversation (docs/controller.md, "Runtime state").

Stored as one JSON string in the participant's flow state (``controllerState``), so reading and
writing it costs no DynamoDB call of its own. Sets are kept as sorted lists, so the same state
always serialises to the same text.
"""

from enum import StrEnum

from pydantic import ConfigDict, Field, field_validator

from promptpipe.lazy_model import LazyModel

MAX_TURN_LOG = 20
LOOP_GUARD_TURNS = 10


class Mode(StrEnum):
    EXECUTE = "EXECUTE"
    RETRY = "RETRY"
    BROADEN = "BROADEN"
    HANDOFF = "HANDOFF"
    SKIP = "SKIP"


class Status(StrEnum):
    OK = "OK"
    COMPLETE = "COMPLETE"
    DEADLOCK = "DEADLOCK"
    PAUSED = "PAUSED"  # a handoff or deadlock is waiting for a person


class TurnLogEntry(LazyModel):
    model_config = ConfigDict(populate_by_name=True)

    turn_index: int = Field(alias="turnIndex")
    node_id: str | None = Field(None, alias="nodeId")
    mode: Mode | None = None
    status: Status = Status.OK
    reason: str = ""
    facts_produced: list[str] = Field(default_factory=list, alias="factsProduced")
    states_produced: list[str] = Field(default_factory=list, alias="statesProduced")


class Hold(LazyModel):
    """Why the flow waits for a person (a HANDOFF or a DEADLOCK), until an operator clears it."""

    model_config = ConfigDict(populate_by_name=True)

    kind: Status | Mode
    node_id: str | None = Field(None, alias="nodeId")
    reason: str
    turn_index: int = Field(alias="turnIndex")


class RuntimeState(LazyModel):
    model_config = ConfigDict(populate_by_name=True)

    flow_id: str = Field(alias="flowId")
    flow_version: int = Field(alias="flowVersion")
    turn_index: int = Field(0, alias="turnIndex")
    facts: list[str] = Field(default_factory=list)
    states: list[str] = Field(default_factory=list)
    gates_satisfied: list[str] = Field(default_factory=list, alias="gatesSatisfied")
    attempts_by_node: dict[str, int] = Field(default_factory=dict, alias="attemptsByNode")
    executions_by_node: dict[str, int] = Field(default_factory=dict, alias="executionsByNode")
    last_attempt_turn_by_node: dict[str, int] = Field(default_factory=dict, alias="lastAttemptTurnByNode")
    broadened_nodes: list[str] = Field(default_factory=list, alias="broadenedNodes")
    skipped_nodes: list[str] = Field(default_factory=list, alias="skippedNodes")
    last_node: str | None = Field(None, alias="lastNode")
    consecutive_selections: int = Field(0, alias="consecutiveSelections")
    completed_at_turn: int | None = Field(None, alias="completedAtTurn")
    hold: Hold | None = None
    turn_log: list[TurnLogEntry] = Field(default_factory=list, alias="turnLog")

    @field_validator("facts", "states", "gates_satisfied", "broadened_nodes", "skipped_nodes")
    @classmethod
    def _sorted(cls, value: list[str]) -> list[str]:
        return sorted(set(value))

    @classmethod
    def start(cls, flow_id: str, flow_version: int) -> "RuntimeState":
        return cls(flow_id=flow_id, flow_version=flow_version)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)

    @classmethod
    def from_json(cls, text: str) -> "RuntimeState":
        return cls.model_validate_json(text)

    def attempts(self, node_id: str) -> int:
        return self.attempts_by_node.get(node_id, 0)

    def executions(self, node_id: str) -> int:
        return self.executions_by_node.get(node_id, 0)
