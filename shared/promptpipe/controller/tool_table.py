"""The one table of the tools the coach can call (docs/architecture.md, "Adding a tool").

Each row is a tool: its name, its argument model (a TypedDict pydantic reads; the JSON schema the
model is shown is derived from it), the conversation modules that offer it, and its description. Everything else
reads this table: the executors in ``flow/tools/`` register against a row (``flow.tools.registry``),
the prompts name tools through it, the flow definitions' validation (``controller.definition``)
knows the tools a node may name from it, the intent hints and the offline coach use its names, and
``tests/unit/test_tool_table.py`` fails when a tool's name is spelled anywhere else in the package.

It lives in ``controller``, below ``flow``, ``models`` and the adapters, so that every one of them
may import it (pyproject.toml, import-linter "layers"). Pure: pydantic and the tone rules only.

Descriptions are short on purpose: every schema is re-sent on every model call of its module
(docs/benchmarks.md, the token budget).

The JSON schemas derived from the argument models ship beside this module (``tool_schemas.json``):
deriving them at run time builds every argument model's pydantic schema, 20-30 ms of the worker's
first event, at every cold start. ``tests/unit/test_tool_table.py`` fails when the file differs from
what the models give; ``python -m tests.unit.test_tool_definitions`` writes it again.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Required

from pydantic import Field, WithJsonSchema

from promptpipe.rules import tone

if sys.version_info >= (3, 12):  # the runtime's
    from typing import TypedDict
else:  # pydantic reads typing's own TypedDict only from Python 3.12 (typing_extensions: pydantic's dependency)
    from typing_extensions import TypedDict

Module = Literal["intake", "feedback"]
MODULES: tuple[Module, ...] = ("intake", "feedback")


# --- argument models -------------------------------------------------------------------------------
# TypedDicts that pydantic reads (``derived_parameters``): nothing validates a tool's arguments at run
# time (the executors read the model's JSON), so defining them costs no pydantic model class at
# every cold start (about 3 ms of the worker's, docs/benchmarks.md section 2); the schemas they
# give are the models' own, field for field. ``Required`` marks an argument the model must give.
class TransitionArgs(TypedDict, total=False):
    target_state: Required[Literal["INTAKE", "FEEDBACK"]]
    delay_minutes: Annotated[float | None, Field(ge=0, description="Delay before moving.")]
    reason: str | None


_ToneTags = Annotated[
    list[str], WithJsonSchema({"type": "array", "items": {"type": "string", "enum": list(tone.ALL_TAGS)}})
]


class ProfileArgs(TypedDict, total=False):
    habit_domain: str | None
    prompt_anchor: Required[Annotated[str, Field(description="existing routine")]]
    motivational_frame: str | None
    preferred_time: Required[Annotated[str, Field(description="HH:MM")]]
    additional_info: str | None
    last_successful_prompt: str | None
    last_barrier: str | None
    last_motivator: str | None
    last_tweak: str | None
    tone_tags: _ToneTags | None
    tone_update_source: Literal["explicit", "implicit"] | None
    tone_confidence: Annotated[float | None, Field(ge=0, le=1)]


class SchedulerArgs(TypedDict, total=False):
    action: Required[Literal["create", "list", "delete", "pause", "resume"]]
    type: Literal["fixed", "random"] | None
    fixed_time: str | None
    random_start_time: str | None
    random_end_time: str | None
    timezone: str | None  # an IANA zone
    schedule_id: str | None
    days: Annotated[int | None, Field(ge=1, le=60)]  # pause: how many days


class HabitPromptArgs(TypedDict, total=False):
    delivery_mode: Required[Literal["immediate", "scheduled"]]
    personalization_notes: str | None


class OutcomeArgs(TypedDict):
    done: bool


class OptOutArgs(TypedDict):
    pass


class AskPersonArgs(TypedDict):
    pass  # no reason: the hold's detail never carries the participant's words (models/safety.py)


# --- the table -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolRow:
    name: str
    arguments: type[Mapping[str, Any]]  # a TypedDict above
    modules: tuple[Module, ...]
    # May hold ``{placeholders}`` that the executor fills from its settings (``describe``).
    description: str
    # What the fixed reply after a failed or empty synthesis says of a run of this tool (flow/modules.py,
    # ``fallback_reply``): what it did, what it could not do; a tool without them is never claimed.
    done_phrase: str = ""
    failed_phrase: str = ""
    # Values of an ``action`` argument that change nothing (a schedule listed): never claimed as done.
    read_only_actions: tuple[str, ...] = ()

    def describe(self, **values: object) -> str:
        return self.description.format(**values) if values else self.description

    def parameters(self) -> dict[str, Any]:
        """The argument model as the JSON schema the model is shown (a fresh copy), as derived
        (``derived_parameters``) and stored in ``tool_schemas.json``."""
        stored: dict[str, Any] = json.loads(_stored_schemas())[self.name]
        return stored


TRANSITION = ToolRow(
    name="transition_state",
    arguments=TransitionArgs,
    modules=("intake", "feedback"),
    description="FEEDBACK once intake is done; INTAKE to repair the profile or change the habit.",
    done_phrase="moved our conversation on",
    failed_phrase="move our conversation on",
)
PROFILE = ToolRow(
    name="save_user_profile",
    arguments=ProfileArgs,
    modules=("intake", "feedback"),
    description=(
        "Save only fields you learned; nothing is cleared. tone_tags: a style they asked for (explicit) "
        "or you inferred (implicit)."
    ),
    done_phrase="saved your details",
    failed_phrase="save your details",
)
SCHEDULER = ToolRow(
    name="scheduler",
    arguments=SchedulerArgs,
    modules=("intake", "feedback"),
    description=(
        "Daily prompt schedule. create: fixed (fixed_time) or random (between random_start_time and "
        "random_end_time); list; delete (schedule_id from list/create); pause (days: they resume by "
        "themselves after); resume. Times HH:MM 24h; prompts arrive up to {prep_minutes} minutes before."
    ),
    done_phrase="updated your reminder schedule",
    failed_phrase="change your reminder schedule",
    read_only_actions=("list",),
)
HABIT_PROMPT = ToolRow(
    name="generate_habit_prompt",
    arguments=HabitPromptArgs,
    modules=("intake",),
    description=(
        "A one-minute habit prompt from the saved profile (needs prompt_anchor, preferred_time). Returns "
        "the text, unsent: put it in your reply."
    ),
    done_phrase="prepared your habit prompt",
    failed_phrase="prepare your habit prompt",
)

OUTCOME = ToolRow(
    name="record_outcome",
    arguments=OutcomeArgs,
    modules=("feedback",),
    description=(
        "Their report of today's habit, in any words: done=true if they did it, false if not. Agreeing "
        "to try is no report. Counts once per prompt; returns the count."
    ),
)
OPT_OUT = ToolRow(
    name="opt_out",
    arguments=OptOutArgs,
    modules=("intake", "feedback"),
    description=(
        'Stop ALL messages, as STOP does, on a plain request ("stop sending me these"); the confirmation '
        'with how to restart is sent for you. Partial or unclear ("stop texting me at night"): ask instead.'
    ),
)

ASK_PERSON = ToolRow(
    name="ask_for_person",
    arguments=AskPersonArgs,
    modules=("intake", "feedback"),
    description=(
        "They want a person of the study team, in any words: you are held and send nothing more until "
        "a person replies. Say a person will follow up."
    ),
)

# The order is the order a module offers its tools in (a stable prefix the provider can cache).
TABLE: tuple[ToolRow, ...] = (TRANSITION, PROFILE, SCHEDULER, HABIT_PROMPT, OUTCOME, OPT_OUT, ASK_PERSON)
BY_NAME: Mapping[str, ToolRow] = {row.name: row for row in TABLE}


def names_for(module: Module) -> tuple[str, ...]:
    """The names of the tools ``module`` offers, in the table's order."""
    return tuple(row.name for row in TABLE if module in row.modules)


