"""Retention through the API: RETENTION_DAYS_AFTER_DELETE puts a DynamoDB TTL on what a deletion keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.aws import aws_client
from promptpipe.local.environment import LocalEnvironment, local_settings

START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def _items(env: LocalEnvironment, pid: str) -> list[dict]:
    client = aws_client("dynamodb", env.settings)
    return [i for i in client.scan(TableName=env.settings.table_name)["Items"] if i["pk"]["S"].endswith(pid)]


@pytest.mark.parametrize(("days", "keep"), [(7, "true"), (7, "false"), (None, "true")])
def test_delete_through_the_api_applies_the_retention_policy(days: int | None, keep: str) -> None:
    settings = local_settings(offline_coach=True, openai_api_key=None, retention_days_after_delete=days)
    with LocalEnvironment(start=START, settings=settings) as env:
        enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": "+14165550142"})
        pid = enrolled.body["result"]["id"]
        env.advance(timedelta(days=1))
        assert env.api("DELETE", f"/conversation/participants/{pid}", query={"keep_transcript": keep}).status == 200
        items = _items(env, pid)
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
