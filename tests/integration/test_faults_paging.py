"""Fault suite: the participants list paged while people enrol.

A coordinator reads page 1 of 65 participants; 3 more enrol; they follow "Next". The page after the
cursor is the one after the last row they saw, and the API says where it starts, counted at the
read: "54–68 of 68", not "51–65 of 68". Read afresh, pages 1 and 2 hold all 68, each once. The same
through the DynamoDB adapter (moto), the in-memory store, a search and the status filter, and the
console's own list page.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.console.app import Console
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import FlowState, new_state_data
from promptpipe.usecases.participant_rows import participant_rows

T0 = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def seed(repo: Any, n: int, *, name: str = "", status: ParticipantStatus = ParticipantStatus.ACTIVE) -> str:
    at = T0 + timedelta(minutes=n)
    participant = ConversationParticipant(
        id=f"p_{n:032x}",
        phone_number=f"+1416556{n:04d}",
        name=name or f"Person {n:03d}",
        timezone="America/Toronto",
        status=status,
        enrolled_at=at,
        created_at=at,
        updated_at=at,
    )
    repo.create(participant, FlowState(participant_id=participant.id, state_data=new_state_data()))
    return participant.id


def walk(repo: Any, **filters: Any) -> list[str]:
    ids: list[str] = []
    token = None
    while True:
        page = participant_rows(repo, limit=50, next_token=token, **filters)
        assert page.offset == len(ids)  # read afresh, each page starts where the last ended
        ids += [row.participant.id for row in page.rows]
        token = page.next_token
        if token is None:
            return ids


def _store(kind: str, local_env_factory: Any) -> Any:
    return local_env_factory().app.repo if kind == "dynamodb" else InMemoryStore()


@pytest.mark.parametrize("kind", ["dynamodb", "memory"])
def test_a_page_cursor_stays_right_when_participants_enrol_between_pages(kind: str, local_env_factory) -> None:
    repo = _store(kind, local_env_factory)
    for n in range(65):
        seed(repo, n)
    first = participant_rows(repo, limit=50)
    assert (first.offset, len(first.rows), first.total) == (0, 50, 65)
    seen = [row.participant.id for row in first.rows]
    # When 3 participants enrol (listed first: newest first) before "Next"
    newcomers = [seed(repo, 100 + n) for n in range(3)]
    second = participant_rows(repo, limit=50, next_token=first.next_token)
    # Then page 2 continues after the last row seen, and says where it starts now: 54–68 of 68
    assert (second.offset, len(second.rows), second.total) == (53, 15, 68)
    assert second.next_token is None
    assert not set(seen) & {row.participant.id for row in second.rows}
    # And read afresh, the pages hold every participant once: nobody is on no page
    everyone = walk(repo)
    assert len(everyone) == len(set(everyone)) == 68
    assert everyone[:3] == sorted(newcomers, reverse=True)


class ReadSpy:
    """The DynamoDB repository's client, the reads called through it recorded by name."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, list[str]()

    def __getattr__(self, name: str) -> Any:
        if name in ("query", "batch_get_item", "get_item", "scan"):
            self.calls.append(name)
        return getattr(self.client, name)


@pytest.mark.parametrize("status", [None, "active"])
def test_every_page_is_three_reads_and_a_middle_page_stays_right_after_enrolments(
    status: str | None, local_env_factory: Any
) -> None:
    # Given 130 participants, pages of 50, every read of the list counted
    repo = local_env_factory().app.repo
    for n in range(130):
        seed(repo, n)
    spy = ReadSpy(repo._client)
    repo._client = spy

    def page(token: str | None) -> Any:
        spy.calls.clear()
        found = participant_rows(repo, limit=50, next_token=token, status=status)
        assert spy.calls == ["query", "query", "batch_get_item"]  # the page, one count, its states
        return found

    # When page 1 is read, 3 enrol, page 2 (a middle page) is read, 2 more enrol, then page 3
    first = page(None)
    newcomers = [seed(repo, 200 + n) for n in range(3)]
    second = page(first.next_token)
    newcomers += [seed(repo, 300 + n) for n in range(2)]
    third = page(second.next_token)

    # Then each page starts after the last row seen and says where it stands now, of the total now
    assert [(p.offset, len(p.rows), p.total) for p in (first, second, third)] == [
        (0, 50, 130),
        (53, 50, 133),
        (105, 30, 135),
    ]
    assert third.next_token is None
    seen = [row.participant.id for p in (first, second, third) for row in p.rows]
    assert len(seen) == len(set(seen)) == 130 and not set(seen) & set(newcomers)


