"""The items of the main table: their keys, and the mapping between them and the models
(docs/architecture.md#state). The table's own shape (key attributes, the participants index, the
TTL attribute) is ``promptpipe.adapters.dynamodb_table``.

| item            | pk                   | sk                              | written by (adapters.)   |
|-----------------|----------------------|---------------------------------|--------------------------|
| participant     | ``PARTICIPANT#{id}`` | ``META`` (+ gsi1pk/gsi1sk)      | dynamodb                 |
| phone claim     | ``PHONE#{e164}``     | ``PHONE``                       | dynamodb, phone_claims   |
| flow state      | ``PARTICIPANT#{id}`` | ``FLOW#conversation``           | dynamodb, phone_claims   |
| transcript      | ``PARTICIPANT#{id}`` | ``MSG#{utc iso}#{seq}``         | dynamodb                 |
| sent ledger     | ``PARTICIPANT#{id}`` | ``SENT#{event id}`` (with TTL)  | sent_ledger              |
| event id        | ``PARTICIPANT#{id}`` | ``EVENT#{event id}`` (with TTL) | dynamodb                 |
| pending effects | ``PARTICIPANT#{id}`` | ``FLOW#conversation#pending``   | after_commit             |
| needs a person  | ``PARTICIPANT#{id}`` | ``FLOW#conversation#held``      | dynamodb_commit          |
| flow definition | ``FLOW#{flow id}``   | ``V#{version:06d}``, ``LATEST`` | dynamodb_flows           |
| study decision  | ``PARTICIPANT#{id}`` | ``DECISION#{day:05d}#{point}``  | dynamodb, dynamodb_decisions |
| audit record    | ``AUDIT#study``      | ``{participant id}#{time}#{id}`` | dynamodb_audit           |

The state Query reads a participant's partition from ``FLOW#`` to ``META`` only: the event ids
(``EVENT#``) sort before it, the transcript (``MSG#``) and the ledger (``SENT#``) after it, so it
never grows with them; the pending-effects marker sorts inside it (read with the state at no extra
call) and carries ``gsi1pk = PENDING_EFFECTS``, so the sweep finds every marker with one Query on
the index. A study decision (docs/studies.md#the-decision-record) sorts before ``FLOW#`` too, and
carries ``gsi1pk = DECISIONS#{study id}``, ``gsi1sk = {participant id}#{day:05d}#{point}``: a study's
record is one paginated Query of the index, in (participant, day, point) order. The needs-a-person
marker (docs/console.md, "Nobody missed") sorts inside the state range too (the commit knows whether
it is there at no extra call) and carries ``gsi1pk = NEEDS_PERSON``, ``gsi1sk = {hold start}#{id}``:
the console's queue is one Query of the index, the longest wait first. Values are strings,
ints, bools and string maps only, so no float (and no ``Decimal``) ever crosses the boundary; free-form data (transcript
metadata, recent events) is stored as JSON strings. Nothing here performs I/O.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from pydantic import ConfigDict, TypeAdapter
from pydantic_core import to_json

from promptpipe.adapters import dynamodb_table as table
from promptpipe.errors import ValidationFailed
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.safety import NeedsPerson
from promptpipe.models.state import FLOW_TYPE, FlowState
from promptpipe.models.store import (
    RECEIPT_ORDER,
    DeliveryOutcome,
    Direction,
    EventClaim,
    EventRecord,
    TranscriptEntry,
)
from promptpipe.rules.clock import parse_rfc3339, to_rfc3339

PARTICIPANT_PREFIX = "PARTICIPANT#"
PHONE_PREFIX = "PHONE#"
META_SK = "META"
PHONE_SK = "PHONE"
FLOW_SK_PREFIX = "FLOW#"
FLOW_SK = f"{FLOW_SK_PREFIX}{FLOW_TYPE}"
MSG_SK_PREFIX = "MSG#"
SENT_SK_PREFIX = "SENT#"
EVENT_SK_PREFIX = "EVENT#"
PENDING_EFFECTS_SK = f"{FLOW_SK}#pending"
PARTICIPANTS_GSI_PK = "PARTICIPANTS"
NEEDS_PERSON_SK = f"{FLOW_SK}#held"
NEEDS_PERSON_GSI_PK = "NEEDS_PERSON"
PENDING_EFFECTS_GSI_PK = "PENDING_EFFECTS"
FLOW_DEFINITION_PREFIX = "FLOW#"
FLOW_VERSION_SK_PREFIX = "V#"
FLOW_LATEST_SK = "LATEST"
DECISION_SK_PREFIX = "DECISION#"
DECISIONS_GSI_PREFIX = "DECISIONS#"

PK, SK = table.PK.name, table.SK.name
# A transcript entry's ``state`` (an inbound message not answered yet): the commit may rewrite only
# entries that carry it (``dynamodb_commit``).
INBOUND_STATE = "state"
# A provider's later receipt on an outbound entry (``DeliveryOutcome.receipt``), its time and rank.
RECEIPT = "receipt"
RECEIPT_AT = "receipt_at"
RECEIPT_RANK = "receipt_rank"
# The pointer from a provider's message id to its transcript entry (sorts after META: outside the
# range the state Query reads).
PROVIDER_MESSAGE_SK_PREFIX = "PMSG#"
GSI_PK, GSI_SK = table.GSI1PK.name, table.GSI1SK.name
# The attributes of a participant item that are keys, not fields of the model.
KEY_ATTRIBUTES = frozenset({PK, SK, GSI_PK, GSI_SK})

_MAX_TOKEN_CHARS = 2048
_EVENT_RECORDS = TypeAdapter(list[EventRecord], config=ConfigDict(defer_build=True))

Item = dict[str, dict[str, Any]]


# --- keys --------------------------------------------------------------------------------------------
def participant_pk(participant_id: str) -> str:
    return f"{PARTICIPANT_PREFIX}{participant_id}"


def phone_pk(phone_number: str) -> str:
    return f"{PHONE_PREFIX}{phone_number}"


def key(pk: str, sk: str) -> Item:
    """The primary key of an item."""
    return {PK: {"S": pk}, SK: {"S": sk}}


def meta_key(participant_id: str) -> Item:
    return key(participant_pk(participant_id), META_SK)


def flow_key(participant_id: str) -> Item:
    return key(participant_pk(participant_id), FLOW_SK)


def phone_claim_key(phone_number: str) -> Item:
    return key(phone_pk(phone_number), PHONE_SK)


def sent_key(participant_id: str, event_id: str) -> Item:
    return key(participant_pk(participant_id), f"{SENT_SK_PREFIX}{event_id}")


def event_key(participant_id: str, event_id: str) -> Item:
    return key(participant_pk(participant_id), f"{EVENT_SK_PREFIX}{event_id}")


def pending_effects_key(participant_id: str) -> Item:
    return key(participant_pk(participant_id), PENDING_EFFECTS_SK)


def pending_effects_token(items_by_sk: dict[str, Item]) -> str | None:
    """The marker's token among the items of the state Query, if there is one."""
    item = items_by_sk.get(PENDING_EFFECTS_SK)
    return str(item["token"]["S"]) if item and "token" in item else None


