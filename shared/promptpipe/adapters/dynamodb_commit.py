"""A state commit as one ``TransactWriteItems`` (docs/architecture.md#state): its actions, built from
a ``StateCommit`` without I/O. ``DynamoStateStore.commit`` (``adapters/dynamodb.py``) sends them and
maps a cancellation to a domain outcome by the index of the action whose condition failed.
"""

from __future__ import annotations

from typing import Any

from promptpipe.adapters.dynamodb_items import (
    PK,
    SK,
    decision_item,
    event_claim_item,
    expires_at,
    flow_item,
    key,
    meta_key,
    needs_person_item,
    needs_person_key,
    participant_item,
    participant_pk,
    transcript_item,
    transcript_sk,
)
from promptpipe.models.state import FLOW_TYPE
from promptpipe.models.store import StateCommit

# TransactWriteItems allows 100 actions; keep headroom below it.
MAX_COMMIT_ITEMS = 95
# Where each item sits in the transaction (a cancellation names the failed conditions by index).
FLOW_INDEX, META_INDEX, CLAIM_INDEX = 0, 1, 2


def commit_actions(table_name: str, commit: StateCommit) -> list[dict[str, Any]]:
    """The actions of a commit's ``TransactWriteItems``, in this order: the flow state (conditional on
    ``version``), META (written, or checked to exist), the claimed event id (only if new), the study
    decisions and the transcript entries (each only if new), the accepted message's placeholder
    removed, and the needs-a-person marker when it changed."""
    participant_id = commit.participant_id
    if commit.flow.participant_id != participant_id:
        raise ValueError("flow state belongs to another participant")
    if commit.flow.flow_type != FLOW_TYPE:
        raise ValueError(f"unsupported flow type {commit.flow.flow_type!r}")
    if commit.flow.version != commit.expected_version + 1:
        raise ValueError("flow.version must be expected_version + 1")
    if commit.participant is not None and commit.participant.id != participant_id:
        raise ValueError("participant does not match the commit")
    if any(d.participant_id != participant_id for d in commit.decisions):
        raise ValueError("decision belongs to another participant")
    if any(entry.participant_id != participant_id for entry in commit.transcript):
        raise ValueError("transcript entry belongs to another participant")
    extra = (commit.claim is not None) + (commit.accepted is not None) + len(commit.decisions)
    extra += commit.needs_person_changed
    if 2 + extra + len(commit.transcript) > MAX_COMMIT_ITEMS:
        raise ValueError(f"a commit holds at most {MAX_COMMIT_ITEMS} items")
    # A withdrawn participant's items expire together (docs/retention.md): what this commit
    # writes carries the flow state's expiry, as the flow item does.
    ttl = expires_at(commit.flow.expires_at) if commit.flow.expires_at else {}
    transcript_items = [transcript_item(entry) | ttl for entry in commit.transcript]
    if len({item[SK]["S"] for item in transcript_items}) != len(transcript_items):
        raise ValueError("two transcript entries share a timestamp and seq")

    actions: list[dict[str, Any]] = [
        {
            "Put": {
                "TableName": table_name,
                "Item": flow_item(commit.flow, commit.recent_events),
                # A flow item may not exist yet (version 0): both cases in one condition.
                "ConditionExpression": f"attribute_not_exists({PK}) OR #v = :expected",
                "ExpressionAttributeNames": {"#v": "version"},
                "ExpressionAttributeValues": {":expected": {"N": str(commit.expected_version)}},
            }
        }
    ]
    if commit.participant is not None:
        actions.append(
            {
                "Put": {
                    "TableName": table_name,
                    "Item": participant_item(commit.participant) | ttl,
                    "ConditionExpression": f"attribute_exists({PK})",
                }
            }
        )
    else:
        actions.append(
            {
                "ConditionCheck": {
                    "TableName": table_name,
                    "Key": meta_key(participant_id),
                    "ConditionExpression": f"attribute_exists({PK})",
                }
            }
        )
    if commit.claim is not None:
        # Only if no commit claimed this event id before: an item of its own (outside the range
        # the state Query reads), deleted by the table's TTL after the redelivery horizon.
        actions.append(
            {
                "Put": {
                    "TableName": table_name,
                    "Item": event_claim_item(participant_id, commit.claim),
                    "ConditionExpression": f"attribute_not_exists({SK})",
                }
            }
        )
    # The study decisions this event made (docs/studies.md): with the state or not at all, each only
    # if new (a redelivery finds its event's record and never decides again).
    actions += [
        {
            "Put": {
                "TableName": table_name,
                "Item": item,
                "ConditionExpression": f"attribute_not_exists({SK})",
            }
        }
        for item in [decision_item(d) | ttl for d in commit.decisions] + transcript_items
    ]
    if commit.accepted is not None:
        # The message as accepted before the model (``usecases/inbound_record.py``): the commit's own
        # entry answers it, so the placeholder goes in the same transaction (the record holds it once).
        actions.append(
            {
                "Delete": {
                    "TableName": table_name,
                    "Key": key(participant_pk(participant_id), transcript_sk(commit.accepted)),
                }
            }
        )
    if commit.needs_person_changed:
        # The queue's marker, only when the hold, the status or the name changed what it says
        # (docs/console.md, "Nobody missed"): with the state or not at all.
        if commit.needs_person is not None:
            actions.append({"Put": {"TableName": table_name, "Item": needs_person_item(commit.needs_person)}})
        else:
            actions.append({"Delete": {"TableName": table_name, "Key": needs_person_key(participant_id)}})
    return actions