@pytest.mark.parametrize("kind", ["dynamodb", "memory"])
def test_a_search_and_a_status_filter_page_by_place_too(kind: str, local_env_factory) -> None:
    repo = _store(kind, local_env_factory)
    for n in range(60):
        seed(repo, n, name=f"Walker {n:03d}", status=ParticipantStatus.PAUSED if n % 2 else ParticipantStatus.ACTIVE)
    first = participant_rows(repo, limit=20, search="walker")
    seed(repo, 200, name="Walker new")
    second = participant_rows(repo, limit=20, search="walker", next_token=first.next_token)
    assert second.offset == 21 and second.total == 61  # the newcomer came first
    assert second.rows[0].participant.id == f"p_{39:032x}"  # the row after the last one seen
    assert len(walk(repo, search="walker")) == 61
    paused = participant_rows(repo, limit=10, status="paused")
    seed(repo, 201, status=ParticipantStatus.PAUSED)
    after = participant_rows(repo, limit=10, status="paused", next_token=paused.next_token)
    assert after.offset == 11 and after.total == 31
    assert after.rows[0].participant.id == f"p_{39:032x}"
    assert len(set(walk(repo, status="paused"))) == 31


def test_a_bad_cursor_is_refused(local_env_factory) -> None:
    from promptpipe.errors import ValidationFailed

    repo = InMemoryStore()
    seed(repo, 1)
    for token in ("50", "not base64!", "eHl6"):
        with pytest.raises(ValidationFailed):
            participant_rows(repo, limit=50, next_token=token)
        with pytest.raises(ValidationFailed):
            participant_rows(repo, limit=50, next_token=token, search="x")


def test_the_consoles_next_link_after_enrolments_shows_the_right_numbers(local_env_factory) -> None:
    env = local_env_factory()
    for n in range(65):
        seed(env.app.repo, n)
    console = Console(CoordinatorClient(InProcessTransport(env)))
    page = console.list_page({})
    assert "1–50 of 65 participants" in page
    next_link = page.split('rel="next"')[0].rsplit('href="', 1)[1].split('"', 1)[0]
    assert next_link.startswith("/?after=")
    for n in range(3):
        seed(env.app.repo, 100 + n)
    after = next_link.split("after=", 1)[1]
    second = console.list_page({"after": after.replace("%3D", "=")})
    assert "54–68 of 68 participants" in second and "Page 2 of 2" in second
    assert 'rel="prev"' in second and 'rel="next"' not in second
    # a cursor that is not one: the first page, not an error
    assert "1–50 of 68 participants" in console.list_page({"after": "garbage"})


def test_a_cursor_without_the_count_after_it_still_pages_and_counts_the_total() -> None:
    # Given a cursor as an older link carries it (the store's cursor alone)
    repo = InMemoryStore()
    for n in range(70):
        seed(repo, n)
    first = participant_rows(repo, limit=50)
    assert first.next_token is not None
    store_cursor, _, after = first.next_token.rpartition(".")
    assert after == "20"  # the matches after the first page when it was read
    # When it is followed / Then the page is the same one, its total counted
    second = participant_rows(repo, limit=50, next_token=store_cursor)
    assert (second.offset, len(second.rows), second.total) == (50, 20, 70)
    assert participant_rows(repo, limit=10, next_token=store_cursor).total == 70  # not the last page
