"""Tone rules at their exact thresholds and roundings (docs/behaviour.md#tone).

A score of exactly 0.7 activates and overrules, a half at the fourth decimal rounds up, binary noise
below the tenth decimal is dropped before rounding, and "no emojis" wins over "emojis ok" whichever
way both became active. Each case is one the behaviour tests step over.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from promptpipe.tone import EXCLUSIVE_LOSER_SCORE, ProfileTone, update_profile_tone, validate_proposal

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def scores(**values: float) -> dict[str, float]:
    return validate_proposal([], values).scores


# --- rounding -------------------------------------------------------------------------------------------------
def test_a_half_at_the_fourth_decimal_rounds_up() -> None:
    # 0.12345 and 0.98765 would round down (to even) under banker's rounding
    assert scores(concise=0.12345, formal=0.98765) == {"concise": 0.1235, "formal": 0.9877}


def test_noise_below_the_tenth_decimal_is_dropped_before_rounding() -> None:
    # 0.12344999996 is 0.12345 to ten places, so it rounds up; read to eleven it would round down
    assert scores(concise=0.12344999996) == {"concise": 0.1235}
    assert scores(concise=0.1234499999) == {"concise": 0.1234}


def test_a_negative_zero_is_stored_as_zero() -> None:
    [value] = scores(concise=-0.0).values()
    assert value == 0.0 and math.copysign(1.0, value) == 1.0
    assert json.dumps(scores(concise=-0.0)) == '{"concise": 0.0}'


# --- explicit choices at the threshold --------------------------------------------------------------------------
def test_an_explicit_score_of_exactly_the_threshold_overrules_the_other_side() -> None:
    tone = ProfileTone(tags=["concise"], scores={"concise": 1.0})
    assert update_profile_tone(tone, validate_proposal([], {"detailed": 0.7}, "explicit"), T0) is True
    assert tone.scores == {"concise": EXCLUSIVE_LOSER_SCORE, "detailed": 0.7}
    assert tone.tags == ["detailed"]


def test_an_explicit_choice_lowers_a_scored_but_inactive_other_side() -> None:
    # concise scored 0.5 but not active: it is lowered all the same, so it cannot come back at once
    tone = ProfileTone(tags=[], scores={"concise": 0.5})
    assert update_profile_tone(tone, validate_proposal(["detailed"], None, "explicit"), T0) is True
    assert tone.scores == {"concise": EXCLUSIVE_LOSER_SCORE, "detailed": 1.0}
    assert tone.tags == ["detailed"]


def test_both_sides_at_exactly_the_threshold_keep_the_first() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, validate_proposal([], {"concise": 0.7, "detailed": 0.7}, "explicit"), T0)
    assert tone.scores == {"concise": 0.7, "detailed": EXCLUSIVE_LOSER_SCORE}
    assert tone.tags == ["concise"]


def test_the_second_side_at_exactly_the_threshold_loses_to_a_higher_first() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, validate_proposal([], {"formal": 0.8, "casual": 0.7}, "explicit"), T0)
    assert tone.scores == {"formal": 0.8, "casual": EXCLUSIVE_LOSER_SCORE}
    assert tone.tags == ["formal"]


# --- emojis ---------------------------------------------------------------------------------------------------------
def test_emojis_ok_alone_is_kept() -> None:
    tone = ProfileTone()
    assert update_profile_tone(tone, validate_proposal(["emojis_ok"], None, "explicit"), T0) is True
    assert tone.scores == {"emojis_ok": 1.0} and tone.tags == ["emojis_ok"]


def test_no_emojis_at_exactly_the_threshold_zeroes_emojis_ok() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, validate_proposal([], {"no_emojis": 0.7, "emojis_ok": 0.9}, "explicit"), T0)
    assert tone.scores == {"no_emojis": 0.7, "emojis_ok": 0.0}
    assert tone.tags == ["no_emojis"]


def test_no_emojis_held_by_hysteresis_still_beats_emojis_ok_crossing_the_threshold() -> None:
    # no_emojis active and decaying inside the band (0.5 -> 0.425); emojis_ok crossing 0.7 (0.69 -> 0.7365)
    tone = ProfileTone(tags=["no_emojis"], scores={"no_emojis": 0.5, "emojis_ok": 0.69})
    assert update_profile_tone(tone, validate_proposal(["emojis_ok"], None, "implicit"), T0) is True
    assert tone.scores == {"no_emojis": 0.425, "emojis_ok": 0.7365}
    assert tone.tags == ["no_emojis"]


@pytest.mark.parametrize("raw", [float("inf"), 1e308])
def test_an_enormous_score_is_clamped_to_one(raw: float) -> None:
    assert scores(concise=raw) == {"concise": 1.0}


def test_one_active_side_of_a_pair_stays_active_below_a_higher_inactive_side() -> None:
    # concise held active inside the band; detailed scores higher but never reached 0.7: nothing to resolve
    tone = ProfileTone(tags=["concise"], scores={"concise": 0.5, "detailed": 0.6})
    assert update_profile_tone(tone, validate_proposal(["bullet_points"], None, "explicit"), T0) is True
    assert tone.tags == ["concise", "bullet_points"]


def test_an_unscored_active_side_counts_as_zero_against_a_scored_one() -> None:
    # both held active from a stored profile; only detailed has a score: detailed is the higher
    tone = ProfileTone(tags=["concise", "detailed"], scores={"detailed": 0.5})
    assert update_profile_tone(tone, validate_proposal(["bullet_points"], None, "explicit"), T0) is True
    assert tone.tags == ["detailed", "bullet_points"]


# --- time zones -----------------------------------------------------------------------------------------------------
@pytest.fixture
def process_in_kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process' own zone (``TZ``) set to UTC+05:30, so a conversion to "local time" shows."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_an_update_at_a_zoned_instant_is_stamped_with_that_instant() -> None:
    toronto = datetime(2026, 3, 2, 7, 0, tzinfo=ZoneInfo("America/Toronto"))  # 12:00 UTC
    tone = ProfileTone()
    update_profile_tone(tone, validate_proposal(["concise"], None, "explicit"), toronto)
    assert tone.last_updated_at == T0
    assert tone.to_json_dict()["tone_last_updated_at"] == "2026-03-02T12:00:00Z"


def test_stored_timestamps_are_utc_whatever_the_process_zone(process_in_kolkata: None) -> None:
    toronto = ZoneInfo("America/Toronto")
    tone = ProfileTone(
        last_updated_at=datetime(2026, 3, 2, 7, 0, tzinfo=toronto),
        override_until=datetime(2026, 3, 3, 7, 0, 30, tzinfo=toronto),
    )
    stored = tone.to_json_dict()
    assert stored["tone_last_updated_at"] == "2026-03-02T12:00:00Z"
    assert stored["tone_override_until"] == "2026-03-03T12:00:30Z"
