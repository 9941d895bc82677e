"""The participants list's rows (``GET /conversation/participant-rows``, docs/console.md "The list's
reads"): one call a page, three DynamoDB reads whatever the study's size, and the rows say what the
participant's own page says."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.summary import summarize
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.local.demo import DEMO_START, run_demo
from tests.support import hand_off_a_new_participant

ROWS = "/conversation/participant-rows"
BASE = "/conversation/participants"


class DynamoSpy:
    """The repository's DynamoDB client, recording the operations called through it."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, list[str]()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)
        if name in ("query", "batch_get_item", "get_item", "scan"):
            self.calls.append(name)
        return attribute


def _enroll(env: Any, n: int, name: str) -> str:
    answer = env.api("POST", BASE, json_body={"phone_number": f"+1416555{n:04d}", "name": name})
    assert answer.status == 201, answer.body
    return str(answer.body["result"]["id"])


def test_a_row_says_what_the_participants_transcript_says(local_env_factory: Any) -> None:
    # Given the demo participant's week (intake, daily prompts, answers, a reminder)
    env = local_env_factory(start=DEMO_START)
    pid = run_demo(env).participant_id
    client = CoordinatorClient(InProcessTransport(env))

    # When the list's rows are read, and the participant's page reads transcript and state
    (row,) = client.participant_rows().rows
    participant, state = client.participant(pid), client.state(pid)
    summary = summarize(participant, client.iter_history(pid), state)

    # Then the row's counts, last reply, sub-state and hold are the page's, from the flow state alone
    assert row.participant.id == pid and row.participant.timezone == participant.timezone
    assert (row.prompts_sent, row.done) == (summary.prompts_sent, summary.done) and row.done > 0
    assert row.last_reply_at == summary.last_reply_at is not None
    assert row.sub_state == summary.sub_state and row.needs_person is summary.needs_person is False
    # and its next timer is the pending one-shot due first, as the state view lists it
    assert state is not None
    if state["pending_timers"]:
        assert row.next_timer is not None and row.next_timer.due_at is not None
    else:
        assert row.next_timer is None


def test_a_page_is_one_call_and_three_reads_whatever_the_studys_size(local_env_factory: Any) -> None:
    # Given 60 participants, the list's page being 50
    env = local_env_factory()
    ids = {_enroll(env, n, f"P{n}") for n in range(60)}
    spy = DynamoSpy(env.app.repo._client)
    env.app.repo._client = spy

    # When the first page is read, two more enrol, then the next page is read by its cursor
    first = env.api("GET", ROWS)
    reads_first = list(spy.calls)
    token = first.body["result"]["next_token"]
    env.clock.advance(timedelta(minutes=1))  # enrolled later: listed first
    _enroll(env, 100, "Late1"), _enroll(env, 101, "Late2")
    spy.calls.clear()
    second = env.api("GET", ROWS, query={"next_token": token})

    # Then the first page is 50 rows of 60 and costs one index page, its count and one BatchGetItem
    assert first.status == 200 and len(first.body["result"]["rows"]) == 50 and first.body["result"]["total"] == 60
    assert reads_first == ["query", "query", "batch_get_item"]  # the page, the count, its states
    # and the second, three reads too (the page, where it starts, its states), holds the other 10,
    # numbered as they stand now (53-62 of 62: the two enrolled meanwhile come first)
    assert spy.calls == ["query", "query", "batch_get_item"]
    assert second.status == 200 and second.body["result"]["next_token"] is None
    assert (second.body["result"]["offset"], second.body["result"]["total"]) == (52, 62)
    # every participant of the first read once, newest first
    rows = first.body["result"]["rows"] + second.body["result"]["rows"]
    assert {r["participant"]["id"] for r in rows} == ids and len(rows) == 60
    created = [r["participant"]["created_at"] for r in rows]
    assert created == sorted(created, reverse=True)
    assert all(r["sub_state"] == "INTAKE" for r in rows)  # read from each flow state


def test_filters_status_search_and_needs_a_person(local_env_factory: Any) -> None:
    # Given three participants: one paused, one held by the flow controller for a person
    env = local_env_factory()
    _enroll(env, 1, "Robin")
    paused = _enroll(env, 2, "Kim")
    assert env.api("PUT", f"{BASE}/{paused}", json_body={"status": "paused"}).status == 200
    held = hand_off_a_new_participant(env, "+14165550177")

    def rows(**query: str) -> list[dict[str, Any]]:
        answer = env.api("GET", ROWS, query=query)
        assert answer.status == 200, answer.body
        assert answer.body["result"]["total"] == len(answer.body["result"]["rows"])
        return list(answer.body["result"]["rows"])

    # Then each filter keeps only its participants, the hold shown on the row
    assert [r["participant"]["id"] for r in rows(status="paused")] == [paused]
    needing = rows(needs_person="true")
    assert [r["participant"]["id"] for r in needing] == [held] and needing[0]["needs_person"] is True
    assert [r["participant"]["name"] for r in rows(q="rOBi")] == ["Robin"]  # any case
    assert [r["participant"]["name"] for r in rows(q="(416) 555-0002")] == ["Kim"]  # the phone's digits
    assert len(rows()) == 3 and sum(r["needs_person"] for r in rows()) == 1
    # and a cursor that is not one is a 400, not a page
    assert env.api("GET", ROWS, query={"next_token": "nope"}).status == 400
    assert env.api("GET", ROWS, query={"q": "o", "next_token": "nope"}).status == 400
