"""What the model reads about the participant besides the message: the context block of intake and
of feedback (the profile so far, what is still needed, the participant's background) and the window
of history sent with each turn."""

from __future__ import annotations

from collections.abc import Sequence

from promptpipe.controller.tool_table import TRANSITION
from promptpipe.models.history import model_history_window
from promptpipe.models.profile import UserProfile
from promptpipe.models.state import ConversationMessage


def history_window(history: Sequence[ConversationMessage], limit: int) -> list[ConversationMessage]:
    """docs/behaviour.md#B-HIST-2: -1 → the last 30; 0 → none; N > 0 → the last min(N, 50)."""
    count = model_history_window(limit)
    return list(history[-count:]) if count else []


def _status_line(label: str, value: str) -> str:
    return f"- {label}: {value}" if value else f"- {label}: STILL NEEDED"


def intake_context(profile: UserProfile, background: str) -> str:
    lines = [
        "INTAKE CONVERSATION CONTEXT:",
        "Profile so far (CURRENT values, or STILL NEEDED):",
        _status_line("habit_domain", profile.habit_domain),
        _status_line("motivational_frame", profile.motivational_frame),
        _status_line("preferred_time", profile.preferred_time),
        _status_line("prompt_anchor", profile.prompt_anchor),
    ]
    if profile.additional_info:
        lines.append(f"- additional_info: {profile.additional_info}")
    lines.append(f"- intensity: {profile.intensity.value}")
    if profile.is_complete:
        lines.append("Profile status: complete: a habit prompt and the schedule can be set up.")
    else:
        missing = ", ".join(profile.missing_required)
        lines.append(f"Profile status: incomplete; needed before a prompt: {missing}.")
    if background:
        lines += ["Participant background:", background]
    return "\n".join(lines)


def feedback_context(profile: UserProfile, data_last_prompt: str, responded: bool, background: str) -> str:
    lines = [
        "FEEDBACK TRACKING CONTEXT:",
        f"- habit_domain: {profile.habit_domain or '(unknown)'}",
        f"- motivational_frame: {profile.motivational_frame or '(unknown)'}",
        f"- last habit prompt: {data_last_prompt or '(none recorded)'}",
        f"- prompts completed: {profile.success_count} of {profile.total_prompts} delivered",
        f"- intensity: {profile.intensity.value}",
        f"- replied to the latest daily prompt: {'yes' if responded else 'not yet'}",
    ]
    for label, value in (
        ("last_barrier", profile.last_barrier),
        ("last_tweak", profile.last_tweak),
        ("last_motivator", profile.last_motivator),
    ):
        if value:
            lines.append(f"- {label}: {value}")
    if profile.is_complete:
        lines.append("Profile status: complete.")
    else:
        missing = ", ".join(profile.missing_required)
        lines.append(
            f"Profile status: missing {missing}. Call {TRANSITION.name} with target_state INTAKE so intake "
            "can repair it; do not run intake questions here."
        )
    if background:
        lines += ["Participant background:", background]
    return "\n".join(lines)
