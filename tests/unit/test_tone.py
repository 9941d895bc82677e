"""Tone adaptation: docs/behaviour.md#tone, SC-12, B-TONE-9, cases T1–T18, P2–P8."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptpipe.rules.tone import (
    ACTIVATE_THRESHOLD,
    ALL_TAGS,
    ALPHA,
    DEACTIVATE_THRESHOLD,
    EXCLUSIVE_LOSER_SCORE,
    EXCLUSIVE_PAIRS,
    GO_ZERO_TIME,
    INTERACTION_TAGS,
    MIN_IMPLICIT_INTERVAL,
    STANCE_TAGS,
    STYLE_TAGS,
    ProfileTone,
    ToneProposal,
    UpdateSource,
    build_tone_guide,
    update_profile_tone,
    validate_proposal,
)

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
STEP = timedelta(minutes=5)
SAFETY_LINE = "- NEVER mirror hostility, sarcasm, insults, or unsafe language.\n"
HEADER = "\n<TONE POLICY>\nAdapt your responses to the user's communication style:\n"
FOOTER = "</TONE POLICY>\n"


def implicit(*tags: str, scores: dict[str, float] | None = None) -> ToneProposal:
    return validate_proposal(list(tags), scores, "implicit")


def explicit(*tags: str, scores: dict[str, float] | None = None) -> ToneProposal:
    return validate_proposal(list(tags), scores, "explicit")


def snapshot(tone: ProfileTone) -> dict[str, object]:
    return tone.model_dump()


# ---------------------------------------------------------------- constants


def test_whitelist_has_15_tags_in_contract_order() -> None:
    # Given the whitelist (T17)
    # Then it has 15 unique tags: style, then stance, then interaction, in docs/behaviour.md#B-TONE-1 order
    assert len(ALL_TAGS) == 15
    assert len(set(ALL_TAGS)) == 15
    assert ALL_TAGS == STYLE_TAGS + STANCE_TAGS + INTERACTION_TAGS
    assert ALL_TAGS[:4] == ("concise", "detailed", "formal", "casual")
    assert STANCE_TAGS == ("warm_supportive", "neutral_professional", "direct_coach", "gentle_coach")
    assert INTERACTION_TAGS == ("confirm_before_acting", "default_actionable", "high_autonomy")


def test_constants_match_the_contract() -> None:
    assert EXCLUSIVE_PAIRS == (
        ("concise", "detailed"),
        ("formal", "casual"),
        ("direct_coach", "gentle_coach"),
    )
    assert ALPHA == 0.15
    assert ACTIVATE_THRESHOLD == 0.7
    assert DEACTIVATE_THRESHOLD == 0.4
    assert timedelta(minutes=3) == MIN_IMPLICIT_INTERVAL
    assert EXCLUSIVE_LOSER_SCORE == 0.39


# ---------------------------------------------------------------- validate_proposal


def test_validate_strips_unknown_tags_and_normalizes() -> None:
    # Given tags with an unknown, an upper-case, a padded and an injected tag (T1)
    # When validated
    proposal = validate_proposal(["concise", "UNKNOWN", "formal", "  detailed  ", "injected_tag"])
    # Then only the 3 whitelisted tags remain, in first-seen order
    assert proposal.tags == ["concise", "formal", "detailed"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(1.5, 1.0), (-0.3, 0.0), (0.6, 0.6), (0, 0.0), (1, 1.0), (0.123456, 0.1235), (0.12344, 0.1234)],
)
def test_validate_clamps_and_rounds_scores(raw: float, expected: float) -> None:
    # Given a score outside [0,1] or with more than 4 decimals (T2)
    # When validated
    proposal = validate_proposal(None, {"concise": raw})
    # Then it is clamped to [0,1] and rounded to 4 decimals
    assert proposal.scores == {"concise": expected}


def test_validate_scores_are_whitelisted_and_must_be_numbers() -> None:
    # Given scores with unknown keys, padded keys and non-numeric values
    scores = {
        "injected_tag": 0.9,
        " Formal ": 0.8,
        "casual": "0.5",
        "detailed": True,
        "bullet_points": math.nan,
        "high_autonomy": math.inf,
        "gentle_coach": -math.inf,
        "direct_coach": None,
    }
    # When validated
    proposal = validate_proposal([], scores)
    # Then only whitelisted tags with real numbers survive, clamped
    assert proposal.scores == {"formal": 0.8, "high_autonomy": 1.0, "gentle_coach": 0.0}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (None, UpdateSource.IMPLICIT),
        ("", UpdateSource.IMPLICIT),
        ("implicit", UpdateSource.IMPLICIT),
        ("explicit", UpdateSource.EXPLICIT),
        (" Explicit ", UpdateSource.EXPLICIT),
        ("EXPLICIT", UpdateSource.EXPLICIT),
        ("explicitly", UpdateSource.IMPLICIT),
        ("user_said_so", UpdateSource.IMPLICIT),
        (1, UpdateSource.IMPLICIT),
    ],
)
def test_validate_source_is_explicit_only_for_explicit(source: object, expected: UpdateSource) -> None:
    # Given a proposal with this source (T3: none means implicit)
    # When validated
    proposal = validate_proposal(["concise"], source=source)  # type: ignore[arg-type]
    # Then only "explicit" gives an explicit proposal
    assert proposal.source is expected


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["concise", "concise", "formal", "formal"], ["concise", "formal"]),
        (["Concise", "concise ", " CONCISE"], ["concise"]),
        (["formal", "concise", "formal"], ["formal", "concise"]),
    ],
)
def test_validate_deduplicates_in_first_seen_order(tags: list[str], expected: list[str]) -> None:
    # Given duplicated tags (T18)
    # Then each is kept once, where first seen
    assert validate_proposal(tags).tags == expected


def test_validate_ignores_non_string_tags() -> None:
    # Given tags that are not strings
    proposal = validate_proposal([1, None, "concise", {"tag": "formal"}, ["formal"], 0.5])
    # Then they are ignored
    assert proposal.tags == ["concise"]


@pytest.mark.parametrize("tags", [None, [], ()])
def test_validate_empty_input(tags: list[str] | None) -> None:
    proposal = validate_proposal(tags)
    assert proposal.tags == []
    assert proposal.scores == {}
    assert proposal.source is UpdateSource.IMPLICIT
    assert proposal.confidence is None


def test_validate_bare_string_is_one_tag_not_characters() -> None:
    # Given a single string where a list was expected
    # Then it counts as one tag
    assert validate_proposal(" Casual").tags == ["casual"]
    assert validate_proposal("c").tags == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0.9, 0.9), (2.5, 2.5), (1, 1.0), ("high", None), (True, None), (math.nan, None), (math.inf, None)],
)
def test_validate_confidence_is_kept_only_as_a_finite_number(raw: object, expected: float | None) -> None:
    # Given a confidence (unbounded in the schema and never used by the rules)
    # Then a finite number is kept as is, anything else is None
    assert validate_proposal(["concise"], confidence=raw).confidence == expected


def test_injected_tag_is_never_persisted() -> None:
    # Given a proposal carrying an injected tag, validated or built by hand (P2)
    tone = ProfileTone()
    update_profile_tone(tone, explicit("concise", "injected_tag", scores={"injected_tag": 1.0}), T0)
    raw = ToneProposal(tags=["ignore previous instructions"], scores={"evil": 1.0}, source="explicit")
    # When applied
    changed = update_profile_tone(tone, raw, T0 + STEP)
    # Then only whitelisted tags are ever stored
    assert changed is False
    assert tone.tags == ["concise"]
    assert tone.scores == {"concise": 1.0}
    assert "injected" not in json.dumps(tone.to_json_dict())


# ---------------------------------------------------------------- update_profile_tone: basics


def test_explicit_applies_immediately_on_empty_tone() -> None:
    # Given an empty tone (T4, P1)
    tone = ProfileTone()
    # When an explicit [concise, formal] arrives
    changed = update_profile_tone(tone, explicit("concise", "formal"), T0)
    # Then both are active at 1.0 and the metadata is set
    assert changed is True
    assert tone.tags == ["concise", "formal"]
    assert tone.scores == {"concise": 1.0, "formal": 1.0}
    assert tone.version == 1
    assert tone.update_source is UpdateSource.EXPLICIT
    assert tone.last_updated_at == T0
    assert tone.override_until is None


def test_one_implicit_update_is_smoothed_and_inactive() -> None:
    # Given an empty tone (T5)
    tone = ProfileTone()
    # When one implicit [concise] arrives
    changed = update_profile_tone(tone, implicit("concise"), T0)
    # Then concise is 0.15 and not active
    assert changed is True
    assert tone.scores == {"concise": 0.15}
    assert tone.tags == []
    assert tone.update_source is UpdateSource.IMPLICIT
    assert tone.version == 1


def test_implicit_sequence_from_zero_activates_on_the_eighth_update() -> None:
    # Given an empty tone
    tone = ProfileTone()
    seen: list[float] = []
    active: list[bool] = []
    # When 8 implicit [concise] arrive 5 minutes apart
    for i in range(1, 9):
        assert update_profile_tone(tone, implicit("concise"), T0 + i * STEP) is True
        seen.append(tone.scores["concise"])
        active.append("concise" in tone.tags)
    # Then the EMA follows the contract and activates exactly on the 8th
    assert seen == [0.15, 0.2775, 0.3859, 0.478, 0.5563, 0.6229, 0.6795, 0.7276]
    assert active == [False] * 7 + [True]


def test_thirty_implicit_updates_activate() -> None:
    # Given an empty tone (T6)
    tone = ProfileTone()
    # When 30 implicit [concise] arrive 5 minutes apart
    for i in range(1, 31):
        update_profile_tone(tone, implicit("concise"), T0 + i * STEP)
    # Then concise is active
    assert tone.tags == ["concise"]
    assert tone.scores["concise"] > 0.99


def test_decay_from_075_deactivates_on_the_fourth_update() -> None:
    # Given concise active at 0.75
    tone = ProfileTone(tags=["concise"], scores={"concise": 0.75})
    seen: list[float] = []
    active: list[bool] = []
    # When 4 implicit [formal] arrive 5 minutes apart
    for i in range(1, 5):
        update_profile_tone(tone, implicit("formal"), T0 + i * STEP)
        seen.append(tone.scores["concise"])
        active.append("concise" in tone.tags)
    # Then concise decays (×0.85) and is dropped once at or below 0.4
    assert seen == [0.6375, 0.5419, 0.4606, 0.3915]
    assert active == [True, True, True, False]


def test_thirty_implicit_updates_of_another_tag_deactivate() -> None:
    # Given concise active at 0.75 (T7)
    tone = ProfileTone(tags=["concise"], scores={"concise": 0.75})
    # When 30 implicit [formal] arrive
    for i in range(1, 31):
        update_profile_tone(tone, implicit("formal"), T0 + i * STEP)
    # Then concise is inactive and at or below 0.4, formal is active
    assert "concise" not in tone.tags
    assert tone.scores["concise"] <= DEACTIVATE_THRESHOLD
    assert tone.tags == ["formal"]


def test_implicit_from_08_gives_083() -> None:
    tone = ProfileTone(scores={"concise": 0.8})
    assert update_profile_tone(tone, implicit("concise"), T0) is True
    assert tone.scores == {"concise": 0.83}
    assert tone.tags == ["concise"]


def test_implicit_score_overrides_the_binary_observation() -> None:
    # Given concise at 0.5
    tone = ProfileTone(scores={"concise": 0.5})
    # When an implicit proposal names concise but scores it 0.0
    update_profile_tone(tone, implicit("concise", scores={"concise": 0.0}), T0)
    # Then the score moves towards 0, not towards 1
    assert tone.scores == {"concise": 0.425}


def test_explicit_sets_scores_directly_without_decay() -> None:
    # Given concise at 0.75 and formal at 0.2
    tone = ProfileTone(tags=["concise"], scores={"concise": 0.75, "formal": 0.2})
    # When an explicit proposal scores formal 0.9
    update_profile_tone(tone, explicit(scores={"formal": 0.9}), T0)
    # Then formal is set directly and concise does not decay
    assert tone.scores == {"concise": 0.75, "formal": 0.9}
    assert tone.tags == ["concise", "formal"]


def test_zero_scores_do_not_decay_and_unknown_stored_scores_are_dropped() -> None:
    tone = ProfileTone(scores={"concise": 0.0, "legacy_tag": 0.9})
    update_profile_tone(tone, implicit("formal"), T0)
    assert tone.scores == {"concise": 0.0, "formal": 0.15}


def test_decay_alone_is_a_change() -> None:
    # Given formal saturated at 1.0 and concise at 0.5
    tone = ProfileTone(scores={"formal": 1.0, "concise": 0.5})
    # When implicit [formal] arrives (formal stays 1.0)
    changed = update_profile_tone(tone, implicit("formal"), T0)
    # Then the decay of concise still counts
    assert changed is True
    assert tone.scores == {"formal": 1.0, "concise": 0.425}


@pytest.mark.parametrize(
    ("tone", "proposal"),
    [
        (ProfileTone(tags=["concise"], scores={"concise": 1.0}), explicit("concise")),
        (ProfileTone(tags=["concise"], scores={"concise": 1.0}), implicit("concise")),
        (ProfileTone(scores={"formal": 0.5}), explicit(scores={"formal": 0.5})),
    ],
)
def test_no_score_change_returns_false_and_leaves_tone_untouched(tone: ProfileTone, proposal: ToneProposal) -> None:
    # Given a tone that already has the proposed scores
    before = snapshot(tone)
    # When the same values are proposed
    changed = update_profile_tone(tone, proposal, T0)
    # Then nothing changes, not even the timestamp or version
    assert changed is False
    assert snapshot(tone) == before


@pytest.mark.parametrize(
    "proposal",
    [
        validate_proposal([], source="implicit"),
        validate_proposal(None, source="explicit"),
        validate_proposal(["injected_tag"], {"unknown": 1.0}, "explicit"),
        ToneProposal(tags=["not_a_tag", "  "], source="explicit"),
    ],
)
def test_empty_proposal_changes_nothing(proposal: ToneProposal) -> None:
    # Given an empty tone and a proposal with no whitelisted observation (T16)
    tone = ProfileTone()
    # When applied
    changed = update_profile_tone(tone, proposal, T0)
    # Then nothing changes; the version stays for the caller to fill in
    assert changed is False
    assert snapshot(tone) == snapshot(ProfileTone())


def test_hand_built_proposal_scores_are_clamped_and_rounded() -> None:
    tone = ProfileTone()
    proposal = ToneProposal(scores={"concise": 1.7, "formal": 0.123456, "casual": -2.0}, source="explicit")
    update_profile_tone(tone, proposal, T0)
    assert tone.scores == {"concise": 1.0, "formal": 0.1235, "casual": 0.0}


def test_naive_now_is_taken_as_utc() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, explicit("concise"), datetime(2026, 3, 2, 12, 0))
    assert tone.last_updated_at == T0


def test_update_source_follows_the_last_applied_proposal() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, explicit("concise"), T0)
    update_profile_tone(tone, implicit("formal"), T0 + STEP)
    assert tone.update_source is UpdateSource.IMPLICIT
    assert tone.last_updated_at == T0 + STEP


def test_override_until_is_never_touched() -> None:
    until = T0 + timedelta(days=1)
    tone = ProfileTone(override_until=until)
    update_profile_tone(tone, explicit("concise"), T0)
    assert tone.override_until == until


# ---------------------------------------------------------------- rate limit


@pytest.mark.parametrize(
    ("elapsed", "applied"),
    [
        (timedelta(0), False),
        (timedelta(minutes=2), False),
        (timedelta(minutes=3) - timedelta(microseconds=1), False),
        (timedelta(minutes=-10), False),
        (timedelta(minutes=3), True),
        (timedelta(minutes=4), True),
    ],
)
def test_implicit_rate_limit(elapsed: timedelta, applied: bool) -> None:
    # Given a tone last updated at T0 (T11, P4)
    tone = ProfileTone(scores={"concise": 0.5}, last_updated_at=T0, update_source="explicit", version=1)
    before = snapshot(tone)
    # When an implicit [formal] arrives after `elapsed`
    changed = update_profile_tone(tone, implicit("formal"), T0 + elapsed)
    # Then it is applied only 3 minutes or more later; otherwise nothing changes
    assert changed is applied
    if not applied:
        assert snapshot(tone) == before
    else:
        assert tone.scores["formal"] == 0.15


def test_explicit_bypasses_rate_limit_and_restarts_it() -> None:
    # Given a tone updated just now (T12)
    tone = ProfileTone(last_updated_at=T0)
    # When an explicit [concise] arrives one second later
    assert update_profile_tone(tone, explicit("concise"), T0 + timedelta(seconds=1)) is True
    # Then it is applied and restarts the 3-minute window for implicit updates
    assert tone.last_updated_at == T0 + timedelta(seconds=1)
    assert update_profile_tone(tone, implicit("formal"), T0 + timedelta(minutes=3)) is False
    assert update_profile_tone(tone, implicit("formal"), T0 + timedelta(minutes=3, seconds=1)) is True


def test_contract_scenario_12() -> None:
    # Given concise at 0.8, last updated 2 minutes ago
    tone = ProfileTone(scores={"concise": 0.8}, last_updated_at=T0, version=1)
    proposal = validate_proposal(["concise", "warm_supportive"], source="implicit", confidence=0.9)
    before = snapshot(tone)
    # When the implicit proposal arrives 2 minutes after: rejected
    assert update_profile_tone(tone, proposal, T0 + timedelta(minutes=2)) is False
    assert snapshot(tone) == before
    # When it arrives 4 minutes after: EMA applied
    assert update_profile_tone(tone, proposal, T0 + timedelta(minutes=4)) is True
    assert tone.scores == {"concise": 0.83, "warm_supportive": 0.15}
    assert tone.tags == ["concise"]
    # When the same tags come explicitly right after: applied directly, no EMA
    explicit_proposal = validate_proposal(["concise", "warm_supportive"], source="explicit", confidence=0.9)
    assert update_profile_tone(tone, explicit_proposal, T0 + timedelta(minutes=5)) is True
    assert tone.scores == {"concise": 1.0, "warm_supportive": 1.0}
    assert tone.tags == ["concise", "warm_supportive"]


# ---------------------------------------------------------------- hysteresis


@pytest.mark.parametrize("score", [0.4001, 0.5, 0.6999])
@pytest.mark.parametrize("was_active", [True, False])
def test_between_thresholds_keeps_state(score: float, was_active: bool) -> None:
    # Given concise active or not
    tone = ProfileTone(tags=["concise"] if was_active else [], scores={"concise": 0.9 if was_active else 0.1})
    # When an explicit score between 0.4 and 0.7 is set
    update_profile_tone(tone, explicit(scores={"concise": score}), T0)
    # Then concise keeps its previous state
    assert ("concise" in tone.tags) is was_active


@pytest.mark.parametrize(("score", "active"), [(0.7, True), (1.0, True), (0.4, False), (0.0, False)])
@pytest.mark.parametrize("was_active", [True, False])
def test_thresholds_are_inclusive(score: float, active: bool, was_active: bool) -> None:
    # Given concise in either state, at a score other than the proposed one
    tone = ProfileTone(tags=["concise"] if was_active else [], scores={"concise": 0.55})
    # When set to a threshold or beyond
    update_profile_tone(tone, explicit(scores={"concise": score}), T0)
    # Then >= 0.7 activates and <= 0.4 deactivates
    assert ("concise" in tone.tags) is active


def test_decay_inside_the_band_keeps_an_active_tag() -> None:
    tone = ProfileTone(tags=["concise"], scores={"concise": 0.65})
    update_profile_tone(tone, implicit("formal"), T0)
    assert tone.scores["concise"] == 0.5525
    assert "concise" in tone.tags


def test_unscored_active_tag_is_kept() -> None:
    # Given a legacy active tag with no score
    tone = ProfileTone(tags=["bullet_points"])
    # When an unrelated update is applied
    update_profile_tone(tone, explicit("concise"), T0)
    # Then it stays active
    assert tone.tags == ["concise", "bullet_points"]


# ---------------------------------------------------------------- exclusive pairs: contract ties


def test_explicit_both_named_higher_wins_concise() -> None:
    # Given an explicit proposal scoring concise 0.9 and detailed 0.8 (T8: both named, contract rule)
    tone = ProfileTone()
    update_profile_tone(tone, explicit("concise", "detailed", scores={"concise": 0.9, "detailed": 0.8}), T0)
    # Then only concise is active; detailed is lowered to 0.39
    assert tone.tags == ["concise"]
    assert tone.scores == {"concise": 0.9, "detailed": EXCLUSIVE_LOSER_SCORE}


def test_explicit_both_named_higher_wins_casual() -> None:
    # Given an explicit proposal scoring formal 0.8 and casual 0.85 (T9: both named, contract rule)
    tone = ProfileTone()
    update_profile_tone(tone, explicit(scores={"formal": 0.8, "casual": 0.85}), T0)
    # Then only casual is active
    assert tone.tags == ["casual"]
    assert tone.scores == {"formal": EXCLUSIVE_LOSER_SCORE, "casual": 0.85}


@pytest.mark.parametrize(("first", "second"), EXCLUSIVE_PAIRS)
@pytest.mark.parametrize("reverse", [False, True])
def test_explicit_tie_goes_to_the_first_of_the_pair(first: str, second: str, reverse: bool) -> None:
    # Given an explicit proposal naming both tags of a pair, in either order
    names = [second, first] if reverse else [first, second]
    tone = ProfileTone()
    update_profile_tone(tone, explicit(*names), T0)
    # Then the first tag of the pair wins the tie
    assert tone.tags == [first]
    assert tone.scores == {first: 1.0, second: EXCLUSIVE_LOSER_SCORE}


def test_profile_then_both_of_a_pair_keeps_concise() -> None:
    # Given explicit [concise, formal] saved (P3)
    tone = ProfileTone()
    update_profile_tone(tone, explicit("concise", "formal"), T0)
    # When explicit [concise, detailed] follows (both named: the contract tie rule applies)
    update_profile_tone(tone, explicit("concise", "detailed"), T0 + STEP)
    # Then concise and detailed are not both active; concise wins the tie
    assert tone.tags == ["concise", "formal"]
    assert tone.scores["detailed"] == EXCLUSIVE_LOSER_SCORE


def test_implicit_tie_goes_to_the_first_of_the_pair() -> None:
    # Given both of a pair observed implicitly together until they reach 0.7
    tone = ProfileTone()
    for i in range(1, 9):
        update_profile_tone(tone, implicit("casual", "formal"), T0 + i * STEP)
    # Then formal (first of the pair) wins and casual drops to 0.39
    assert tone.tags == ["formal"]
    assert tone.scores == {"formal": 0.7276, "casual": EXCLUSIVE_LOSER_SCORE}


@pytest.mark.parametrize("source", ["explicit", "implicit"])
def test_no_emojis_beats_emojis_ok_when_both_named(source: str) -> None:
    # Given a proposal naming both no_emojis and emojis_ok (T10, P5)
    tone = ProfileTone()
    proposal = validate_proposal(["emojis_ok", "no_emojis"], source=source)
    steps = 1 if source == "explicit" else 8
    for i in range(1, steps + 1):
        update_profile_tone(tone, proposal, T0 + i * STEP)
    # Then only no_emojis is active and emojis_ok is forced to 0
    assert tone.tags == ["no_emojis"]
    assert tone.scores["emojis_ok"] == 0.0


def test_explicit_no_emojis_after_emojis_ok_forces_it_off() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, explicit("emojis_ok"), T0)
    update_profile_tone(tone, explicit("no_emojis"), T0 + STEP)
    assert tone.tags == ["no_emojis"]
    assert tone.scores == {"emojis_ok": 0.0, "no_emojis": 1.0}


def test_implicit_cannot_switch_sides_at_once() -> None:
    # Given formal active at 1.0
    tone = ProfileTone()
    update_profile_tone(tone, explicit("formal"), T0)
    # When one implicit [casual] arrives (docs/behaviour.md#B-TONE-9 is for explicit proposals only)
    update_profile_tone(tone, implicit("casual"), T0 + STEP)
    # Then formal merely decays and stays active
    assert tone.tags == ["formal"]
    assert tone.scores == {"formal": 0.85, "casual": 0.15}


# ---------------------------------------------------------------- docs/behaviour.md#B-TONE-9: explicit switches

SWITCHES = [(a, b) for a, b in EXCLUSIVE_PAIRS] + [(b, a) for a, b in EXCLUSIVE_PAIRS]


@pytest.mark.parametrize(("old", "new"), SWITCHES)
def test_explicit_switch_inside_a_pair_takes_effect(old: str, new: str) -> None:
    # Given `old` explicitly active at 1.0
    tone = ProfileTone()
    update_profile_tone(tone, explicit(old), T0)
    # When an explicit proposal names only `new` (docs/behaviour.md#B-TONE-9 fixes the original, where `new` lost)
    changed = update_profile_tone(tone, explicit(new), T0 + timedelta(seconds=30))
    # Then `new` is active and `old` is lowered to 0.39 and dropped
    assert changed is True
    assert tone.tags == [new]
    assert tone.scores == {old: EXCLUSIVE_LOSER_SCORE, new: 1.0}


def test_explicit_emojis_ok_after_no_emojis_takes_effect() -> None:
    # Given no_emojis explicitly active (so emojis_ok was forced to 0)
    tone = ProfileTone()
    update_profile_tone(tone, explicit("no_emojis", "emojis_ok"), T0)
    # When an explicit proposal names only emojis_ok (docs/behaviour.md#B-TONE-9)
    changed = update_profile_tone(tone, explicit("emojis_ok"), T0 + STEP)
    # Then emojis_ok is active and no_emojis is lowered to 0.39 and dropped
    assert changed is True
    assert tone.tags == ["emojis_ok"]
    assert tone.scores == {"no_emojis": EXCLUSIVE_LOSER_SCORE, "emojis_ok": 1.0}
    assert "Do NOT use emojis." not in build_tone_guide(tone.tags)


def test_explicit_switch_keeps_other_tags() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, explicit("formal", "concise", "warm_supportive"), T0)
    update_profile_tone(tone, explicit("casual"), T0 + STEP)
    assert tone.tags == ["concise", "casual", "warm_supportive"]


def test_explicit_switch_below_activation_does_not_overrule() -> None:
    # Given formal active at 1.0
    tone = ProfileTone()
    update_profile_tone(tone, explicit("formal"), T0)
    # When an explicit proposal scores casual only 0.5
    update_profile_tone(tone, explicit(scores={"casual": 0.5}), T0 + STEP)
    # Then formal stays; casual is recorded but inactive
    assert tone.tags == ["formal"]
    assert tone.scores == {"formal": 1.0, "casual": 0.5}


def test_explicit_switch_never_creates_or_raises_the_counterpart() -> None:
    # Given formal low (0.2) and no concise/detailed scores at all
    tone = ProfileTone(scores={"formal": 0.2})
    # When explicit [casual, detailed] arrives
    update_profile_tone(tone, explicit("casual", "detailed"), T0)
    # Then formal stays 0.2 and concise gets no score
    assert tone.scores == {"formal": 0.2, "casual": 1.0, "detailed": 1.0}
    assert tone.tags == ["detailed", "casual"]


def test_explicit_switch_removes_an_unscored_active_counterpart() -> None:
    # Given formal active with no score (legacy data)
    tone = ProfileTone(tags=["formal"])
    # When explicit [casual] arrives
    update_profile_tone(tone, explicit("casual"), T0)
    # Then formal is lowered to 0.39 and dropped
    assert tone.tags == ["casual"]
    assert tone.scores == {"formal": EXCLUSIVE_LOSER_SCORE, "casual": 1.0}


def test_explicit_choice_that_only_lowers_the_counterpart_is_a_change() -> None:
    # Given concise at 1.0 and detailed still active in the hysteresis band
    tone = ProfileTone(tags=["concise", "detailed"], scores={"concise": 1.0, "detailed": 0.5})
    # When explicit [concise] arrives (concise itself does not change)
    changed = update_profile_tone(tone, explicit("concise"), T0)
    # Then detailed is dropped and the update counts
    assert changed is True
    assert tone.tags == ["concise"]
    assert tone.scores == {"concise": 1.0, "detailed": EXCLUSIVE_LOSER_SCORE}


def test_repeating_an_explicit_choice_is_a_noop() -> None:
    tone = ProfileTone()
    update_profile_tone(tone, explicit("formal"), T0)
    update_profile_tone(tone, explicit("casual"), T0 + STEP)
    before = snapshot(tone)
    assert update_profile_tone(tone, explicit("casual"), T0 + 2 * STEP) is False
    assert snapshot(tone) == before


# ---------------------------------------------------------------- order


def test_active_tags_follow_whitelist_order() -> None:
    # Given an explicit proposal in reverse whitelist order
    tone = ProfileTone()
    update_profile_tone(tone, explicit(*reversed(ALL_TAGS)), T0)
    # Then active tags follow the whitelist order (losers of pairs and emojis_ok removed)
    assert tone.tags == [
        "concise",
        "formal",
        "no_emojis",
        "bullet_points",
        "one_question_at_a_time",
        "warm_supportive",
        "neutral_professional",
        "direct_coach",
        "confirm_before_acting",
        "default_actionable",
        "high_autonomy",
    ]


def test_stored_tags_are_reordered_and_cleaned_on_change() -> None:
    # Given stored tags out of order, with an unknown one
    tone = ProfileTone(tags=["high_autonomy", "legacy_tag", "concise"])
    # When any update applies
    update_profile_tone(tone, explicit("formal"), T0)
    # Then tags are in whitelist order and unknown tags are gone
    assert tone.tags == ["concise", "formal", "high_autonomy"]


# ---------------------------------------------------------------- build_tone_guide


@pytest.mark.parametrize("tags", [None, [], ()])
def test_guide_is_empty_without_tags(tags: list[str] | None) -> None:
    # T13
    assert build_tone_guide(tags) == ""


def test_guide_contains_the_tone_test_phrases() -> None:
    # Given [concise, no_emojis, warm_supportive] (T14)
    guide = build_tone_guide(["concise", "no_emojis", "warm_supportive"])
    # Then the key phrases are there
    for phrase in ("concise", "NOT use emojis", "warm", "TONE POLICY", "Be concise", "warm, supportive"):
        assert phrase in guide
    assert "neutral, professional" not in guide


def test_guide_defaults_to_a_neutral_stance() -> None:
    # Given only a style tag (T15)
    guide = build_tone_guide(["concise"])
    # Then the exact block has the default stance and the safety line
    assert guide == (
        HEADER
        + "- Be concise: short sentences, no filler.\n"
        + "- Keep a neutral, professional stance.\n"
        + SAFETY_LINE
        + FOOTER
    )


def test_guide_for_direct_coach() -> None:
    # P8
    guide = build_tone_guide(["direct_coach"])
    assert "direct coach" in guide
    assert "neutral, professional" not in guide


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_every_tag_renders_one_line(tag: str) -> None:
    # Given a single tag
    guide = build_tone_guide([tag])
    lines = guide.removeprefix(HEADER).removesuffix(FOOTER).splitlines()
    # Then: its own line, the default stance unless it is a stance, and the safety line last
    expected_count = 2 if tag in STANCE_TAGS else 3
    assert guide.startswith(HEADER)
    assert guide.endswith(SAFETY_LINE + FOOTER)
    assert len(lines) == expected_count
    assert all(line.startswith("- ") for line in lines)


def test_no_emojis_suppresses_the_emojis_ok_line() -> None:
    with_both = build_tone_guide(["emojis_ok", "no_emojis"])
    only_ok = build_tone_guide(["emojis_ok"])
    assert "- Do NOT use emojis.\n" in with_both
    assert with_both.count("\n- ") == 3  # no_emojis, default stance, safety
    assert "Do NOT use emojis." not in only_ok
    assert only_ok.count("\n- ") == 3  # emojis_ok, default stance, safety


def test_guide_orders_style_stance_interaction_regardless_of_input_order() -> None:
    # Given all tags in reverse order
    guide = build_tone_guide(list(reversed(ALL_TAGS)))
    ordered = build_tone_guide(list(ALL_TAGS))
    # Then the output is the same and follows whitelist order, emojis_ok left out
    assert guide == ordered
    body = guide.removeprefix(HEADER).removesuffix(FOOTER).splitlines()
    assert len(body) == 15  # 15 tags - emojis_ok + safety
    assert body[0].startswith("- Be concise")
    assert body[4] == "- Do NOT use emojis."
    assert "warm, supportive" in body[7]
    assert body[8] == "- Keep a neutral, professional stance."
    assert "direct coach" in body[9]
    assert body[-1] + "\n" == SAFETY_LINE


def test_guide_normalizes_and_ignores_unknown_tags() -> None:
    assert build_tone_guide([" Concise ", "CONCISE"]) == build_tone_guide(["concise"])
    # Non-empty input with no known tag still yields the default policy block.
    assert build_tone_guide(["injected_tag"]) == (
        HEADER + "- Keep a neutral, professional stance.\n" + SAFETY_LINE + FOOTER
    )


# ---------------------------------------------------------------- ProfileTone JSON


def test_profile_tone_json_round_trip() -> None:
    # Given a tone saved by an explicit update (P6)
    tone = ProfileTone()
    update_profile_tone(tone, explicit("concise", "formal", scores={"formal": 0.85}), T0)
    # When serialized to JSON text and loaded back
    data = json.loads(json.dumps(tone.to_json_dict()))
    loaded = ProfileTone.model_validate(data)
    # Then everything survives
    assert data == {
        "tone_tags": ["concise", "formal"],
        "tone_scores": {"concise": 1.0, "formal": 0.85},
        "tone_version": 1,
        "tone_last_updated_at": "2026-03-02T12:00:00Z",
        "tone_update_source": "explicit",
    }
    assert loaded == tone


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"tone_last_updated_at": GO_ZERO_TIME},
        {"tone_last_updated_at": "0001-01-01T00:00:00.000Z", "tone_update_source": ""},
    ],
)
def test_legacy_tone_json_loads_empty(data: dict[str, str]) -> None:
    # Given a legacy or zero tone (P7: the caller fills in tone_version 1)
    tone = ProfileTone.model_validate(data)
    # Then it loads with no tags, no scores and no timestamp
    assert tone.tags == []
    assert tone.scores == {}
    assert tone.version == 0
    assert tone.last_updated_at is None
    assert tone.update_source is None
    assert tone.to_json_dict() == {"tone_version": 0, "tone_last_updated_at": GO_ZERO_TIME}


def test_loaded_zero_time_does_not_rate_limit() -> None:
    tone = ProfileTone.model_validate({"tone_version": 1, "tone_last_updated_at": GO_ZERO_TIME})
    assert update_profile_tone(tone, implicit("concise"), T0) is True


# ---------------------------------------------------------------- properties

_tag = st.sampled_from([*ALL_TAGS, "injected_tag", " Concise "])
_proposal = st.builds(
    validate_proposal,
    st.lists(_tag, max_size=5),
    st.dictionaries(_tag, st.floats(-1, 2, allow_nan=False), max_size=3),
    st.sampled_from(["explicit", "implicit"]),
)


# Derandomized so the run is reproducible; no example database is written.
@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(steps=st.lists(st.tuples(_proposal, st.integers(0, 10)), max_size=12))
def test_invariants_hold_for_any_sequence(steps: list[tuple[ToneProposal, int]]) -> None:
    # Given any sequence of proposals, a few minutes apart
    tone = ProfileTone()
    now = T0
    for proposal, minutes in steps:
        now += timedelta(minutes=minutes)
        before = snapshot(tone)
        changed = update_profile_tone(tone, proposal, now)
        # Then a rejected or empty update leaves the tone untouched
        if not changed:
            assert snapshot(tone) == before
            continue
        # And scores are whitelisted, in [0,1], with at most 4 decimals
        for tag, score in tone.scores.items():
            assert tag in ALL_TAGS
            assert 0.0 <= score <= 1.0
            assert round(score, 4) == score
        # And active tags are whitelisted, unique and in whitelist order
        assert tone.tags == [tag for tag in ALL_TAGS if tag in tone.tags]
        assert not {"no_emojis", "emojis_ok"} <= set(tone.tags)
        assert tone.version == 1
        assert tone.last_updated_at == now
        assert tone.update_source is proposal.source
        # And an explicit proposal naming one side of a pair at >= 0.7 makes that side win
        if proposal.source is UpdateSource.EXPLICIT:
            observed = {tag: 1.0 for tag in proposal.tags} | proposal.scores
            for first, second in EXCLUSIVE_PAIRS:
                named = [tag for tag in (first, second) if tag in observed]
                if len(named) == 1 and observed[named[0]] >= ACTIVATE_THRESHOLD:
                    loser = second if named[0] == first else first
                    assert named[0] in tone.tags
                    assert loser not in tone.tags


def test_hysteresis_never_leaves_both_tags_of_a_pair_active():
    # Given concise held active by hysteresis while detailed climbs past 0.7 through implicit updates
    from datetime import UTC, datetime, timedelta

    from promptpipe.rules.tone import ProfileTone, update_profile_tone, validate_proposal

    tone = ProfileTone()
    now = datetime(2026, 3, 2, tzinfo=UTC)
    update_profile_tone(tone, validate_proposal(["concise"], source="explicit"), now)
    for _ in range(40):
        now += timedelta(minutes=5)
        update_profile_tone(tone, validate_proposal(["concise", "detailed"], source="implicit"), now)
    for _ in range(12):
        now += timedelta(minutes=5)
        update_profile_tone(tone, validate_proposal(["detailed"], source="implicit"), now)
    # Then at most one tag of the pair is active
    assert not {"concise", "detailed"} <= set(tone.tags)


# ---------------------------------------------------------------- exclusive pairs under hysteresis


@pytest.mark.parametrize(("first", "second"), EXCLUSIVE_PAIRS)
@pytest.mark.parametrize("band_score", [0.5, 0.0])
def test_a_pair_held_active_by_hysteresis_at_equal_scores_keeps_the_first(
    first: str, second: str, band_score: float
) -> None:
    # Given both tags of a pair active from before (a stored profile) at the same score, inside the
    # hysteresis band or unscored: neither crosses 0.7, so the contract's rule does not apply
    scores = {first: band_score, second: band_score} if band_score else {}
    tone = ProfileTone(tags=[second, first], scores=scores)
    # When an unrelated tag is chosen explicitly
    assert update_profile_tone(tone, explicit("bullet_points"), T0) is True
    # Then the tie goes to the first of the pair; the scores are not touched
    assert tone.tags == [tag for tag in ALL_TAGS if tag in {first, "bullet_points"}]
    assert tone.scores == {**scores, "bullet_points": 1.0}


@pytest.mark.parametrize(("first", "second"), EXCLUSIVE_PAIRS)
def test_a_pair_held_active_by_hysteresis_keeps_the_higher_score(first: str, second: str) -> None:
    # Given both tags of a pair active, the second scoring higher inside the band
    tone = ProfileTone(tags=[first, second], scores={first: 0.45, second: 0.65})
    # When an unrelated tag is chosen explicitly
    update_profile_tone(tone, explicit("bullet_points"), T0)
    # Then the higher one stays active, whichever side of the pair it is on
    assert tone.tags == [tag for tag in ALL_TAGS if tag in {second, "bullet_points"}]


# --- ------------------------------------------------------------------------------------------
# Tone rules at their exact thresholds and roundings (docs/behaviour.md#tone).
#
# A score of exactly 0.7 activates and overrules, a half at the fourth decimal rounds up, binary noise
# below the tenth decimal is dropped before rounding, and "no emojis" wins over "emojis ok" whichever
# way both became active. Each case is one the behaviour tests step over.


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
