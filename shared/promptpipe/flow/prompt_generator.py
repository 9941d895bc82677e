"""Habit-prompt generation (docs/behaviour.md#generator), shared by the tool and the daily delivery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from promptpipe.errors import PromptPipeError
from promptpipe.flow import routing, sms_fit
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse
from promptpipe.models.profile import Intensity, UserProfile
from promptpipe.models.state import DataKey
from promptpipe.rules import tone
from promptpipe.rules.sms import fold_to_gsm7, is_gsm7, normalize_gsm7

DeliveryMode = Literal["immediate", "scheduled"]

MAP_TEMPLATE = (
    '"After/Before [prompt_anchor], try [1-minute action] — it helps you [motivational benefit]. '
    'Would that feel doable?"'
)
_INTENSITY_GUIDANCE = {
    Intensity.LOW: "Intensity: low — make the action even smaller and easier than usual.",
    Intensity.NORMAL: "Intensity: normal — a small, one-minute action.",
    Intensity.HIGH: "Intensity: high — a slightly bigger stretch, still doable in a few minutes.",
}


class PromptGenerationError(PromptPipeError):
    """The profile does not allow a prompt yet, or the model produced nothing."""


@dataclass
class GeneratedPrompt:
    text: str
    response: ChatResponse
    prompt_version: str = ""
    # The model's rewrite within the SMS limit, when its first answer was longer.
    rewrite: ChatResponse | None = None


def check_profile(session: ConversationSession) -> UserProfile:
    """The validation order of docs/behaviour.md#B-GEN-2: no profile, then anchor, then time."""
    if not session.data.has_profile():
        raise PromptGenerationError("user profile not found - please complete intake first")
    profile = session.data.profile()  # a corrupt profile reads as a new one: "incomplete" below
    if not profile.prompt_anchor.strip():
        raise PromptGenerationError("profile incomplete: prompt anchor is required")
    if not profile.preferred_time.strip():
        raise PromptGenerationError("profile incomplete: preferred time is required")
    return profile


def build_generator_request(
    deps: FlowDeps,
    session: ConversationSession,
    profile: UserProfile,
    mode: DeliveryMode,
    notes: str,
    *,
    max_chars: int | None = None,
    framing: str | None = None,
) -> ChatRequest:
    lines = [deps.prompts.get("generator").text, ""]
    if mode == "immediate":
        lines.append("Context: the participant asked for this habit suggestion now, during the conversation.")
    else:
        lines.append("Context: this is the participant's scheduled daily prompt, sent at their chosen time.")
    if notes.strip():
        lines.append(f"Additional context: {notes.strip()}")
    if framing:  # the study arm drawn by the server (docs/studies.md): the model only words it
        from promptpipe.models.study import FRAMING_LABEL  # loaded with the study that drew the arm

        lines.append(f"{FRAMING_LABEL} {framing.strip()}")
    if profile.success_count > 0:
        lines.append(f"The participant has completed {profile.success_count} habit prompt(s) so far.")
    if profile.last_barrier:
        lines.append(f"Last time this got in the way: {profile.last_barrier}. Work around it.")
    if profile.last_tweak:
        lines.append(f"The participant wanted to try this tweak: {profile.last_tweak}.")
    lines.append(_INTENSITY_GUIDANCE[profile.intensity])
    system = "\n".join(lines) + tone.build_tone_guide(profile.tone.tags)

    background = session.data.get(DataKey.PARTICIPANT_BACKGROUND)
    user = "\n".join(
        [
            "Write today's habit prompt for this participant.",
            f"Habit domain: {profile.habit_domain or '(not given)'}",
            f"Motivation: {profile.motivational_frame or '(not given)'}",
            f"Preferred time: {profile.preferred_time}",
            f"Anchor routine: {profile.prompt_anchor}",
            f"Additional info: {profile.additional_info or '(none)'}",
            *([f"Participant background:\n{background}"] if background else []),
            f"Use this shape: {MAP_TEMPLATE}",
            "Keep it under 30 words. Output only the prompt.",
            *([sms_limit_line(max_chars)] if max_chars else []),
        ]
    )
    request = ChatRequest(
        purpose="prompt_generator",
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
    )
    return routing.routed(request, routing.resolve(deps.config, "generator", session.data.raw))


def sms_limit_line(max_chars: int) -> str:
    """The SMS limit the generator is held to (docs/behaviour.md#B-SMS-2)."""
    return (
        f"It is sent by SMS with its question after it: at most {max_chars} characters, plain text "
        "(no emoji, straight quotes, no long dashes)."
    )


def clean_prompt_text(text: str | None) -> str:
    cleaned = (text or "").strip()
    while len(cleaned) >= 2 and cleaned[0] == cleaned[-1] and cleaned[0] in "\"'“”":
        cleaned = cleaned[1:-1].strip()
    if len(cleaned) >= 2 and cleaned[0] == "“" and cleaned[-1] == "”":
        cleaned = cleaned[1:-1].strip()
    return cleaned


def generate_habit_prompt(
    deps: FlowDeps,
    session: ConversationSession,
    mode: DeliveryMode,
    notes: str = "",
    max_chars: int | None = None,
    *,
    framing: str | None = None,
) -> GeneratedPrompt:
    """Validate, ask the model, store ``lastHabitPrompt`` in the session. Raises
    ``PromptGenerationError`` (profile) or ``LLMError`` (model).

    ``max_chars`` (SMS, docs/behaviour.md#B-SMS-2): the prompt must fit in that many GSM-7 characters.
    The model is told so; a longer answer is rewritten by the model once; one still too long raises
    ``PromptGenerationError`` (the delivery then sends its fallback, which fits). Never cut."""
    profile = check_profile(session)
    prompt_version = deps.prompts.get("generator").version
    request = build_generator_request(deps, session, profile, mode, notes, max_chars=max_chars, framing=framing)
    response = deps.llm.complete(request)
    text = clean_prompt_text(response.content)
    if not text:
        raise PromptGenerationError("the model returned an empty habit prompt")
    rewrite: ChatResponse | None = None
    if max_chars is not None:
        text = fold_to_gsm7(normalize_gsm7(text))
        if not sms_fit.fits_room(text, max_chars):
            request = sms_fit.rewrite_request(deps, session, text, max_chars, what="habit prompt", route="generator")
            rewrite = deps.llm.complete(request)
            text = fold_to_gsm7(normalize_gsm7(clean_prompt_text(rewrite.content)))
            # A script GSM-7 cannot write (Cyrillic, Greek, CJK…) goes as UCS-2 at a higher price: the
            # participant's own language rather than the English fallback.
            other_script = bool(text) and not is_gsm7(text) and len(text) <= max_chars
            if not text or not (other_script or sms_fit.fits_room(text, max_chars)):
                raise PromptGenerationError(f"the habit prompt does not fit {max_chars} GSM-7 characters")

    def store(op: OpContext) -> None:
        op.data.set(DataKey.LAST_HABIT_PROMPT, text)

    session.apply("store_last_habit_prompt", store)
    return GeneratedPrompt(text=text, response=response, prompt_version=prompt_version, rewrite=rewrite)
