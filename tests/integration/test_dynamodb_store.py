"""DynamoParticipantRepo and DynamoStateStore against moto (docs/architecture.md#state)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.adapters.aws import AwsClient, LocalResources, aws_client, create_local_resources
from promptpipe.adapters.dynamodb import DynamoParticipantRepo, DynamoStateStore
from promptpipe.adapters.dynamodb_items import encode_token
from promptpipe.adapters.dynamodb_table import PARTICIPANTS_INDEX, TABLE
from promptpipe.errors import ParticipantAlreadyEnrolled, ParticipantNotFound, StateConflict, ValidationFailed
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import FlowState
from promptpipe.models.store import Direction, EventRecord, PartialDelivery, StateCommit, TranscriptEntry
from promptpipe.settings import Settings
from tests.support.table_shape import shape_of

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def pid(n: int) -> str:
    return f"p_{n:032x}"


def phone(n: int) -> str:
    return f"+1555123{n:04d}"


def make_participant(n: int, *, created_at: datetime = T0, phone_number: str | None = None) -> ConversationParticipant:
    return ConversationParticipant(
        id=pid(n),
        phone_number=phone_number or phone(n),
        name=f"Person {n}",
        timezone="America/Toronto",
        enrolled_at=created_at,
        created_at=created_at,
        updated_at=created_at,
    )


def entry(participant_id: str, at: datetime, seq: str, content: str = "hi", **metadata: Any) -> TranscriptEntry:
    return TranscriptEntry(
        participant_id=participant_id,
        at=at,
        seq=seq,
        direction=Direction.INBOUND,
        kind="message",
        content=content,
        event_id=f"evt-{seq}",
        metadata=metadata,
    )


class Env:
    def __init__(self, settings: Settings, resources: LocalResources, client: AwsClient) -> None:
        self.settings = settings
        self.resources = resources
        self.client = client
        self.repo = DynamoParticipantRepo(settings.table_name, client, settings.participants_index_name)
        self.store = DynamoStateStore(settings.table_name, client)
        self.calls: list[str] = []
        client.meta.events.register("before-call.*", self._count)

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls.append(event_name.rsplit(".", 1)[-1])

    def all_items(self) -> list[dict[str, Any]]:
        return self.client.scan(TableName=self.settings.table_name)["Items"]

    def enroll(self, n: int, **kwargs: Any) -> ConversationParticipant:
        participant = make_participant(n, **kwargs)
        self.repo.create(participant, FlowState(participant_id=participant.id, state_data={"k": "v"}))
        return participant

    def commit(self, participant_id: str, expected: int, *entries: TranscriptEntry, **state: str) -> None:
        self.store.commit(
            StateCommit(
                participant_id=participant_id,
                expected_version=expected,
                flow=FlowState(participant_id=participant_id, state_data=dict(state), version=expected + 1),
                transcript=list(entries),
            )
        )


@pytest.fixture
def env(aws: None) -> Iterator[Env]:
    settings = Settings(table_name="pp-test", aws_endpoint_url=None)
    client = aws_client("dynamodb", settings)
    resources = create_local_resources(settings, dynamodb=client)
    yield Env(settings, resources, client)


# --- local resources ---------------------------------------------------------------------------------
def test_local_tables_have_the_designed_shape_and_creation_is_idempotent(env: Env) -> None:
    # When the resources are created a second time
    again = create_local_resources(env.settings, dynamodb=env.client)

    # Then nothing fails and the same names come back
    assert again == env.resources
    # And the table has the declared shape, the one the CDK stack builds too (tests/infra/test_table_shape.py)
    table = env.client.describe_table(TableName="pp-test")["Table"]
    ttl = env.client.describe_time_to_live(TableName="pp-test")["TimeToLiveDescription"]
    assert ttl["TimeToLiveStatus"] == "ENABLED"
    assert shape_of(table, ttl_attribute=ttl["AttributeName"]) == TABLE.canonical()
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    # The literal names the stored items and the API's tokens rely on
    assert TABLE.key_names == ("pk", "sk") and TABLE.ttl_attribute == "expires_at"
    assert [k["AttributeName"] for k in table["GlobalSecondaryIndexes"][0]["KeySchema"]] == ["gsi1pk", "gsi1sk"]
    assert env.settings.participants_index_name == PARTICIPANTS_INDEX.name == "gsi1"
    # One table: the event records on the state item replaced a separate idempotency table
    assert env.client.list_tables()["TableNames"] == ["pp-test"]


# --- ParticipantRepo ---------------------------------------------------------------------------------
def test_create_writes_participant_claim_and_flow_in_one_transaction(env: Env) -> None:
    # Given a new participant
    participant = make_participant(1)

    # When it is created
    env.repo.create(participant, FlowState(participant_id=participant.id, state_data={"k": "v"}))

    # Then one transaction wrote the three items
    assert env.calls[-1] == "TransactWriteItems"
    keys = sorted((i["pk"]["S"], i["sk"]["S"]) for i in env.all_items())
    assert keys == [
        (f"PARTICIPANT#{pid(1)}", "FLOW#conversation"),
        (f"PARTICIPANT#{pid(1)}", "META"),
        (f"PHONE#{phone(1)}", "PHONE"),
    ]
    assert env.repo.get(pid(1)) == participant
    assert env.repo.find_id_by_phone(phone(1)) == pid(1)
    assert env.repo.find_id_by_phone(phone(2)) is None
    meta = next(i for i in env.all_items() if i["sk"]["S"] == "META")
    assert meta["gsi1pk"] == {"S": "PARTICIPANTS"}
    assert meta["gsi1sk"] == {"S": f"2026-03-02T12:00:00.000000Z#{pid(1)}"}
    assert meta["status"] == {"S": "active"}
    assert meta["debug_mode"] == {"BOOL": False}


def test_duplicate_phone_is_a_typed_conflict_and_writes_nothing(env: Env) -> None:
    # Given an enrolled participant
    env.enroll(1)
    before = env.all_items()

    # When another participant claims the same phone
    other = make_participant(2, phone_number=phone(1))
    with pytest.raises(ParticipantAlreadyEnrolled):
        env.repo.create(other, FlowState(participant_id=other.id))

    # Then no second participant exists and nothing was half-written
    with pytest.raises(ParticipantNotFound):
        env.repo.get(pid(2))
    with pytest.raises(ParticipantNotFound):
        env.store.load(pid(2))
    assert env.repo.find_id_by_phone(phone(1)) == pid(1)
    assert sorted(map(str, env.all_items())) == sorted(map(str, before))


def test_get_missing_participant(env: Env) -> None:
    with pytest.raises(ParticipantNotFound):
        env.repo.get(pid(9))


def test_list_pages_newest_first(env: Env) -> None:
    # Given six participants created a second (and a half) apart
    for n in range(6):
        env.enroll(n, created_at=T0 + timedelta(seconds=n * 1.5))

    # When listing two at a time
    pages: list[list[str]] = []
    token: str | None = None
    while True:
        page, token = env.repo.list(limit=2, next_token=token)
        pages.append([p.id for p in page])
        if token is None:
            break

    # Then three full pages, newest first, and no trailing empty page
    assert pages == [[pid(5), pid(4)], [pid(3), pid(2)], [pid(1), pid(0)]]


def test_list_rejects_bad_tokens(env: Env) -> None:
    env.enroll(1)
    wrong_shape = encode_token({"pk": {"S": f"PARTICIPANT#{pid(1)}"}, "sk": {"S": "MSG#x"}})
    for token in ("garbage!", "", "e30", wrong_shape, "x" * 5000):
        with pytest.raises(ValidationFailed) as info:
            env.repo.list(limit=2, next_token=token)
        assert info.value.field == "next_token"
    with pytest.raises(ValidationFailed):
        env.repo.list(limit=0, next_token=None)


def test_update_replaces_fields_but_not_the_phone(env: Env) -> None:
    # Given an enrolled participant
    participant = env.enroll(1)

    # When it is updated
    changed = participant.model_copy(
        update={"name": "New", "status": ParticipantStatus.PAUSED, "updated_at": T0 + timedelta(hours=1)}
    )
    env.repo.update(changed)

    # Then the change is read back and the listing key is kept
    assert env.repo.get(pid(1)) == changed
    assert [p.id for p in env.repo.list(limit=5, next_token=None)[0]] == [pid(1)]

    # And a phone change or a missing participant is refused
    with pytest.raises(ValidationFailed) as info:
        env.repo.update(changed.model_copy(update={"phone_number": phone(7)}))
    assert info.value.field == "phone_number"
    with pytest.raises(ParticipantNotFound):
        env.repo.update(make_participant(2))
    with pytest.raises(ParticipantNotFound):
        env.repo.get(pid(2))


@pytest.mark.parametrize("keep_transcript", [True, False])
def test_delete_removes_participant_claim_flow_and_optionally_the_transcript(env: Env, keep_transcript: bool) -> None:
    # Given a participant with a transcript longer than one batch, and a neighbour
    env.enroll(1)
    env.enroll(2)
    entries = [entry(pid(1), T0 + timedelta(seconds=i), f"s{i}") for i in range(30)]
    env.commit(pid(1), 0, *entries)
    env.commit(pid(2), 0, entry(pid(2), T0, "n"))

    # When it is deleted
    env.repo.delete(pid(1), keep_transcript=keep_transcript)

    # Then participant, claim and flow are gone; the transcript only if not kept
    with pytest.raises(ParticipantNotFound):
        env.repo.get(pid(1))
    with pytest.raises(ParticipantNotFound):
        env.store.load(pid(1))
    assert env.repo.find_id_by_phone(phone(1)) is None
    kept, _ = env.store.list_transcript(pid(1), limit=100, next_token=None)
    assert len(kept) == (30 if keep_transcript else 0)
    remaining = {(i["pk"]["S"], i["sk"]["S"]) for i in env.all_items() if i["pk"]["S"].endswith(pid(1))}
    assert all(sk.startswith("MSG#") for _, sk in remaining)

    # And the neighbour is untouched, and the phone can be enrolled again
    assert env.store.load(pid(2)).flow.version == 1
    assert len(env.store.list_transcript(pid(2), limit=10, next_token=None)[0]) == 1
    env.enroll(3, phone_number=phone(1))
    assert env.repo.find_id_by_phone(phone(1)) == pid(3)


def test_delete_missing_participant(env: Env) -> None:
    with pytest.raises(ParticipantNotFound):
        env.repo.delete(pid(1), keep_transcript=False)


# --- StateStore --------------------------------------------------------------------------------------
def test_load_is_exactly_one_query_and_never_reads_the_transcript(env: Env) -> None:
    # Given a participant with a transcript
    participant = env.enroll(1)
    env.commit(pid(1), 0, *[entry(pid(1), T0 + timedelta(seconds=i), f"s{i}") for i in range(5)], k="v2")
    queried: list[int] = []
    env.client.meta.events.register(
        "after-call.dynamodb.Query", lambda parsed, **_: queried.append(len(parsed["Items"]))
    )
    env.calls.clear()

    # When the state is loaded
    loaded = env.store.load(pid(1))

    # Then one Query read META and FLOW only
    assert env.calls == ["Query"]
    assert queried == [2]
    assert loaded.participant == participant
    assert loaded.flow.version == 1
    assert loaded.flow.state_data == {"k": "v2"}


def test_load_without_flow_item_gives_version_zero(env: Env) -> None:
    # Given a participant whose flow item is missing
    env.enroll(1)
    env.client.delete_item(
        TableName="pp-test", Key={"pk": {"S": f"PARTICIPANT#{pid(1)}"}, "sk": {"S": "FLOW#conversation"}}
    )

    # When loaded, then a fresh flow state at version 0 comes back, and it can be committed
    loaded = env.store.load(pid(1))
    assert loaded.flow == FlowState(participant_id=pid(1))
    assert loaded.recent_events == []
    env.commit(pid(1), 0, k="first")
    assert env.store.load(pid(1)).flow.version == 1


def test_commit_bumps_version_and_persists_everything(env: Env) -> None:
    # Given an enrolled participant at version 0
    participant = env.enroll(1)
    record = EventRecord(
        event_id="SM1",
        committed_at=T0,
        outbound=[OutboundMessage(participant_id=pid(1), to=phone(1), body="Hello!", kind=OutboundKind.GREETING)],
    )
    changed = participant.model_copy(update={"timezone": "Europe/Paris"})
    env.calls.clear()

    # When a turn commits
    env.store.commit(
        StateCommit(
            participant_id=pid(1),
            expected_version=0,
            flow=FlowState(
                participant_id=pid(1),
                current_state="CONVERSATION_ACTIVE",
                state_data={"conversationState": "INTAKE", "empty": ""},
                version=1,
                updated_at=T0,
            ),
            participant=changed,
            recent_events=[record],
            transcript=[entry(pid(1), T0, "SM1-0", "hey"), entry(pid(1), T0, "SM1-1", "Hello!")],
        )
    )

    # Then it was one transaction and everything reads back
    assert env.calls == ["TransactWriteItems"]
    loaded = env.store.load(pid(1))
    assert loaded.flow.version == 1
    assert loaded.flow.state_data == {"conversationState": "INTAKE", "empty": ""}
    assert loaded.flow.updated_at == T0
    assert loaded.recent_events == [record]
    assert loaded.participant == changed
    transcript, token = env.store.list_transcript(pid(1), limit=10, next_token=None)
    assert [e.content for e in transcript] == ["hey", "Hello!"]
    assert token is None
    flow_raw = next(i for i in env.all_items() if i["sk"]["S"] == "FLOW#conversation")
    assert flow_raw["version"] == {"N": "1"}
    assert flow_raw["state_data"]["M"]["conversationState"] == {"S": "INTAKE"}
    assert json.loads(flow_raw["recent_events"]["S"])[0]["event_id"] == "SM1"

    # And the next commit goes from 1 to 2
    env.commit(pid(1), 1, k="again")
    assert env.store.load(pid(1)).flow.version == 2


def test_stale_commit_is_a_conflict_and_writes_nothing(env: Env) -> None:
    # Given a participant already moved to version 1
    env.enroll(1)
    env.commit(pid(1), 0, entry(pid(1), T0, "a"), k="winner")
    before = env.all_items()

    # When a commit based on version 0 arrives, also changing the participant
    stale = StateCommit(
        participant_id=pid(1),
        expected_version=0,
        flow=FlowState(participant_id=pid(1), state_data={"k": "loser"}, version=1),
        participant=make_participant(1).model_copy(update={"name": "Loser"}),
        transcript=[entry(pid(1), T0 + timedelta(seconds=1), "b")],
    )
    with pytest.raises(StateConflict):
        env.store.commit(stale)

    # Then nothing of it was written
    assert sorted(map(str, env.all_items())) == sorted(map(str, before))
    assert env.store.load(pid(1)).flow.state_data == {"k": "winner"}


def test_commit_after_delete_is_participant_not_found(env: Env) -> None:
    # Given a participant loaded at version 1, then deleted
    env.enroll(1)
    env.commit(pid(1), 0, k="v")
    env.repo.delete(pid(1), keep_transcript=False)

    # When its turn commits
    with pytest.raises(ParticipantNotFound):
        env.commit(pid(1), 1, entry(pid(1), T0, "late"), k="late")

    # Then the flow item is not resurrected and no transcript appears
    assert env.all_items() == []

    # And the same holds for a commit that also writes the participant
    with pytest.raises(ParticipantNotFound):
        env.store.commit(
            StateCommit(
                participant_id=pid(1),
                expected_version=1,
                flow=FlowState(participant_id=pid(1), version=2),
                participant=make_participant(1),
            )
        )
    assert env.all_items() == []


def test_commit_rejects_oversized_and_inconsistent_commits(env: Env) -> None:
    env.enroll(1)
    too_many = [entry(pid(1), T0, f"s{i}") for i in range(94)]
    with pytest.raises(ValueError, match="at most 95"):
        env.commit(pid(1), 0, *too_many)
    with pytest.raises(ValueError, match="share"):
        env.commit(pid(1), 0, entry(pid(1), T0, "same"), entry(pid(1), T0, "same"))
    with pytest.raises(ValueError, match="expected_version"):
        env.store.commit(StateCommit(participant_id=pid(1), expected_version=0, flow=FlowState(participant_id=pid(1))))
    assert env.calls.count("TransactWriteItems") == 1  # only the enrollment
    # 93 entries (95 items with FLOW and META) is the limit that passes
    env.commit(pid(1), 0, *too_many[:93])
    assert len(env.store.list_transcript(pid(1), limit=100, next_token=None)[0]) == 93


def test_transcript_is_oldest_first_and_paginates(env: Env) -> None:
    # Given entries committed out of order, with sub-second times that RFC3339 would mis-sort
    env.enroll(1)
    times = [T0 + timedelta(seconds=1), T0, T0 + timedelta(milliseconds=500), T0 + timedelta(minutes=5), T0]
    seqs = ["c", "a", "b", "e", "a2"]
    env.commit(pid(1), 0, *[entry(pid(1), t, s, s) for t, s in zip(times, seqs, strict=True)])

    # When read two at a time
    seen: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        page, token = env.store.list_transcript(pid(1), limit=2, next_token=token)
        seen += [e.seq for e in page]
        pages += 1
        if token is None:
            break

    # Then oldest first (ties by seq), in three pages
    assert seen == ["a", "a2", "b", "c", "e"]
    assert pages == 3
    first = env.store.list_transcript(pid(1), limit=1, next_token=None)[0][0]
    assert first.at == T0
    assert first.direction is Direction.INBOUND
    assert first.event_id == "evt-a"


def test_transcript_token_of_another_participant_is_refused(env: Env) -> None:
    env.enroll(1)
    env.enroll(2)
    env.commit(pid(1), 0, entry(pid(1), T0, "a"), entry(pid(1), T0, "b"))
    _, token = env.store.list_transcript(pid(1), limit=1, next_token=None)
    assert token is not None
    with pytest.raises(ValidationFailed) as info:
        env.store.list_transcript(pid(2), limit=1, next_token=token)
    assert info.value.field == "next_token"
    bogus = base64.urlsafe_b64encode(b"[1,2]").decode()
    with pytest.raises(ValidationFailed):
        env.store.list_transcript(pid(1), limit=1, next_token=bogus)


def test_metadata_with_floats_and_nested_dicts_round_trips(env: Env) -> None:
    env.enroll(1)
    metadata = {
        "module": "coordinator",
        "temperature": 0.1,
        "durations": {"llm_ms": 812.5, "total_s": 1.25e-3},
        "tool_calls": [{"name": "save_profile", "args": {"x": 1, "ok": True, "none": None}}],
    }
    env.commit(pid(1), 0, entry(pid(1), T0, "m", **metadata))
    (read,) = env.store.list_transcript(pid(1), limit=5, next_token=None)[0]
    assert read.metadata == metadata
    raw = next(i for i in env.all_items() if i["sk"]["S"].startswith("MSG#"))
    assert "S" in raw["metadata"]


def test_sent_ledger_lives_in_the_participants_partition_outside_the_state_query(env: Env) -> None:
    # Given an enrolled participant and the DynamoDB ledger on the main table
    from promptpipe.adapters.sent_ledger import DynamoSentLedger

    participant = make_participant(1)
    env.repo.create(participant, FlowState(participant_id=participant.id))
    ledger = DynamoSentLedger(env.settings.table_name, env.client)
    # When an event's failure is recorded after one of its messages went out (and another's before any)
    ledger.record_partial(participant.id, "ev", PartialDelivery(sent=["ev#0"]))
    ledger.record_partial(participant.id, "ev2", PartialDelivery())
    # Then exactly that comes back; an event with no record reads as None
    assert ledger.partial(participant.id, "ev") == {"ev#0"}
    assert ledger.partial(participant.id, "ev2") == set()
    assert ledger.partial(participant.id, "other") is None
    # And the state load (one Query) does not read the ledger items; they expire through the TTL
    loaded = env.store.load(participant.id)
    assert loaded.participant.id == participant.id
    item = env.client.get_item(
        TableName="pp-test", Key={"pk": {"S": f"PARTICIPANT#{participant.id}"}, "sk": {"S": "SENT#ev"}}
    )["Item"]
    assert int(item["expires_at"]["N"]) > 0


def test_with_a_retention_a_kept_transcript_expires_after_the_retention_days(env: Env) -> None:
    # Given a repository keeping deleted participants' transcripts for 30 days
    deleted_at = T0 + timedelta(days=10)
    repo = DynamoParticipantRepo(
        env.settings.table_name, env.client, retention=timedelta(days=30), now=lambda: deleted_at
    )
    env.enroll(1)
    env.enroll(2)
    env.commit(pid(1), 0, *[entry(pid(1), T0 + timedelta(seconds=i), f"s{i}") for i in range(30)])
    env.commit(pid(2), 0, entry(pid(2), T0, "n"))

    # When the participant is deleted keeping the transcript
    repo.delete(pid(1), keep_transcript=True)

    # Then every remaining item of theirs carries the TTL: 30 days after the deletion
    expected = str(int((deleted_at + timedelta(days=30)).timestamp()))
    mine = [i for i in env.all_items() if i["pk"]["S"].endswith(pid(1))]
    assert len(mine) == 30
    assert {i["expires_at"]["N"] for i in mine} == {expected}
    kept, _ = env.store.list_transcript(pid(1), limit=100, next_token=None)
    assert [e.content for e in kept] == ["hi"] * 30  # still readable until DynamoDB removes them
    # and the neighbour's items carry none
    assert all("expires_at" not in i for i in env.all_items() if i["pk"]["S"].endswith(pid(2)))


def test_with_a_retention_a_sent_ledger_record_keeps_its_sooner_expiry(env: Env) -> None:
    # Given a participant with a sent-ledger record (expiring within a day) and a 30-day retention
    from promptpipe.adapters.sent_ledger import DynamoSentLedger

    # (the ledger stamps its expiry from the wall clock, so the deletion happens "now" too)
    deleted_at = datetime.now(UTC)
    repo = DynamoParticipantRepo(
        env.settings.table_name, env.client, retention=timedelta(days=30), now=lambda: deleted_at
    )
    env.enroll(1)
    env.commit(pid(1), 0, entry(pid(1), T0, "s0"))
    DynamoSentLedger(env.settings.table_name, env.client).record_partial(pid(1), "ev", PartialDelivery(sent=["ev#0"]))
    key = {"pk": {"S": f"PARTICIPANT#{pid(1)}"}, "sk": {"S": "SENT#ev"}}
    before = env.client.get_item(TableName="pp-test", Key=key)["Item"]["expires_at"]["N"]

    # When the participant is deleted keeping the transcript
    repo.delete(pid(1), keep_transcript=True)

    # Then the ledger record keeps its own (sooner) expiry; the transcript gets the retention's
    assert env.client.get_item(TableName="pp-test", Key=key)["Item"]["expires_at"]["N"] == before
    messages = [i for i in env.all_items() if i["pk"]["S"].endswith(pid(1)) and i["sk"]["S"].startswith("MSG#")]
    assert {i["expires_at"]["N"] for i in messages} == {str(int((deleted_at + timedelta(days=30)).timestamp()))}
    assert int(before) < int((deleted_at + timedelta(days=30)).timestamp())


def test_with_a_retention_keep_transcript_false_still_erases_at_once(env: Env) -> None:
    repo = DynamoParticipantRepo(env.settings.table_name, env.client, retention=timedelta(days=30), now=lambda: T0)
    env.enroll(1)
    env.commit(pid(1), 0, *[entry(pid(1), T0 + timedelta(seconds=i), f"s{i}") for i in range(5)])
    repo.delete(pid(1), keep_transcript=False)
    assert [i for i in env.all_items() if i["pk"]["S"].endswith(pid(1))] == []


def test_without_a_retention_a_kept_transcript_never_expires(env: Env) -> None:
    env.enroll(1)
    env.commit(pid(1), 0, entry(pid(1), T0, "s0"))
    env.repo.delete(pid(1), keep_transcript=True)
    assert all("expires_at" not in i for i in env.all_items() if i["pk"]["S"].endswith(pid(1)))
