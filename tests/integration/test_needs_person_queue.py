"""Nobody missed (docs/console.md, "Nobody missed"): the needs-a-person queue at the top of the
console's front page is the markers the commits keep (``FLOW#conversation#held``, indexed under
``gsi1pk = NEEDS_PERSON``), written with the hold and removed with its release, a withdrawal, a
deletion or an erasure, each in the same transaction; the front page reads it with one more Query,
whatever the study's size."""

from __future__ import annotations

import html
from datetime import datetime, timedelta
from typing import Any

from promptpipe.adapters.dynamodb_items import needs_person_key
from promptpipe.console.app import Console
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.models.messaging import InboundMessage
from promptpipe.usecases import receive_text
from tests.integration.test_participant_rows import DynamoSpy
from tests.support import enroll_over_api, hand_off_a_new_participant

ROWS = "/conversation/participant-rows"
BASE = "/conversation/participants"


class ReadSpy:
    """The repository's DynamoDB client, recording each read: a Query's partition of the index (or
    its table key), a BatchGetItem's number of keys."""

    def __init__(self, client: Any) -> None:
        self.client, self.reads = client, list[tuple[str, Any]]()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)
        if name not in ("query", "batch_get_item", "get_item", "scan"):
            return attribute

        def read(**request: Any) -> Any:
            if name == "query":
                detail: Any = next(iter(request["ExpressionAttributeValues"].values()))["S"]
            elif name == "batch_get_item":
                detail = sum(len(table["Keys"]) for table in request["RequestItems"].values())
            else:
                detail = None
            self.reads.append((name, detail))
            return attribute(**request)

        return read


def _text(env: Any, phone: str, body: str, sid: str) -> None:
    message = InboundMessage(
        provider="twilio", provider_message_id=sid, from_phone=phone, body=body, received_at=env.clock.now()
    )
    receive_text.receive_text(env.app, message)
    env.drain()


def _queue(env: Any) -> list[dict[str, Any]]:
    answer = env.api("GET", ROWS, query={"queue": "true", "limit": "1"})
    assert answer.status == 200, answer.body
    return list(answer.body["result"]["needs_person_queue"])