def row(name: str) -> ToolRow:
    """The row of ``name``; ``KeyError`` for a name the table does not hold."""
    return BY_NAME[name]


# --- JSON schema -----------------------------------------------------------------------------------
SCHEMAS_FILE = Path(__file__).with_name("tool_schemas.json")


@functools.cache
def _stored_schemas() -> str:
    return SCHEMAS_FILE.read_text(encoding="utf-8")


def derived_parameters(row: ToolRow) -> dict[str, Any]:
    """The JSON schema of ``row``'s argument model, as the model is shown it: what ``tool_schemas.json``
    holds for the row (built from the pydantic model: for the tests and the file's writer)."""
    from pydantic import TypeAdapter  # the tests' and the file writer's: never at run time

    return _clean(TypeAdapter(row.arguments).json_schema())


def _clean(node: Any) -> Any:
    """pydantic's schema in the terse form the model is sent: no titles or defaults, and an optional
    field (``X | None``) as plain ``X`` (absent is how the model leaves it out)."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        (kept,) = (option for option in options if option != {"type": "null"})
        node = {**{k: v for k, v in node.items() if k != "anyOf"}, **kept}
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "default"):
            continue
        # "properties" maps field names to schemas: clean the schemas, keep every name.
        cleaned[key] = {k: _clean(v) for k, v in value.items()} if key == "properties" else _clean(value)
    return cleaned
