"""Study decisions in DynamoDB (moto): written by the state commit or not at all, read back by
``DynamoDecisionLog``, one row however often the event is delivered (docs/studies.md)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.aws import AwsClient, aws_client, create_local_resources
from promptpipe.adapters.dynamodb import DynamoParticipantRepo, DynamoStateStore
from promptpipe.adapters.dynamodb_decisions import DynamoDecisionLog
from promptpipe.errors import StateConflict
from promptpipe.models.decision import DecisionDelivery, DecisionRecord, ProximalOutcomeValue, decision_id
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState
from promptpipe.models.store import StateCommit
from promptpipe.settings import Settings

T0 = datetime(2026, 3, 2, 14, 30, tzinfo=UTC)
PID = f"p_{1:032x}"


def record(day: int, *, participant_id: str = PID, arm: str | None = "framing_a") -> DecisionRecord:
    return DecisionRecord(
        decision_id=decision_id(participant_id, "daily_prompt", day),
        study_id="example-mrt",
        participant_id=participant_id,
        decision_point="daily_prompt",
        study_day=day,
        decided_at=T0 + timedelta(days=day - 1),
        decided_at_local=(T0 + timedelta(days=day - 1)).astimezone(),
        available=arm is not None,
        probabilities={"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35},
        arm=arm,
        delivery=DecisionDelivery.PENDING if arm else DecisionDelivery.NOT_SENT,
    )


class Env:
    def __init__(self, client: AwsClient, settings: Settings) -> None:
        self.client = client
        self.table = settings.table_name
        self.repo = DynamoParticipantRepo(settings.table_name, client, settings.participants_index_name)
        self.store = DynamoStateStore(settings.table_name, client)
        self.log = DynamoDecisionLog(settings.table_name, client, index_name=settings.participants_index_name)

    def enroll(self, participant_id: str = PID, n: int = 1) -> None:
        participant = ConversationParticipant(
            id=participant_id,
            phone_number=f"+1555123{n:04d}",
            timezone="America/Toronto",
            enrolled_at=T0,
            created_at=T0,
            updated_at=T0,
        )
        self.repo.create(participant, FlowState(participant_id=participant_id))

    def commit(self, expected: int, *decisions: DecisionRecord, participant_id: str = PID) -> None:
        self.store.commit(
            StateCommit(
                participant_id=participant_id,
                expected_version=expected,
                flow=FlowState(participant_id=participant_id, state_data={"v": str(expected)}, version=expected + 1),
                decisions=list(decisions),
            )
        )

    def version(self, participant_id: str = PID) -> int:
        return self.store.load(participant_id).flow.version


@pytest.fixture
def env(aws: None) -> Iterator[Env]:
    settings = Settings(table_name="pp-study", aws_endpoint_url=None)
    client = aws_client("dynamodb", settings)
    create_local_resources(settings, dynamodb=client)
    yield Env(client, settings)


def test_a_decision_lands_with_its_commit_and_reads_back_whole(env: Env) -> None:
    env.enroll()
    env.commit(0, record(1))
    found = env.log.get(decision_id(PID, "daily_prompt", 1))
    assert found == record(1)
    assert found is not None and found.probability == 0.35
    assert env.version() == 1


def test_no_record_without_its_commit_a_lost_version_writes_neither(env: Env) -> None:
    env.enroll()
    env.commit(0)
    with pytest.raises(StateConflict):
        env.commit(0, record(1))  # a stale version: the whole transaction is cancelled
    assert env.log.for_participant(PID) == []
    assert env.version() == 1


def test_a_decision_already_recorded_cancels_the_commit_whole(env: Env) -> None:
    env.enroll()
    env.commit(0, record(1))
    with pytest.raises(StateConflict):
        env.commit(1, record(1, arm="framing_b"))  # never a second row, never an overwrite
    assert [r.arm for r in env.log.for_participant(PID)] == ["framing_a"]
    assert env.version() == 1  # and the state did not move either


def test_all_lists_a_study_in_participant_day_order_and_update_fills_in(env: Env) -> None:
    other = f"p_{2:032x}"
    env.enroll()
    env.enroll(other, 2)
    env.commit(0, record(2), record(1))
    env.commit(0, record(1, participant_id=other, arm=None), participant_id=other)
    assert [(r.participant_id, r.study_day) for r in env.log.all("example-mrt")] == [(PID, 1), (PID, 2), (other, 1)]
    assert env.log.all("another-study") == []
    done = record(1).model_copy(update={"outcome": ProximalOutcomeValue.DONE, "outcome_at": T0})
    env.log.update(done)
    assert env.log.get(done.decision_id) == done
    env.log.update(record(9))  # no decision, no record: an update never creates one
    assert env.log.get(decision_id(PID, "daily_prompt", 9)) is None
    assert env.log.get("not-an-id") is None


def test_the_state_query_never_reads_the_decisions(env: Env) -> None:
    env.enroll()
    env.commit(0, *[record(day) for day in range(1, 6)])
    calls: list[int] = []
    env.client.meta.events.register("after-call.dynamodb.Query", lambda parsed, **_: calls.append(parsed["Count"]))
    env.store.load(PID)
    assert calls == [2]  # the flow state and META only


def test_page_walks_a_study_off_the_index_and_refuses_a_token_of_another(env: Env) -> None:
    from promptpipe.errors import ValidationFailed

    other = f"p_{2:032x}"
    env.enroll()
    env.enroll(other, 2)
    env.commit(0, record(1), record(2), record(3))
    env.commit(0, record(1, participant_id=other), participant_id=other)
    pages: list[list[tuple[str, int]]] = []
    token: str | None = None
    while True:
        found, token = env.log.page("example-mrt", limit=3, next_token=token)
        pages.append([(r.participant_id, r.study_day) for r in found])
        if token is None:
            break
    assert pages == [[(PID, 1), (PID, 2), (PID, 3)], [(other, 1)]]
    assert env.log.page("example-mrt", limit=4) == (env.log.all("example-mrt"), None)  # full, no token
    assert env.log.page("another-study", limit=3) == ([], None)
    _, token = env.log.page("example-mrt", limit=1)
    assert token is not None
    for bad in (token, "not-a-token"):
        with pytest.raises(ValidationFailed):
            env.log.page("another-study", limit=1, next_token=bad)
    with pytest.raises(ValidationFailed):
        env.log.page("example-mrt", limit=0)
