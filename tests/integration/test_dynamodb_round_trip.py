"""What the DynamoDB state store writes reads back exactly (moto): ``FlowState.updated_at`` to the
microsecond whatever zone it was written in, and the profile JSON inside ``state_data`` with its own
timestamps (``updated_at``, ``tone_override_until``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from promptpipe.adapters.aws import aws_client, create_local_resources
from promptpipe.adapters.dynamodb import DynamoParticipantRepo, DynamoStateStore
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.profile import UserProfile
from promptpipe.models.state import DataKey, FlowState, StateData
from promptpipe.models.store import StateCommit
from promptpipe.rules.tone import ProfileTone
from promptpipe.settings import Settings

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "c" * 32
TORONTO = ZoneInfo("America/Toronto")
# Microseconds and a non-UTC zone: the two ways a timestamp loses precision on the way to the table.
UPDATED = datetime(2026, 3, 2, 7, 5, 9, 654321, tzinfo=TORONTO)
OVERRIDE_UNTIL = datetime(2026, 3, 3, 9, 0, 0, 1, tzinfo=TORONTO)


@pytest.fixture
def stores(aws: None) -> Iterator[tuple[DynamoParticipantRepo, DynamoStateStore, Any]]:
    settings = Settings(table_name="pp-round-trip", aws_endpoint_url=None)
    client = aws_client("dynamodb", settings)
    create_local_resources(settings, dynamodb=client)
    participant = ConversationParticipant(
        id=PID, phone_number="+15551230099", enrolled_at=T0, created_at=T0, updated_at=T0
    )
    repo = DynamoParticipantRepo(settings.table_name, client, settings.participants_index_name)
    repo.create(participant, FlowState(participant_id=PID, updated_at=UPDATED))
    yield repo, DynamoStateStore(settings.table_name, client), client


def test_flow_updated_at_written_at_enrolment_reads_back_exactly(stores: Any) -> None:
    _, store, client = stores
    loaded = store.load(PID).flow
    assert loaded.updated_at == UPDATED
    # stored as fixed-width UTC, so that it sorts
    raw = client.scan(TableName="pp-round-trip")["Items"]
    flow = next(i for i in raw if i["sk"]["S"].startswith("FLOW#"))
    assert flow["updated_at"] == {"S": "2026-03-02T12:05:09.654321Z"}


def test_a_commit_keeps_updated_at_and_the_profile_timestamps_exactly(stores: Any) -> None:
    _, store, _ = stores
    # Given a commit whose state holds a profile saved at UPDATED with a tone override
    data: dict[str, str] = {}
    profile = UserProfile(
        habit_domain="reading",
        created_at=UPDATED,
        updated_at=UPDATED,
        tone=ProfileTone(tags=["formal"], scores={"formal": 0.9}, version=1, override_until=OVERRIDE_UNTIL),
    )
    StateData(data).set_profile(profile)
    later = UPDATED.replace(microsecond=999999)
    store.commit(
        StateCommit(
            participant_id=PID,
            expected_version=0,
            flow=FlowState(participant_id=PID, state_data=data, version=1, updated_at=later),
        )
    )
    # When it is loaded back
    flow = store.load(PID).flow
    # Then the flow's timestamp and the profile's are the instants written
    assert flow.updated_at == later
    assert flow.state_data == data
    loaded = StateData(flow.state_data).profile()
    assert loaded.updated_at == UPDATED and loaded.created_at == UPDATED
    assert loaded.tone.override_until == OVERRIDE_UNTIL
    assert json.loads(flow.state_data[DataKey.USER_PROFILE.value])["tone"]["tone_override_until"] == (
        "2026-03-03T14:00:00.000001Z"
    )


def test_a_flow_without_updated_at_reads_back_without_one(stores: Any) -> None:
    _, store, _ = stores
    store.commit(StateCommit(participant_id=PID, expected_version=0, flow=FlowState(participant_id=PID, version=1)))
    assert store.load(PID).flow.updated_at is None
