"""The send rule (flow/send_rule.py): a message goes only while the participant's committed status
is still the one the event that decided it committed."""

from __future__ import annotations

import pytest

from promptpipe.flow.send_rule import skip_reason
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
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
