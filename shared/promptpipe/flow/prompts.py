"""System prompts: read from ``prompts/`` (paths from settings), with built-in fallbacks."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from promptpipe.settings import Settings

logger = logging.getLogger(__name__)

FALLBACK_INTAKE = (
    "You are a friendly habit coach talking with a participant by text message. Learn their habit "
    "domain, what motivates them, a preferred daily time (HH:MM) and an existing routine to anchor "
    "the habit to. Save each fact with save_user_profile, offer a first one-minute habit with "
    "generate_habit_prompt, set up the daily schedule with scheduler, then call transition_state "
    "with target_state FEEDBACK. Keep replies short and ask one question at a time."
)
FALLBACK_FEEDBACK = (
    "You are a friendly habit coach following up on a habit prompt sent to the participant. Ask how "
    "it went, save what helped or got in the way with save_user_profile, encourage briefly and suggest "
    "one small tweak when useful. If the profile needs repair, call transition_state with INTAKE."
)
FALLBACK_GENERATOR = (
    "You write one short, personalised habit prompt (under 30 words) for a participant, anchored to "
    "their routine. Output only the prompt text."
)
FALLBACK_CONVERSATION = "You are a warm, concise habit coach talking with a participant by text message."


@cache
def _read(path: str) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None


@dataclass(frozen=True)
class PromptLibrary:
    intake: str
    feedback: str
    generator: str
    conversation: str

    @classmethod
    def from_settings(cls, settings: Settings) -> PromptLibrary:
        def load(path: Path, fallback: str, name: str) -> str:
            text = _read(str(path))
            if text is None:
                logger.warning("prompt file missing or empty; using built-in fallback", extra={"prompt": name})
                return fallback
            return text

        return cls(
            intake=load(settings.intake_bot_prompt_file, FALLBACK_INTAKE, "intake"),
            feedback=load(settings.feedback_tracker_prompt_file, FALLBACK_FEEDBACK, "feedback"),
            generator=load(settings.prompt_generator_prompt_file, FALLBACK_GENERATOR, "generator"),
            conversation=load(settings.conversation_fallback_prompt_file, FALLBACK_CONVERSATION, "conversation"),
        )
