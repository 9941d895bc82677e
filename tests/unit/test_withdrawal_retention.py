"""A withdrawal starts the retention clock (docs/retention.md): the flow state carries the expiry,
the items no commit rewrites are asked to follow it, and a re-activation stops the clock."""

from __future__ import annotations

from datetime import timedelta

from promptpipe.models.api import ParticipantUpdate
from promptpipe.models.participant import ParticipantStatus
from promptpipe.settings import Settings
from promptpipe.usecases.participants import apply_participant_update
from tests.support import START, memory_harness


def test_withdrawal_starts_the_clock_and_reactivation_stops_it() -> None:
    # Given RETENTION_DAYS_AFTER_DELETE=30 and an active participant
    h = memory_harness(settings=Settings(retention_days_after_delete=30))
    p = h.enroll()
    h.clock.advance(timedelta(days=2))
    # When the organiser withdraws them
    apply_participant_update(h.app, p.id, ParticipantUpdate(status=ParticipantStatus.WITHDRAWN))
    # Then the state expires 30 days after the withdrawal, and the transcript and claim are told so
    expiry = START + timedelta(days=32)
    assert h.store.flows[p.id].expires_at == expiry and h.store.expiries == {p.id: expiry}
    # When withdrawn again a day later (a retry) / Then the clock is not restarted
    h.clock.advance(timedelta(days=1))
    apply_participant_update(h.app, p.id, ParticipantUpdate(status=ParticipantStatus.WITHDRAWN))
    assert h.store.flows[p.id].expires_at == expiry and h.store.expiries == {p.id: expiry}
    # When re-activated / Then nothing expires any more
    apply_participant_update(h.app, p.id, ParticipantUpdate(status=ParticipantStatus.ACTIVE))
    assert h.store.flows[p.id].expires_at is None and h.store.expiries == {}


def test_other_status_changes_and_no_retention_leave_the_clock_alone() -> None:
    # Given a retention, a participant paused then completed: no clock
    h = memory_harness(settings=Settings(retention_days_after_delete=30))
    p = h.enroll()
    for status in (ParticipantStatus.PAUSED, ParticipantStatus.COMPLETED):
        apply_participant_update(h.app, p.id, ParticipantUpdate(status=status))
    assert h.store.flows[p.id].expires_at is None and h.store.expiries == {}
    # Given no retention configured, a withdrawal: kept for good
    h = memory_harness()
    p = h.enroll()
    apply_participant_update(h.app, p.id, ParticipantUpdate(status=ParticipantStatus.WITHDRAWN))
    assert h.store.flows[p.id].expires_at is None and h.store.expiries == {}
