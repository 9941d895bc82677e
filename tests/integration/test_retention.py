"""Retention through the API: RETENTION_DAYS_AFTER_DELETE puts a DynamoDB TTL on what a deletion keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.aws import aws_client
from promptpipe.local.environment import LocalEnvironment, local_settings

START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def _items(env: LocalEnvironment, pid: str, *, claims: bool = False) -> list[dict]:
    """The participant's items; without ``claims``, not the claimed event ids nor the pointers from a
    provider's message id to its entry: those expire on their own clock (the redelivery horizon, the
    8 days a provider reports in) as well (tests/unit/test_event_claims.py, docs/retention.md)."""
    client = aws_client("dynamodb", env.settings)
    items = client.scan(TableName=env.settings.table_name)["Items"]
    own_clock = ("EVENT#", "PMSG#")
    return [i for i in items if i["pk"]["S"].endswith(pid) and (claims or not i["sk"]["S"].startswith(own_clock))]


@pytest.mark.parametrize(("days", "keep"), [(7, "true"), (7, "false"), (None, "true")])
def test_delete_through_the_api_applies_the_retention_policy(days: int | None, keep: str) -> None:
    settings = local_settings(offline_coach=True, openai_api_key=None, retention_days_after_delete=days)
    with LocalEnvironment(start=START, settings=settings) as env:
        enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": "+14165550142"})
        pid = enrolled.body["result"]["id"]
        env.advance(timedelta(days=1))
        assert env.api("DELETE", f"/conversation/participants/{pid}", query={"keep_transcript": keep}).status == 200
        items = _items(env, pid, claims=True)
        if keep == "false":
            assert items == []  # erased at once, whatever the retention
        elif days is None:
            transcript = [i for i in items if i["sk"]["S"].startswith("MSG#")]
            claims = [i for i in items if i["sk"]["S"].startswith("EVENT#")]
            assert transcript and all("expires_at" not in i for i in transcript)  # kept for good (the default)
            assert claims and all("expires_at" in i for i in claims)  # event ids expire on their own
        else:
            expected = str(int((START + timedelta(days=1 + days)).timestamp()))
            assert items and {i["expires_at"]["N"] for i in items} == {expected}
            history = env.api("GET", f"/conversation/participants/{pid}/history")
            assert history.status == 200 and history.body["result"]["messages"]  # readable until then


def _claim(env: LocalEnvironment, phone: str) -> dict:
    client = aws_client("dynamodb", env.settings)
    return client.get_item(
        TableName=env.settings.table_name, Key={"pk": {"S": f"PHONE#{phone}"}, "sk": {"S": "PHONE"}}
    )["Item"]


def test_withdrawal_starts_the_retention_clock_of_a_deletion() -> None:
    from promptpipe.local.demo import send_sms

    settings = local_settings(offline_coach=True, openai_api_key=None, retention_days_after_delete=7)
    with LocalEnvironment(start=START, settings=settings) as env:
        # Given two enrolled participants with a transcript (their greetings)
        ids = {}
        for phone in ("+14165550142", "+14165550143"):
            enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": phone})
            ids[phone] = enrolled.body["result"]["id"]
        withdrawn, deleted = ids["+14165550142"], ids["+14165550143"]
        env.advance(timedelta(days=1))
        # When, at the same moment, one is withdrawn and the other deleted
        update = env.api("PUT", f"/conversation/participants/{withdrawn}", json_body={"status": "withdrawn"})
        assert update.status == 200
        assert env.api("DELETE", f"/conversation/participants/{deleted}").status == 200
        # Then what the deletion kept and everything of the withdrawn participant (record, state,
        # transcript, phone claim) expire at the same time: 7 days after
        expected = str(int((START + timedelta(days=8)).timestamp()))
        kept = _items(env, deleted)
        assert kept and {i["expires_at"]["N"] for i in kept} == {expected}
        items = _items(env, withdrawn)
        assert {i["sk"]["S"].split("#")[0] for i in items} == {"META", "FLOW", "MSG"}
        assert {i["expires_at"]["N"] for i in items} == {expected}
        assert _claim(env, "+14165550142")["expires_at"]["N"] == expected

        # When the withdrawn participant writes a day later (recorded, not answered)
        env.advance(timedelta(days=1))
        assert send_sms(env, "+14165550142", "are you still there?", "SM-after-withdrawal") == 200
        # Then what that wrote expires with the rest: the clock is not restarted, nothing escapes it
        after = _items(env, withdrawn)
        assert len(after) == len(items) + 1 and {i["expires_at"]["N"] for i in after} == {expected}

        # When the organiser re-activates them / Then nothing of theirs expires any more
        update = env.api("PUT", f"/conversation/participants/{withdrawn}", json_body={"status": "active"})
        assert update.status == 200 and update.body["result"]["status"] == "active"
        assert all("expires_at" not in i for i in _items(env, withdrawn))
        assert "expires_at" not in _claim(env, "+14165550142")


def test_without_a_retention_a_withdrawal_keeps_everything() -> None:
    settings = local_settings(offline_coach=True, openai_api_key=None)
    with LocalEnvironment(start=START, settings=settings) as env:
        enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": "+14165550142"})
        pid = enrolled.body["result"]["id"]
        assert env.api("PUT", f"/conversation/participants/{pid}", json_body={"status": "withdrawn"}).status == 200
        assert all("expires_at" not in i for i in _items(env, pid))
        assert "expires_at" not in _claim(env, "+14165550142")
