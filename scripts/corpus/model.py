"""The conversation corpus (``tests/data/conversations/<split>/*.yaml``): what people write, and what a
capable model would do with each message.

Two splits (docs/offline-coach.md, "The two splits"): ``built`` (the conversations the rules were built
on; ``make test`` gates them) and ``held_out`` (written and committed before the rules they test, never
tuned against; reported, not gated).

One file holds a list of conversations. A conversation is a participant (name, zone), the turns
they send and the end a capable coach reaches. A turn is the participant's message, the tool calls
a capable model makes for it (``calls``: one response; ``rounds``: several responses, each after the
tool results of the one before) and its reply. Arguments may name values only known while playing:
``{schedule_id}`` (the last schedule id a scheduler result gave) and ``{last_prompt}`` (the habit
prompt the context block shows); ``{habit_prompt}`` in a reply is the text ``generate_habit_prompt``
returned. ``wait`` says when the message is sent: ``2m`` (default) or any ``<n>m|h|d`` after the
previous one, or ``next_prompt`` (a few minutes after the next daily prompt is delivered).
``max_model_calls`` bounds the model requests the message may cause (0: an opt-out word or HELP, which no
model reads); ``replies`` is the exact number of messages the participant gets in answer. ``not_a_fact``
(``greeting``, ``question``, ``complaint`` or ``hesitation``) marks a message that states no fact for the profile: no
player may save any of its words (``scripts/corpus/facts.py`` checks it).

A call names a tool of the engine, or a *role* (``ROLE_SCHEMAS``: ``record_outcome``, the tool that
records the day's outcome; ``opt_out``, the tool that opts the participant out) that the player maps to
whichever offered tool fulfils it (``scripts/corpus/standin.py``, ``ROLE_TOOLS``).

The expected end: the sub-state, profile fields, the daily schedule (``HH:MM``, none, or ``any``), and
optionally the done count (the profile's ``success_count``), whether the participant opted out, and
``after``: the daily prompts delivered in the ``days`` that follow the last message (0: the prompts
stopped; a pause or an opt-out is judged by its effect, not by a flag).

Plain data on purpose: any player (the competent-model stand-in, a real model, the offline coach)
reads the same files through ``load_corpus``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CORPUS_ROOT = Path(__file__).resolve().parents[2] / "tests" / "data" / "conversations"
BUILT = "built"
HELD_OUT = "held_out"
SPLITS = (BUILT, HELD_OUT)
CORPUS_DIR = CORPUS_ROOT / BUILT  # the built split: what the gate plays
ANY_SCHEDULE = "any"
ENGINE_TOOLS = ("save_user_profile", "generate_habit_prompt", "scheduler", "transition_state")
# Roles: a capability the corpus needs without naming the engine's tool for it (see the docstring).
ROLE_SCHEMAS: dict[str, dict[str, Any]] = {
    "record_outcome": {
        "type": "object",
        "properties": {"outcome": {"type": "string", "enum": ["done", "not_done"]}},
        "required": ["outcome"],
        "additionalProperties": False,
    },
    "opt_out": {"type": "object", "properties": {}, "additionalProperties": False},
}
NEXT_PROMPT = "next_prompt"
NotAFact = Literal["greeting", "question", "complaint", "hesitation"]
_WAIT = re.compile(r"^(\d+)([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


class Call(BaseModel):
    """One tool call: the tool's name and its arguments (JSON values)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: Literal[
        "save_user_profile", "generate_habit_prompt", "scheduler", "transition_state", "record_outcome", "opt_out"
    ]
    args: dict[str, Any] = Field(default_factory=dict)


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    say: str = Field(min_length=1)
    calls: list[Call] = Field(default_factory=list)
    rounds: list[list[Call]] = Field(default_factory=list)
    reply: str = Field(min_length=1)
    wait: str = "2m"
    note: str = ""  # why these calls (for the reader)
    max_model_calls: int | None = Field(None, ge=0)  # 0: no model reads this message
    replies: int | None = Field(None, ge=0)  # messages sent to the participant in answer, exactly
    # A message that states no fact (a greeting, a question, a complaint): nothing of it may be saved.
    not_a_fact: NotAFact | None = None

    @model_validator(mode="after")
    def _one_way_of_giving_calls(self) -> Turn:
        if self.calls and self.rounds:
            raise ValueError("give either calls (one response) or rounds (several), not both")
        if self.calls:
            self.rounds = [list(self.calls)]
            self.calls = []
        if any(not r for r in self.rounds):
            raise ValueError("an empty round")
        return self

    @field_validator("wait")
    @classmethod
    def _wait_format(cls, value: str) -> str:
        if value != NEXT_PROMPT and not _WAIT.match(value):
            raise ValueError(f"wait must be <n>m, <n>h, <n>d or {NEXT_PROMPT}: {value!r}")
        return value

    @property
    def needed_tools(self) -> set[str]:
        return {call.tool for round_ in self.rounds for call in round_}

    def wait_delta(self) -> timedelta | None:
        """The pause before this message; ``None`` for ``next_prompt``."""
        match = _WAIT.match(self.wait)
        if match is None:
            return None
        return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


class After(BaseModel):
    """The daily prompts delivered in the ``days`` after the last message."""

    model_config = ConfigDict(extra="forbid")

    days: int = Field(ge=1, le=14)
    daily_prompts: int = Field(ge=0)


class Expected(BaseModel):
    """How the conversation ends: profile fields present, the daily schedule (its HH:MM, none, or
    ``any``), the sub-state; when given, the done count, whether the participant opted out, and the
    prompts that follow (``after``). Every conversation also ends without a hand-off."""

    model_config = ConfigDict(extra="forbid")

    sub_state: Literal["INTAKE", "FEEDBACK"]
    profile: list[str] = Field(default_factory=list)
    schedule: str | None = Field(None, pattern=rf"^(\d{{2}}:\d{{2}}(-\d{{2}}:\d{{2}})?|{ANY_SCHEDULE})$")
    done: int | None = Field(None, ge=0)
    opted_out: bool | None = None
    after: After | None = None


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    title: str
    name: str = "Alex"
    timezone: str = "America/Toronto"
    start: str = Field("08:00", pattern=r"^\d{2}:\d{2}$")  # local time of enrollment, day 0 (Monday)
    greeting: str = "Hi! I'm your habit coach. What small daily habit would you like to build?"
    turns: list[Turn] = Field(min_length=1)
    expect: Expected

    @property
    def feedback_week(self) -> bool:
        return any(turn.wait == NEXT_PROMPT for turn in self.turns)


class CorpusFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversations: list[Conversation]


def selected(only: Sequence[str] = (), split: str = BUILT) -> list[Conversation]:
    """A split, or only its conversations whose ids are in ``only`` (``--only``)."""
    return [c for c in load_split(split) if not only or c.id in only]


def load_split(split: str) -> list[Conversation]:
    """One split of the corpus (``built`` or ``held_out``)."""
    if split not in SPLITS:
        raise ValueError(f"no corpus split {split!r} (splits: {', '.join(SPLITS)})")
    return load_corpus(CORPUS_ROOT / split)


def load_corpus(directory: Path = CORPUS_DIR) -> list[Conversation]:
    """Every conversation of every ``*.yaml`` file, in file then listed order; ids are unique."""
    conversations: list[Conversation] = []
    for path in sorted(directory.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            conversations += CorpusFile.model_validate(raw).conversations
        except ValueError as exc:
            raise ValueError(f"{path.name}: {exc}") from exc
    ids = [c.id for c in conversations]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate conversation ids: {', '.join(duplicates)}")
    return conversations
