"""``save_user_profile``: field-by-field merge into ``userProfile`` (docs/behaviour.md#B-PROF-1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from promptpipe.flow.session import OpContext
from promptpipe.flow.tools.base import ToolContext, ToolResult
from promptpipe.models.llm import ToolDefinition
from promptpipe.models.profile import PROFILE_TEXT_FIELDS, UserProfile
from promptpipe.rules import tone

# Short on purpose: the schema is re-sent on every model call that offers this tool.
_STRING_FIELDS_DESCRIPTIONS = {
    "habit_domain": "",
    "prompt_anchor": "existing routine",
    "motivational_frame": "",
    "preferred_time": "HH:MM",
    "additional_info": "",
    "last_successful_prompt": "",
    "last_barrier": "",
    "last_motivator": "",
    "last_tweak": "",
}


def _string_field(description: str) -> dict[str, str]:
    return {"type": "string", "description": description} if description else {"type": "string"}


# model_construct: no model build at import (tests/unit/test_cold_start.py)
DEFINITION = ToolDefinition.model_construct(
    name="save_user_profile",
    description=(
        "Save what you learned about the participant: only non-empty fields you learned; nothing is "
        "ever cleared. tone_tags: a style they asked for (source explicit) or you inferred (implicit)."
    ),
    parameters={
        "type": "object",
        "properties": {
            **{name: _string_field(text) for name, text in _STRING_FIELDS_DESCRIPTIONS.items()},
            "tone_tags": {"type": "array", "items": {"type": "string", "enum": list(tone.ALL_TAGS)}},
            "tone_update_source": {"type": "string", "enum": ["explicit", "implicit"]},
            "tone_confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["prompt_anchor", "preferred_time"],
    },
)


def merge_profile(profile: UserProfile, args: dict[str, Any], now: Any) -> list[str]:
    """Apply ``args`` to ``profile`` in place; return the names of the fields that changed."""
    args = dict(args)
    blocker = args.pop("last_blocker", None)
    barrier = args.get("last_barrier")
    if isinstance(blocker, str) and blocker.strip() and not (isinstance(barrier, str) and barrier.strip()):
        # Legacy alias of older prompts (docs/behaviour.md#B-PROF-2): it stands for last_barrier
        # whenever the call gives none, so a later last_blocker updates the stored barrier too.
        args["last_barrier"] = blocker
    updated: list[str] = []
    for name in PROFILE_TEXT_FIELDS:
        value = args.get(name)
        if isinstance(value, str) and value.strip() and value.strip() != getattr(profile, name):
            setattr(profile, name, value.strip())
            updated.append(name)
    if "tone_tags" in args:
        proposal = tone.validate_proposal(
            args.get("tone_tags") if isinstance(args.get("tone_tags"), list) else [],
            source=args.get("tone_update_source") if isinstance(args.get("tone_update_source"), str) else None,
            confidence=args.get("tone_confidence"),
        )
        if tone.update_profile_tone(profile.tone, proposal, now):
            updated.append("tone")
    if updated:
        profile.created_at = profile.created_at or now
        profile.updated_at = now
    return updated


INTAKE_FIELDS = ("habit_domain", "prompt_anchor", "motivational_frame", "preferred_time", "additional_info")
FEEDBACK_FIELDS = (
    "last_successful_prompt",
    "last_barrier",
    "last_motivator",
    "last_tweak",
    "preferred_time",
    "prompt_anchor",
    "additional_info",
)
_TONE_FIELDS = ("tone_tags", "tone_update_source", "tone_confidence")


def definition_for(fields: Sequence[str]) -> ToolDefinition:
    """The schema offering only ``fields`` (plus tone): each module shows the model the fields it
    collects. The tool itself accepts every field whatever the view."""
    properties = DEFINITION.parameters["properties"]
    keep = [*fields, *_TONE_FIELDS]
    parameters = {**DEFINITION.parameters, "properties": {k: properties[k] for k in keep}}
    return DEFINITION.model_copy(update={"parameters": parameters})


class ProfileSaveTool:
    definition = DEFINITION

    def __init__(self, fields: Sequence[str] | None = None) -> None:
        if fields is not None:
            self.definition = definition_for(fields)

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        profile = ctx.session.data.profile()  # a corrupt profile reads as a new one, replaced by this save
        updated = merge_profile(profile, args, ctx.session.now)
        if not updated:
            return ToolResult(
                ok=True,
                text="No change: the profile already holds these values.",
                data={"status": "noop"},
            )

        def save(op: OpContext) -> None:
            # Replayed against fresh state, the merge re-checks "non-empty and different" itself.
            fresh = op.data.profile()
            if merge_profile(fresh, args, op.now):
                op.data.set_profile(fresh)

        ctx.session.apply("save_user_profile", save)
        return ToolResult(
            ok=True,
            text=f"Profile saved ({len(updated)} field(s) updated: {', '.join(updated)}).",
            data={"status": "success", "updated_fields": updated},
        )