def _marker(env: Any, pid: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = env.app.repo._client.get_item(
        TableName=env.settings.table_name, Key=needs_person_key(pid)
    ).get("Item")
    return item


def test_the_queue_is_one_more_read_the_longest_wait_first(local_env_factory: Any) -> None:
    env = local_env_factory()
    for n in range(6):
        enroll_over_api(env, f"+1416555{n:04d}", name=f"P{n}")
    rosa = enroll_over_api(env, "+12125550163", name="Rosa")
    _text(env, "+12125550163", "can I talk to a person", "SMq1")
    env.clock.advance(timedelta(minutes=30))
    alex = hand_off_a_new_participant(env, "+14165550199")
    env.drain()
    env.clock.advance(timedelta(minutes=5))
    spy = DynamoSpy(env.app.repo._client)
    env.app.repo._client = spy

    plain = env.api("GET", ROWS)
    reads_plain = list(spy.calls)
    spy.calls.clear()
    with_queue = env.api("GET", ROWS, query={"queue": "true"})

    # One more read, a Query of the index's NEEDS_PERSON partition; the rows are the same
    assert spy.calls == [*reads_plain, "query"]
    assert with_queue.body["result"]["rows"] == plain.body["result"]["rows"]
    assert "needs_person_queue" not in plain.body["result"] or plain.body["result"]["needs_person_queue"] is None
    queue = with_queue.body["result"]["needs_person_queue"]
    assert [(e["participant_id"], e["name"], e["reason"]) for e in queue] == [
        (rosa, "Rosa", "asked"),
        (alex, "Alex", "handoff"),
    ]
    assert datetime.fromisoformat(queue[0]["since"]) < datetime.fromisoformat(queue[1]["since"])


def test_the_queue_page_reads_the_markers_and_the_participants_they_name(local_env_factory: Any) -> None:
    # /queue (and the list's needs-a-person filter): one Query of the markers, then one BatchGetItem
    # of the records they name and one of those participants' states, however many are not held.
    env = local_env_factory()
    rosa = enroll_over_api(env, "+12125550163", name="Rosa")
    _text(env, "+12125550163", "can I talk to a person", "SMq1")
    env.clock.advance(timedelta(minutes=30))
    alex = hand_off_a_new_participant(env, "+14165550199")
    env.drain()
    console = Console(CoordinatorClient(InProcessTransport(env)))

    def reads() -> tuple[list[tuple[str, Any]], str]:
        spy = ReadSpy(env.app.repo._client)
        env.app.repo._client = spy
        try:
            page = html.unescape(console.queue_page())
        finally:
            env.app.repo._client = spy.client
        return spy.reads, page

    few, page = reads()
    for n in range(12):  # a bigger study, nobody more held
        enroll_over_api(env, f"+1416555{n:04d}", name=f"P{n}")
    many, again = reads()

    # the markers' partition, then the two held participants' records and states: nobody else
    assert few == many == [("query", "NEEDS_PERSON"), ("batch_get_item", 2), ("batch_get_item", 2)]
    assert again == page
    assert '<span class="count badge" aria-label="2 waiting">2</span>' in page
    assert page.index(f'href="/participants/{rosa}">Rosa<') < page.index(f'href="/participants/{alex}">Alex<')
    assert "P3" not in again


def test_the_needs_a_person_filter_keeps_the_status_filter_and_pages(local_env_factory: Any) -> None:
    env = local_env_factory()
    held = []
    for n in range(3):
        pid = enroll_over_api(env, f"+1212555{n:04d}", name=f"H{n}")
        env.api("POST", f"{BASE}/{pid}/staff-messages", json_body={"body": "Hi, Ana here.", "by": "Ana"})
        env.clock.advance(timedelta(minutes=1))
        held.append(pid)
    enroll_over_api(env, "+12125559999", name="Not held")
    assert env.api("PUT", f"{BASE}/{held[1]}", json_body={"status": "paused"}).status == 200

    first = env.api("GET", ROWS, query={"needs_person": "true", "limit": "2"}).body["result"]
    second = env.api("GET", ROWS, query={"needs_person": "true", "limit": "2", "next_token": first["next_token"]})
    paused = env.api("GET", ROWS, query={"needs_person": "true", "status": "paused"}).body["result"]

    listed = [r["participant"]["id"] for r in first["rows"] + second.body["result"]["rows"]]
    assert listed == held[::-1] and first["total"] == 3  # newest first, as the list
    assert all(r["needs_person"] and r["hold_reason"] == "staff" for r in first["rows"])
    assert [r["participant"]["id"] for r in paused["rows"]] == [held[1]]


def test_the_marker_follows_the_hold_a_rename_a_release_a_withdrawal_and_a_deletion(local_env_factory: Any) -> None:
    env = local_env_factory()
    ids = [enroll_over_api(env, f"+1416555{n:04d}", name=f"P{n}") for n in range(4)]
    assert _queue(env) == [] and all(_marker(env, pid) is None for pid in ids)  # nobody held: no marker written
    for n, pid in enumerate(ids):  # a staff message holds each of them
        answer = env.api("POST", f"{BASE}/{pid}/staff-messages", json_body={"body": "Hi, Ana here.", "by": "Ana"})
        assert answer.status == 201, answer.body
        env.clock.advance(timedelta(minutes=n + 1))
    assert [(e["participant_id"], e["reason"]) for e in _queue(env)] == [(pid, "staff") for pid in ids]

    env.api("PUT", f"{BASE}/{ids[0]}", json_body={"name": "Paula", "by": "Ana"})
    assert _queue(env)[0]["name"] == "Paula"  # the marker follows the name
    env.api("POST", f"{BASE}/{ids[0]}/state", json_body={"release_hold": True, "reason": "talked", "by": "Ana"})
    env.api("PUT", f"{BASE}/{ids[1]}", json_body={"status": "withdrawn", "reason": "moved away", "by": "Ana"})
    env.api("DELETE", f"{BASE}/{ids[2]}", query={"by": "Ana"})
    env.api("DELETE", f"{BASE}/{ids[3]}", query={"keep_transcript": "false", "by": "Ana", "reason": "asked"})

    assert _queue(env) == []
    assert all(_marker(env, pid) is None for pid in ids)


def test_a_hold_without_its_marker_gets_it_at_the_next_commit(local_env_factory: Any) -> None:
    # A hold placed before the queue's markers existed: listed again by its participant's next event
    env = local_env_factory()
    pid = enroll_over_api(env, "+12125550163", name="Rosa")
    _text(env, "+12125550163", "can I talk to a person", "SMq1")
    env.app.repo._client.delete_item(TableName=env.settings.table_name, Key=needs_person_key(pid))
    assert _queue(env) == []

    _text(env, "+12125550163", "hello??", "SMq2")  # a held turn: no model, recorded

    assert [(e["participant_id"], e["reason"]) for e in _queue(env)] == [(pid, "asked")]


def test_the_front_page_shows_the_queue_above_the_list_in_its_one_call(local_env_factory: Any) -> None:
    env = local_env_factory()
    rosa = enroll_over_api(env, "+12125550163", name="Rosa")
    enroll_over_api(env, "+12125550170", name="Not held")
    _text(env, "+12125550163", "can I talk to a person", "SMq1")
    env.clock.advance(timedelta(hours=2, minutes=5))
    transport = InProcessTransport(env)
    calls: list[str] = []
    real = transport.request

    def counting(method: str, path: str, **kwargs: Any) -> Any:
        calls.append(f"{method} {path}")
        return real(method, path, **kwargs)

    transport.request = counting  # type: ignore[method-assign]
    page = html.unescape(Console(CoordinatorClient(transport)).list_page({}))

    assert calls == [f"GET {ROWS}"]
    queue = page.split('<section id="needs-a-person"', 1)[1].split("</section>", 1)[0]
    assert page.index('id="needs-a-person"') < page.index("<h1>Participants</h1>")
    assert '<span class="count badge" aria-label="1 waiting">1</span>' in queue
    assert f'<a href="/participants/{rosa}">Rosa</a>' in queue
    assert "asked for a person" in queue and "2 h 05 min" in queue and "Not held" not in queue


def test_the_marker_is_the_alerts_outbox(local_env_factory: Any) -> None:
    env = local_env_factory()
    rosa = enroll_over_api(env, "+12125550163", name="Rosa")
    other = enroll_over_api(env, "+12125550170", name="Not held")
    _text(env, "+12125550163", "can I talk to a person", "SMq1")

    marker = _marker(env, rosa)
    assert marker is not None and marker["alert_pending"] == {"BOOL": False}  # published, then marked
    since = datetime.fromisoformat(marker["since"]["S"])
    env.app.repo.hold_alerted(other, since)  # no marker: nothing to mark, no error
    env.app.repo.hold_alerted(rosa, since + timedelta(seconds=1))  # another hold's: left alone
    assert _marker(env, other) is None and _marker(env, rosa) == marker
