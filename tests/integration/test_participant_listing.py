"""The participants list sorted and narrowed (``GET /conversation/participant-rows?sort=…``,
docs/console.md "Sorting and filtering"): by adherence, activity, status and enrolment; to a zone,
study days, an adherence band; paged by a cursor that is a place in the sort order, so a participant
enrolled between two pages never pushes a row off them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import ConversationMessage, FlowState, StateData, new_state_data

ROWS = "/conversation/participant-rows"
T0 = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def _seed(
    env: Any,
    n: int,
    *,
    prompts: int,
    done: int,
    days_ago: int,
    zone: str = "America/Toronto",
    replied: int | None = None,
) -> str:
    at = env.clock.now() - timedelta(days=days_ago)
    participant = ConversationParticipant(
        id=f"p_{n:032x}",
        phone_number=f"+1416557{n:04d}",
        name=f"P{n}",
        timezone=zone,
        enrolled_at=at,
        created_at=at,
        updated_at=at,
        status=ParticipantStatus.PAUSED if n == 4 else ParticipantStatus.ACTIVE,
    )
    data = StateData(new_state_data())
    profile = data.profile()
    profile.total_prompts, profile.success_count = prompts, done
    data.set_profile(profile)
    if replied is not None:
        data.append_history(ConversationMessage(role="user", content="Done", timestamp=T0 + timedelta(minutes=replied)))
    env.app.repo.create(participant, FlowState(participant_id=participant.id, state_data=data.raw))
    return participant.name


def _names(env: Any, **query: str) -> tuple[list[str], Any]:
    answer = env.api("GET", ROWS, query=query)
    assert answer.status == 200, answer.body
    return [r["participant"]["name"] for r in answer.body["result"]["rows"]], answer.body["result"]


def _study(env: Any) -> None:
    # adherence: P1 10 %, P2 50 %, P3 90 %, P4 no prompt yet (paused), P5 75 % in Madrid
    _seed(env, 1, prompts=10, done=1, days_ago=9, replied=5)
    _seed(env, 2, prompts=4, done=2, days_ago=3, replied=50)
    _seed(env, 3, prompts=10, done=9, days_ago=12)
    _seed(env, 4, prompts=0, done=0, days_ago=0, replied=20)
    _seed(env, 5, prompts=4, done=3, days_ago=5, zone="Europe/Madrid", replied=1)


def test_sorts(local_env_factory: Any) -> None:
    env = local_env_factory(start=T0 + timedelta(days=1))
    _study(env)
    assert _names(env, sort="adherence")[0] == ["P1", "P2", "P5", "P3", "P4"]  # lowest first, none last
    assert _names(env, sort="adherence_high")[0] == ["P3", "P5", "P2", "P1", "P4"]
    assert _names(env, sort="activity")[0] == ["P2", "P4", "P1", "P5", "P3"]  # the latest reply first
    assert _names(env, sort="status")[0] == ["P2", "P5", "P1", "P3", "P4"]  # active (newest first), then paused
    assert _names(env, sort="enrolled_oldest")[0] == ["P3", "P1", "P5", "P2", "P4"]
    assert _names(env)[0] == ["P4", "P2", "P5", "P1", "P3"]  # the plain list: newest first


def test_filters_zone_study_day_band_and_needs_a_person(local_env_factory: Any) -> None:
    env = local_env_factory(start=T0 + timedelta(days=1))
    _study(env)
    assert _names(env, zone="Europe/Madrid")[0] == ["P5"]
    names, result = _names(env, study_day_min="4", study_day_max="10", sort="enrolled_oldest")
    assert names == ["P1", "P5", "P2"] and result["total"] == 3  # days 10, 6 and 4
    assert _names(env, adherence="high")[0] == ["P3"]
    assert _names(env, adherence="none")[0] == ["P4"]
    assert _names(env, adherence="mid", status="active")[0] == ["P2", "P5"]
    assert _names(env, adherence="low", needs_person="true")[0] == []


def test_paging_by_the_sort_stays_right_when_someone_enrols_between_pages(local_env_factory: Any) -> None:
    env = local_env_factory(start=T0 + timedelta(days=1))
    _study(env)
    first, result = _names(env, sort="adherence", limit="2")
    assert first == ["P1", "P2"] and result["total"] == 5 and result["offset"] == 0
    # Between the pages, a participant is enrolled whose adherence sorts before the cursor's place
    _seed(env, 6, prompts=10, done=0, days_ago=1)
    second, result = _names(env, sort="adherence", limit="2", next_token=result["next_token"])
    assert second == ["P5", "P3"] and result["offset"] == 3  # P6 (0 %) is before the place, counted
    third, result = _names(env, sort="adherence", limit="2", next_token=result["next_token"])
    assert third == ["P4"] and result["next_token"] is None
    # A cursor of another sort, or none at all, is refused
    assert env.api("GET", ROWS, query={"sort": "activity", "next_token": "v" + "x" * 10}).status == 400
    assert env.api("GET", ROWS, query={"sort": "status", "next_token": "nonsense"}).status == 400


def test_the_console_list_sorts_and_filters_and_its_pager_keeps_them(local_env_factory: Any) -> None:
    import html

    from promptpipe.console.app import Console
    from promptpipe.console.listing import view_of
    from promptpipe.coordinator.client import CoordinatorClient
    from promptpipe.local.api_transport import InProcessTransport

    env = local_env_factory(start=T0 + timedelta(days=1))
    _study(env)
    console = Console(CoordinatorClient(InProcessTransport(env)))
    page = html.unescape(console.list_page({"sort": "adherence", "adherence": "mid", "day_from": "9", "day_to": "2"}))
    import re

    shown = re.findall(r'<a href="/participants/p_\w+">(P\d)</a>', page)
    assert shown == ["P2", "P5"]  # mid adherence, study days 2 to 9 (the range put in order), lowest first
    assert '<option value="adherence" selected>adherence (lowest first)</option>' in page
    assert '<option value="mid" selected>' in page and 'id="day_from" name="day_from" type="number"' in page
    # A value the API would refuse is dropped, not an error page
    view, keep = view_of({"sort": "bogus", "adherence": "x", "day_from": "0", "zone": " Europe/Madrid "})
    assert (view.sort, view.adherence, view.study_day_min, view.zone) == ("enrolled", "", None, "Europe/Madrid")
    assert keep == {"zone": "Europe/Madrid"}
