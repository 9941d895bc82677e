"""The send rule (flow/send_rule.py): a message goes only while the participant's committed status
is still the one the event that decided it committed."""

from __future__ import annotations

import pytest

from promptpipe.flow.send_rule import skip_reason
from promptpipe.models.participant import CONSENT_IMPLIED, ConversationParticipant, ParticipantStatus, engine_consent
from tests.support import START

ACTIVE, PAUSED, COMPLETED = ParticipantStatus.ACTIVE, ParticipantStatus.PAUSED, ParticipantStatus.COMPLETED


def participant(status: ParticipantStatus, *, opted_out: bool = False) -> ConversationParticipant:
    return ConversationParticipant(
        id="p_" + "1" * 32,
        phone_number="+14155550101",
        status=status,
        opted_out=opted_out,
        enrolled_at=START,
        created_at=START,
        updated_at=START,
    )


@pytest.mark.parametrize(
    ("decided", "now", "reason"),
    [
        # decided for an active participant: goes while they are active
        (ACTIVE, participant(ACTIVE), None),
        (None, participant(ACTIVE), None),  # an event recorded before the status was kept
        (ACTIVE, participant(PAUSED, opted_out=True), "participant opted out"),
        (None, participant(PAUSED, opted_out=True), "participant opted out"),
        (ACTIVE, participant(PAUSED), "participant paused"),
        (ACTIVE, participant(COMPLETED), "participant completed"),
        (ACTIVE, None, "participant deleted"),
        # the STOP confirmation: decided by the event that paused them
        (PAUSED, participant(PAUSED, opted_out=True), None),
        (PAUSED, participant(ACTIVE), "participant active"),  # a START came first: contradicted
        (PAUSED, None, "participant deleted"),
        (COMPLETED, participant(COMPLETED), None),
    ],
)
def test_skip_reason(
    decided: ParticipantStatus | None, now: ConversationParticipant | None, reason: str | None
) -> None:
    assert skip_reason(decided, now) == reason


def test_when_the_study_requires_consent_nothing_goes_to_a_participant_without_it() -> None:
    """docs/safety.md#consent: the reason is what the transcript shows for the skipped message."""
    without = participant(ACTIVE)
    with_consent = without.model_copy(update={"consent": engine_consent(START, CONSENT_IMPLIED)})
    assert skip_reason(ACTIVE, without, consent_required=True) == "no consent on record"
    assert skip_reason(ACTIVE, with_consent, consent_required=True) is None
    # Consent is read only when the study requires it; the status rule still applies with it.
    assert skip_reason(ACTIVE, without) is None
    assert skip_reason(ACTIVE, with_consent.model_copy(update={"status": PAUSED}), consent_required=True) == (
        "participant paused"
    )
    assert skip_reason(ACTIVE, None, consent_required=True) == "participant deleted"
