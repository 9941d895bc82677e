"""Find a participant by phone number (``GET /conversation/participants?phone=``)."""

from __future__ import annotations

from promptpipe.models.participant import ConversationParticipant
from promptpipe.phone import canonicalize_phone
from promptpipe.services import PromptPipe


def participants_by_phone(app: PromptPipe, phone: str) -> list[ConversationParticipant]:
    """The participant whose phone claim matches (at most one), after canonicalising to E.164.

    Raises ``InvalidPhoneNumber`` (a 400) when the number cannot be canonicalised."""
    participant_id = app.repo.find_id_by_phone(canonicalize_phone(phone, app.deps.config.default_phone_region))
    return [app.repo.get(participant_id)] if participant_id else []
