"""Timestamps of the stored profile read back exactly: ``updated_at``, ``created_at`` and the tone's
``tone_override_until`` and ``tone_last_updated_at`` survive the JSON the ``userProfile`` key holds
(docs/behaviour.md#profile), to the microsecond, whatever zone they were written in."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from promptpipe.models.profile import UserProfile
from promptpipe.models.state import DataKey, StateData
from promptpipe.rules.tone import GO_ZERO_TIME, ProfileTone, UpdateSource

TORONTO = ZoneInfo("America/Toronto")
# Not on the hour, with microseconds, and in a zone other than UTC: each is a way to lose precision.
UPDATED = datetime(2026, 3, 8, 1, 59, 58, 123456, tzinfo=TORONTO)  # the night clocks spring forward
CREATED = datetime(2026, 1, 31, 23, 30, 5, 7, tzinfo=TORONTO)
OVERRIDE_UNTIL = datetime(2026, 3, 9, 8, 30, 0, 250000, tzinfo=TORONTO)
TONE_UPDATED = datetime(2026, 3, 7, 12, 0, 1, tzinfo=UTC)


def profile() -> UserProfile:
    return UserProfile(
        habit_domain="walking",
        preferred_time="08:30",
        prompt_anchor="after coffee",
        created_at=CREATED,
        updated_at=UPDATED,
        success_count=3,
        total_prompts=4,
        tone=ProfileTone(
            tags=["concise"],
            scores={"concise": 0.8123},
            version=1,
            last_updated_at=TONE_UPDATED,
            update_source=UpdateSource.EXPLICIT,
            override_until=OVERRIDE_UNTIL,
        ),
    )


def test_profile_timestamps_are_stored_in_utc_and_read_back_exactly() -> None:
    # Given a profile with timestamps in Toronto time
    stored = json.loads(json.dumps(profile().to_json_dict()))
    # Then they are stored as UTC RFC 3339 with their fractions
    assert stored["created_at"] == "2026-02-01T04:30:05.000007Z"
    assert stored["updated_at"] == "2026-03-08T06:59:58.123456Z"
    assert stored["tone"]["tone_override_until"] == "2026-03-09T12:30:00.250000Z"
    assert stored["tone"]["tone_last_updated_at"] == "2026-03-07T12:00:01Z"
    # And they read back as the same instants, aware, in UTC
    loaded = UserProfile.from_json_dict(stored)
    assert loaded.updated_at == UPDATED and loaded.updated_at.utcoffset() == timedelta(0)
    assert loaded.created_at == CREATED
    assert loaded.tone.override_until == OVERRIDE_UNTIL and loaded.tone.override_until.tzinfo is not None
    assert loaded.tone.last_updated_at == TONE_UPDATED
    # And the whole profile survives a second round unchanged
    assert loaded == profile()
    assert loaded.to_json_dict() == stored


def test_the_state_data_key_holds_the_profile_exactly() -> None:
    # Given the profile written through StateData (as the tools and deliveries do)
    raw: dict[str, str] = {}
    StateData(raw).set_profile(profile())
    # When it is read back from the string the store keeps
    loaded = StateData(json.loads(json.dumps(raw))).profile()
    # Then every timestamp is the one written
    assert (loaded.created_at, loaded.updated_at) == (CREATED, UPDATED)
    assert loaded.tone.override_until == OVERRIDE_UNTIL
    assert DataKey.USER_PROFILE.value in raw


def test_unset_timestamps_are_the_zero_time_or_absent_and_read_back_unset() -> None:
    # Given a profile that was never saved and a tone without an override
    stored = json.loads(json.dumps(UserProfile().to_json_dict()))
    # Then the Go zero time stands for "unset", and an unset override is left out
    assert stored["created_at"] == stored["updated_at"] == GO_ZERO_TIME
    assert stored["tone"]["tone_last_updated_at"] == GO_ZERO_TIME
    assert "tone_override_until" not in stored["tone"]
    loaded = UserProfile.from_json_dict(stored)
    assert (loaded.created_at, loaded.updated_at, loaded.tone.override_until) == (None, None, None)
