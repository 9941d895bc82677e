"""What the coach learned, merged field by field into ``userProfile`` (``tool_table.PROFILE``;
docs/behaviour.md#B-PROF-1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from promptpipe.controller.tool_table import PROFILE, Module
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import OpContext
from promptpipe.flow.tools.base import ToolContext, ToolResult, definition_of
from promptpipe.models.llm import ToolDefinition
from promptpipe.models.profile import PROFILE_TEXT_FIELDS, UserProfile
from promptpipe.rules import tone


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


ROW = PROFILE


def definition_for(fields: Sequence[str]) -> ToolDefinition:
    """The schema offering only ``fields`` (plus tone): each module shows the model the fields it
    collects. The tool itself accepts every field whatever the view."""
    full = ROW.parameters()
    keep = [*fields, *_TONE_FIELDS]
    return definition_of(ROW, {**full, "properties": {k: full["properties"][k] for k in keep}})


class ProfileSaveTool:
    def __init__(self, fields: Sequence[str] | None = None) -> None:
        self.definition = definition_of(ROW) if fields is None else definition_for(fields)

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

        ctx.session.apply(ROW.name, save)
        return ToolResult(
            ok=True,
            text=f"Profile saved ({len(updated)} field(s) updated: {', '.join(updated)}).",
            data={"status": "success", "updated_fields": updated},
        )


def build(deps: FlowDeps, module: Module) -> ProfileSaveTool:
    return ProfileSaveTool(INTAKE_FIELDS if module == "intake" else FEEDBACK_FIELDS)
