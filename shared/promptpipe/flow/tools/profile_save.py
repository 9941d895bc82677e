"""``save_user_profile``: field-by-field merge into ``userProfile`` (FACTS §2, contract §10.1)."""

from __future__ import annotations

from typing import Any

from promptpipe import tone
from promptpipe.flow.session import OpContext
from promptpipe.flow.tools.base import ToolContext, ToolResult
from promptpipe.models.llm import ToolDefinition
from promptpipe.models.profile import PROFILE_TEXT_FIELDS, UserProfile

_STRING_FIELDS_DESCRIPTIONS = {
    "habit_domain": "The area the participant wants a habit in (e.g. physical activity, sleep, focus).",
    "prompt_anchor": "The existing routine the habit attaches to (e.g. 'after my morning coffee').",
    "motivational_frame": "Why this matters to the participant, in their words.",
    "preferred_time": "When the participant wants their daily prompt, as HH:MM (24-hour) when known.",
    "additional_info": "Other useful context the participant shared.",
    "last_successful_prompt": "A habit prompt the participant reported doing successfully.",
    "last_barrier": "What got in the way the last time.",
    "last_motivator": "What helped or motivated the participant the last time.",
    "last_tweak": "A small change the participant wants to try next time.",
}

DEFINITION = ToolDefinition(
    name="save_user_profile",
    description=(
        "Save what you learned about the participant. Only non-empty values that differ from the stored "
        "ones are saved; fields are never cleared. Communication style may be proposed with tone_tags "
        f"(allowed: {', '.join(tone.ALL_TAGS)}) and tone_update_source: 'explicit' when the participant "
        "asked for it, 'implicit' when you inferred it."
    ),
    parameters={
        "type": "object",
        "properties": {
            **{name: {"type": "string", "description": text} for name, text in _STRING_FIELDS_DESCRIPTIONS.items()},
            "tone_tags": {"type": "array", "items": {"type": "string"}, "description": "Proposed tone tags."},
            "tone_update_source": {"type": "string", "enum": ["explicit", "implicit"]},
            "tone_confidence": {"type": "number", "description": "How sure you are about the tone (0-1)."},
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
        # Legacy alias of older prompts: it stands for last_barrier whenever the call gives none,
        # so a later last_blocker updates the stored barrier too.
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


class ProfileSaveTool:
    definition = DEFINITION

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        profile = ctx.session.data.profile()  # a corrupt profile reads as a new one, replaced by this save
        updated = merge_profile(profile, args, ctx.session.now)
        if not updated:
            return ToolResult(
                ok=True,
                text="No change: the profile already holds these values.",
                data={"status": "noop", "profile_snapshot": profile.to_json_dict()},
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
            data={"status": "success", "updated_fields": updated, "profile_snapshot": profile.to_json_dict()},
        )