def needs_person_key(participant_id: str) -> Item:
    return key(participant_pk(participant_id), NEEDS_PERSON_SK)


def needs_person_item(entry: NeedsPerson) -> Item:
    """The marker of a participant in the needs-a-person queue: indexed by the hold's start (an
    unknown start, the controller's own hold, after every dated one)."""
    started = sortable_timestamp(entry.since) if entry.since is not None else "~"
    item: Item = {
        **needs_person_key(entry.participant_id),
        GSI_PK: _s(NEEDS_PERSON_GSI_PK),
        GSI_SK: _s(f"{started}#{entry.participant_id}"),
        "participant_id": _s(entry.participant_id),
        "name": _s(entry.name),
        "reason": _s(entry.reason.value),
        "detail": _s(entry.detail),
        "alert_pending": {"BOOL": entry.alert_pending},
    }
    if entry.since is not None:
        item["since"] = _s(to_rfc3339(entry.since))
    return item


def needs_person_from_item(item: Item | None) -> NeedsPerson | None:
    if item is None:
        return None
    since = item.get("since", {}).get("S")
    return NeedsPerson(
        participant_id=item["participant_id"]["S"],
        name=item.get("name", {}).get("S", ""),
        reason=item["reason"]["S"],
        since=parse_rfc3339(since) if since else None,
        detail=item.get("detail", {}).get("S", ""),
        alert_pending=bool(item.get("alert_pending", {}).get("BOOL", False)),
    )


def decision_key(participant_id: str, decision_point: str, study_day: int) -> Item:
    return key(participant_pk(participant_id), f"{DECISION_SK_PREFIX}{study_day:05d}#{decision_point}")


def decision_item(record: DecisionRecord) -> Item:
    """A study decision: the record as JSON (its probabilities are floats, which never cross the
    boundary as numbers), keyed in the participant's partition and listed by study on the index."""
    return decision_key(record.participant_id, record.decision_point, record.study_day) | {
        GSI_PK: {"S": f"{DECISIONS_GSI_PREFIX}{record.study_id}"},
        GSI_SK: {"S": f"{record.participant_id}#{record.study_day:05d}#{record.decision_point}"},
        "record": {"S": record.model_dump_json()},
    }


def decision_from_item(item: Item) -> DecisionRecord:
    return DecisionRecord.model_validate_json(item["record"]["S"])


def flow_definition_pk(flow_id: str) -> str:
    return f"{FLOW_DEFINITION_PREFIX}{flow_id}"


