"""Send only to whom may receive (docs/architecture.md, "Send only to whom may receive").

The one rule every path that sends applies at send time — the first try, an SQS redelivery, a
scheduler retry, a resumed STOP or START — from the participant's committed state as that path
loaded it: a message goes out only while the participant's status is still the one the event that
decided it committed. A reply or a daily prompt was decided for an active participant, so it is
skipped once they opted out, were paused or completed, or were deleted; the STOP confirmation was
decided by the event that paused them, so it still goes while they stay paused (and not after a
START, which would contradict it).
"""

from __future__ import annotations

from promptpipe.models.participant import ConversationParticipant, ParticipantStatus


def skip_reason(
    decided: ParticipantStatus | None, recipient: ConversationParticipant | None, *, consent_required: bool = False
) -> str | None:
    """Why a message decided when the participant's status was ``decided`` must not be sent to
    ``recipient`` (their committed state now; ``None``: deleted), or ``None`` when it may go.
    ``decided`` is ``None`` for an event recorded before the status was kept: such events were
    decided for an active participant. When the study requires consent, nothing goes to a
    participant whose consent is not on record (docs/safety.md#consent)."""
    if recipient is None:
        return "participant deleted"
    if consent_required and recipient.consent is None:
        return "no consent on record"
    if recipient.status is (decided or ParticipantStatus.ACTIVE):
        return None
    if recipient.opted_out:
        return "participant opted out"
    return f"participant {recipient.status.value}"