def flow_version_sk(version: int) -> str:
    return f"{FLOW_VERSION_SK_PREFIX}{version:06d}"


def expires_at(at: datetime | int) -> Item:
    """The TTL attribute: DynamoDB deletes the item after ``at`` (epoch seconds)."""
    seconds = at if isinstance(at, int) else int(at.timestamp())
    return {table.TTL_ATTRIBUTE: {"N": str(seconds)}}


def sortable_timestamp(instant: datetime) -> str:
    """Fixed-width UTC ISO with microseconds and ``Z``: sorts lexically in time order (RFC3339 with
    optional fractions does not: ``…:00.5Z`` < ``…:00Z``). Naive datetimes are taken as UTC."""
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def transcript_sk(entry: TranscriptEntry) -> str:
    return f"{MSG_SK_PREFIX}{sortable_timestamp(entry.at)}#{entry.seq}"


def _s(value: str) -> dict[str, Any]:
    return {"S": value}


def to_attribute(value: Any) -> dict[str, Any]:
    """One Python value as a DynamoDB attribute value. Floats are refused on purpose."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):  # before int: bool is an int
        return {"BOOL": value}
    if isinstance(value, Enum):
        return to_attribute(value.value)
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, datetime):
        return {"S": sortable_timestamp(value)}
    if isinstance(value, dict):
        return {"M": {str(k): to_attribute(v) for k, v in value.items()}}
    if isinstance(value, list | tuple):
        return {"L": [to_attribute(v) for v in value]}
    raise TypeError(f"cannot store a {type(value).__name__} in DynamoDB (store it as a JSON string)")


def from_attribute(attribute: dict[str, Any]) -> Any:
    """The inverse of ``to_attribute``."""
    (kind, value), *_ = attribute.items()
    if kind == "S":
        return value
    if kind == "N":
        return int(value)
    if kind == "BOOL":
        return bool(value)
    if kind == "NULL":
        return None
    if kind == "M":
        return {k: from_attribute(v) for k, v in value.items()}
    if kind == "L":
        return [from_attribute(v) for v in value]
    raise TypeError(f"unsupported DynamoDB attribute type {kind}")


# --- items ---------------------------------------------------------------------------------------------
def participant_item(participant: ConversationParticipant) -> Item:
    item: Item = {
        **meta_key(participant.id),
        GSI_PK: _s(PARTICIPANTS_GSI_PK),
        GSI_SK: _s(f"{sortable_timestamp(participant.created_at)}#{participant.id}"),
    }
    for name, value in participant.model_dump().items():
        item[name] = to_attribute(value)
    return item


def participant_from_item(item: Item) -> ConversationParticipant:
    fields = {k: from_attribute(v) for k, v in item.items() if k not in KEY_ATTRIBUTES}
    return ConversationParticipant.model_validate(fields)


def phone_claim_item(phone_number: str, participant_id: str, enrollment: str | None = None) -> Item:
    """``enrollment``: the fingerprint of the enrolment request that claimed the number, so that a
    retry of that same request is recognised (``Participants.enroll``)."""
    item = {**phone_claim_key(phone_number), "participant_id": _s(participant_id)}
    if enrollment:
        item["enrollment"] = _s(enrollment)
    return item


def flow_item(flow: FlowState, recent_events: list[EventRecord]) -> Item:
    item: Item = {
        **key(participant_pk(flow.participant_id), f"{FLOW_SK_PREFIX}{flow.flow_type}"),
        "flow_type": _s(flow.flow_type),
        "current_state": _s(flow.current_state),
        "state_data": {"M": {k: _s(v) for k, v in flow.state_data.items()}},
        "version": {"N": str(flow.version)},
        "recent_events": _s(_EVENT_RECORDS.dump_json(recent_events).decode()),
    }
    if flow.updated_at is not None:
        item["updated_at"] = _s(sortable_timestamp(flow.updated_at))
    if flow.expires_at is not None:
        item.update(expires_at(flow.expires_at))
    return item


def flow_from_item(participant_id: str, item: Item) -> tuple[FlowState, list[EventRecord]]:
    updated_at = item.get("updated_at")
    ttl = item.get(table.TTL_ATTRIBUTE, {}).get("N")
    flow = FlowState(
        participant_id=participant_id,
        flow_type=item["flow_type"]["S"],
        current_state=item["current_state"]["S"],
        state_data={k: v["S"] for k, v in item.get("state_data", {"M": {}})["M"].items()},
        version=int(item["version"]["N"]),
        updated_at=updated_at["S"] if updated_at and "S" in updated_at else None,
        expires_at=datetime.fromtimestamp(int(ttl), UTC) if ttl else None,
    )
    raw_events = item.get("recent_events", {}).get("S") or "[]"
    return flow, _EVENT_RECORDS.validate_json(raw_events)


def event_claim_item(participant_id: str, claim: EventClaim) -> Item:
    """The claimed event id: key, when it was committed, and its expiry (TTL)."""
    return {
        **event_key(participant_id, claim.event_id),
        "committed_at": _s(sortable_timestamp(claim.committed_at)),
        **expires_at(claim.expires_at),
    }


def transcript_item(entry: TranscriptEntry) -> Item:
    return (
        {
            **key(participant_pk(entry.participant_id), transcript_sk(entry)),
            "at": _s(sortable_timestamp(entry.at)),
            "seq": _s(entry.seq),
            "direction": _s(entry.direction.value),
            "kind": _s(entry.kind),
            "content": _s(entry.content),
            "event_id": _s(entry.event_id),
            # JSON: metadata holds floats (durations, temperatures) that DynamoDB would want as Decimal.
            "metadata": _s(to_json(entry.metadata).decode()),
        }
        | ({"outbound": _s(entry.outbound.model_dump_json(exclude_none=True))} if entry.outbound else {})
        | ({"delivery": delivery_attribute(entry.delivery)} if entry.delivery else {})
        | ({INBOUND_STATE: _s(entry.state)} if entry.state else {})
    )


def delivery_attribute(outcome: DeliveryOutcome) -> dict[str, Any]:
    # The receipt has attributes of its own (``RECEIPT``), written only by the provider's report.
    return _s(outcome.model_dump_json(exclude_defaults=True, exclude={"receipt", "receipt_at"}))


def provider_message_key(participant_id: str, provider_id: str) -> Item:
    """The pointer from a provider's message id to the transcript entry that sent it, in the
    participant's partition (written with the outcome, read by a delivery report:
    ``after_commit.DynamoDeliveryLog``; erased with the participant)."""
    return key(participant_pk(participant_id), f"{PROVIDER_MESSAGE_SK_PREFIX}{provider_id}")


def transcript_from_item(item: Item) -> TranscriptEntry:
    return TranscriptEntry(
        participant_id=item[PK]["S"].removeprefix(PARTICIPANT_PREFIX),
        at=item["at"]["S"],
        seq=item["seq"]["S"],
        direction=Direction(item["direction"]["S"]),
        kind=item["kind"]["S"],
        content=item["content"]["S"],
        event_id=item.get("event_id", {}).get("S", ""),
        metadata=json.loads(item.get("metadata", {}).get("S") or "{}"),
        outbound=OutboundMessage.model_validate_json(item["outbound"]["S"]) if "outbound" in item else None,
        delivery=_delivery_from_item(item),
        state=item.get(INBOUND_STATE, {}).get("S", ""),
    )


def _delivery_from_item(item: Item) -> DeliveryOutcome | None:
    if "delivery" not in item:
        return None
    outcome = DeliveryOutcome.model_validate_json(item["delivery"]["S"])
    if item.get(RECEIPT, {}).get("S") in RECEIPT_ORDER:
        at = item.get(RECEIPT_AT, {}).get("S")
        update = {"receipt": item[RECEIPT]["S"], "receipt_at": datetime.fromisoformat(at) if at else None}
        outcome = outcome.model_copy(update=update)
    return outcome


# --- queries -----------------------------------------------------------------------------------------
def index_partition_query(table: str, index: str, partition: str) -> dict[str, Any]:
    """A Query of one partition of the participants index (``gsi1pk = partition``): the participants,
    the pending-effects or needs-a-person markers, a study's decisions. The caller adds its filter,
    order and paging."""
    return {
        "TableName": table,
        "IndexName": index,
        "KeyConditionExpression": f"{GSI_PK} = :g",
        "ExpressionAttributeValues": {":g": {"S": partition}},
    }


# --- pagination tokens -------------------------------------------------------------------------------
def encode_token(last_key: Item) -> str:
    """An opaque, URL-safe token for a LastEvaluatedKey whose attributes are all strings."""
    plain = {name: value["S"] for name, value in last_key.items()}
    raw = json.dumps(plain, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_token(token: str, *, keys: frozenset[str], check: Callable[[dict[str, str]], bool]) -> Item:
    """The ExclusiveStartKey of ``token``. Anything malformed, or not a key of this listing (``check``),
    is a ``ValidationFailed`` on ``next_token``."""
    invalid = ValidationFailed("invalid next_token", field="next_token")
    if not token or len(token) > _MAX_TOKEN_CHARS:
        raise invalid
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except ValueError as exc:  # binascii, JSON and Unicode errors are all ValueErrors
        raise invalid from exc
    if (
        not isinstance(data, dict)
        or set(data) != keys
        or not all(isinstance(v, str) and v for v in data.values())
        or not check(data)
    ):
        raise invalid
    return {name: _s(value) for name, value in data.items()}
