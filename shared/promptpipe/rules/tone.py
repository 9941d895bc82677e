"""Tone adaptation (docs/behaviour.md#tone, B-TONE-9). Pure: no I/O, the clock is an argument.

``ProfileTone`` is the stored shape (``UserProfile.tone``). ``validate_proposal`` cleans what the
LLM proposes, ``update_profile_tone`` applies it (EMA smoothing, hysteresis, exclusive pairs, rate
limit) and ``build_tone_guide`` renders the active tags as a ``<TONE POLICY>`` block.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, Field, field_serializer, field_validator

from promptpipe.lazy_model import LazyModel

GO_ZERO_TIME = "0001-01-01T00:00:00Z"

# Whitelist, in the order of docs/behaviour.md#B-TONE-1; this order is also the order of active tags.
STYLE_TAGS: tuple[str, ...] = (
    "concise",
    "detailed",
    "formal",
    "casual",
    "no_emojis",
    "emojis_ok",
    "bullet_points",
    "one_question_at_a_time",
)
STANCE_TAGS: tuple[str, ...] = ("warm_supportive", "neutral_professional", "direct_coach", "gentle_coach")
INTERACTION_TAGS: tuple[str, ...] = ("confirm_before_acting", "default_actionable", "high_autonomy")
ALL_TAGS: tuple[str, ...] = STYLE_TAGS + STANCE_TAGS + INTERACTION_TAGS
_TAG_SET = frozenset(ALL_TAGS)

# At most one of each pair should be active; on a tie the first of the pair wins.
EXCLUSIVE_PAIRS: tuple[tuple[str, str], ...] = (
    ("concise", "detailed"),
    ("formal", "casual"),
    ("direct_coach", "gentle_coach"),
)

ALPHA = 0.15
ACTIVATE_THRESHOLD = 0.7
DEACTIVATE_THRESHOLD = 0.4
MIN_IMPLICIT_INTERVAL = timedelta(minutes=3)
# Just under the deactivation threshold, so the loser of a pair is dropped at once.
EXCLUSIVE_LOSER_SCORE = 0.39


class UpdateSource(StrEnum):
    EXPLICIT = "explicit"
    IMPLICIT = "implicit"


class ProfileTone(LazyModel):
    """``UserProfile.tone`` with the original's JSON names."""

    model_config = ConfigDict(populate_by_name=True, validate_assignment=True)

    tags: list[str] = Field(default_factory=list, alias="tone_tags")
    scores: dict[str, float] = Field(default_factory=dict, alias="tone_scores")
    version: int = Field(0, alias="tone_version")
    last_updated_at: datetime | None = Field(None, alias="tone_last_updated_at")
    update_source: UpdateSource | None = Field(None, alias="tone_update_source")
    override_until: datetime | None = Field(None, alias="tone_override_until")

    @field_validator("last_updated_at", "override_until", mode="before")
    @classmethod
    def _go_zero_time_is_none(cls, value: Any) -> Any:
        if value in (None, "", GO_ZERO_TIME) or (isinstance(value, str) and value.startswith("0001-01-01")):
            return None
        return value

    @field_validator("update_source", mode="before")
    @classmethod
    def _empty_source_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_serializer("last_updated_at")
    def _serialize_last_updated(self, value: datetime | None) -> str:
        if value is None:
            return GO_ZERO_TIME
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")

    def to_json_dict(self) -> dict[str, Any]:
        """The stored JSON object: empty tags/scores/source/override are omitted (Go ``omitempty``)."""
        data: dict[str, Any] = {}
        if self.tags:
            data["tone_tags"] = list(self.tags)
        if self.scores:
            data["tone_scores"] = dict(self.scores)
        data["tone_version"] = self.version
        data["tone_last_updated_at"] = self._serialize_last_updated(self.last_updated_at)
        if self.update_source is not None:
            data["tone_update_source"] = self.update_source.value
        if self.override_until is not None:
            data["tone_override_until"] = self.override_until.astimezone(UTC).isoformat().replace("+00:00", "Z")
        return data


class ToneProposal(LazyModel):
    """A cleaned tone proposal; build it with ``validate_proposal``."""

    tags: list[str] = Field(default_factory=list)
    scores: dict[str, float] = Field(default_factory=dict)
    source: UpdateSource = UpdateSource.IMPLICIT
    confidence: float | None = None


def _clamp(value: float) -> float:
    """Limit to [0, 1] and round half-up to 4 decimals (the stored precision)."""
    if math.isnan(value) or value <= 0:
        return 0.0
    if value >= 1:
        return 1.0
    # Rounding to 10 places first drops binary noise, so 0.385875 rounds up like the original.
    return float(Decimal(repr(round(value, 10))).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


def _normalize_tag(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    tag = value.strip().lower()
    return tag if tag in _TAG_SET else None


def _as_number(value: Any) -> float | None:
    # bool is an int subclass but never a meaningful score.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def validate_proposal(
    tags: Iterable[Any] | None,
    scores: Mapping[str, Any] | None = None,
    source: str | None = None,
    confidence: Any = None,
) -> ToneProposal:
    """Clean an LLM tone proposal: whitelisted, de-duplicated tags and clamped scores.

    The source is explicit only when it says "explicit"; anything else (or nothing) is implicit.
    ``confidence`` is kept as a number when it is one, but no rule uses it (docs/behaviour.md#B-PROF-6).
    """
    if isinstance(tags, str):
        # A bare string is one tag, not an iterable of characters.
        tags = [tags]
    clean_tags: list[str] = []
    for raw in tags or ():
        tag = _normalize_tag(raw)
        if tag is not None and tag not in clean_tags:
            clean_tags.append(tag)

    clean_scores: dict[str, float] = {}
    for raw_key, raw_value in (scores or {}).items():
        key = _normalize_tag(raw_key)
        number = _as_number(raw_value)
        if key is not None and number is not None:
            clean_scores[key] = _clamp(number)

    is_explicit = isinstance(source, str) and source.strip().lower() == UpdateSource.EXPLICIT.value
    number = _as_number(confidence)
    return ToneProposal(
        tags=clean_tags,
        scores=clean_scores,
        source=UpdateSource.EXPLICIT if is_explicit else UpdateSource.IMPLICIT,
        confidence=number if number is not None and math.isfinite(number) else None,
    )


def _as_utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _observations(proposal: ToneProposal) -> dict[str, float]:
    """Each named tag observes 1.0 unless a score overrides it; unknown names are dropped."""
    observed: dict[str, float] = {}
    for raw in proposal.tags:
        tag = _normalize_tag(raw)
        if tag is not None:
            observed[tag] = 1.0
    for raw, value in proposal.scores.items():
        tag = _normalize_tag(raw)
        number = _as_number(value)
        if tag is not None and number is not None:
            observed[tag] = _clamp(number)
    return observed


def _explicit_counterparts(tag: str) -> tuple[str, ...]:
    """The tags an explicit choice of ``tag`` overrules (docs/behaviour.md#B-TONE-9)."""
    counterparts = [b if a == tag else a for a, b in EXCLUSIVE_PAIRS if tag in (a, b)]
    if tag == "emojis_ok":
        counterparts.append("no_emojis")
    return tuple(counterparts)


def _apply_explicit_wins(scores: dict[str, float], active: list[str], observed: Mapping[str, float]) -> bool:
    """An explicit choice of one side beats the unnamed other side, so users can change their mind.

    The counterpart is only ever lowered (to 0.39), never created or raised. Returns whether a
    score was lowered.
    """
    changed = False
    for tag, value in observed.items():
        if value < ACTIVATE_THRESHOLD:
            continue
        for other in _explicit_counterparts(tag):
            if other in observed:
                continue  # both sides named: the contract's tie rule decides
            current = scores.get(other)
            if current is None and other not in active:
                continue
            if current is None or current > EXCLUSIVE_LOSER_SCORE:
                scores[other] = EXCLUSIVE_LOSER_SCORE
                changed = True
    return changed


def _enforce_contract_rules(scores: dict[str, float]) -> None:
    """no_emojis beats emojis_ok; within a pair both >= 0.7 keeps the higher (tie: the first)."""
    if scores.get("no_emojis", 0.0) >= ACTIVATE_THRESHOLD and "emojis_ok" in scores:
        scores["emojis_ok"] = 0.0
    for first, second in EXCLUSIVE_PAIRS:
        a, b = scores.get(first, 0.0), scores.get(second, 0.0)
        if a >= ACTIVATE_THRESHOLD and b >= ACTIVATE_THRESHOLD:
            scores[second if a >= b else first] = EXCLUSIVE_LOSER_SCORE


def _active_tags(previous: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """Hysteresis: >= 0.7 activates, <= 0.4 deactivates, in between (or unscored) keeps state."""
    active = {tag for tag in previous if tag in _TAG_SET}
    for tag, score in scores.items():
        if score >= ACTIVATE_THRESHOLD:
            active.add(tag)
        elif score <= DEACTIVATE_THRESHOLD:
            active.discard(tag)
    if "no_emojis" in active:
        active.discard("emojis_ok")
    # Hysteresis alone can leave both tags of a pair active (one held between 0.4 and 0.7 while
    # the other crosses 0.7); mutual exclusion (docs/behaviour.md#B-TONE-7) keeps the higher, ties to the first.
    for first, second in EXCLUSIVE_PAIRS:
        if first in active and second in active:
            active.discard(second if scores.get(first, 0.0) >= scores.get(second, 0.0) else first)
    return [tag for tag in ALL_TAGS if tag in active]


def update_profile_tone(tone: ProfileTone, proposal: ToneProposal, now: datetime) -> bool:
    """Apply ``proposal`` to ``tone`` in place; return whether anything changed.

    Implicit proposals are smoothed (EMA, alpha 0.15; unobserved scores decay) and at most one per
    3 minutes is applied. Explicit proposals set scores directly, bypass the rate limit and restart
    it. On no change ``tone`` is left untouched.
    """
    now = _as_utc(now)
    explicit = proposal.source == UpdateSource.EXPLICIT
    if (
        not explicit
        and tone.last_updated_at is not None
        and now - _as_utc(tone.last_updated_at) < MIN_IMPLICIT_INTERVAL
    ):
        return False

    observed = _observations(proposal)
    if not observed:
        return False

    # Stored scores for unknown tags are dropped: they can never become active.
    scores = {tag: _clamp(value) for tag, value in tone.scores.items() if tag in _TAG_SET}
    before = dict(scores)
    if explicit:
        scores.update(observed)
    else:
        for tag, value in observed.items():
            scores[tag] = _clamp((1 - ALPHA) * scores.get(tag, 0.0) + ALPHA * value)
        for tag, previous in before.items():
            if tag not in observed and previous > 0:
                scores[tag] = _clamp((1 - ALPHA) * previous)

    changed = scores != before
    if explicit:
        changed = _apply_explicit_wins(scores, tone.tags, observed) or changed
    if not changed:
        return False

    _enforce_contract_rules(scores)
    tone.scores = scores
    tone.tags = _active_tags(tone.tags, scores)
    tone.last_updated_at = now
    tone.update_source = proposal.source
    tone.version = 1
    return True


# One instruction per tag; the required phrases (docs/behaviour.md#B-TONE-11) are kept verbatim.
_GUIDE_LINES: dict[str, str] = {
    "concise": "Be concise: short sentences, no filler.",
    "detailed": "Give fuller explanations when useful, but stay focused.",
    "formal": "Use a formal, polite register.",
    "casual": "Use a casual, friendly register.",
    "no_emojis": "Do NOT use emojis.",
    "emojis_ok": "Emojis are fine where they fit naturally.",
    "bullet_points": "Use bullet points for lists and steps.",
    "one_question_at_a_time": "Ask at most one question per message.",
    "warm_supportive": "Take a warm, supportive stance and encourage the user.",
    "neutral_professional": "Keep a neutral, professional stance.",
    "direct_coach": "Act as a direct coach: clear, action-focused feedback.",
    "gentle_coach": "Act as a gentle coach: patient, encouraging guidance.",
    "confirm_before_acting": "Check with the user before doing anything on their behalf.",
    "default_actionable": "Offer a concrete next step by default.",
    "high_autonomy": "Use your own judgement and keep confirmation questions to a minimum.",
}
_DEFAULT_STANCE = "Keep a neutral, professional stance."
_GUIDE_HEADER = "\n<TONE POLICY>\nAdapt your responses to the user's communication style:\n"
_GUIDE_SAFETY = "NEVER mirror hostility, sarcasm, insults, or unsafe language."
_GUIDE_FOOTER = "</TONE POLICY>\n"


def build_tone_guide(tags: Sequence[str] | None) -> str:
    """The ``<TONE POLICY>`` block for the active ``tags``; "" when there are none."""
    if not tags:
        return ""
    present = {tag for tag in (_normalize_tag(raw) for raw in tags) if tag is not None}

    if "no_emojis" in present:
        present.discard("emojis_ok")  # "Do NOT use emojis." replaces the emojis_ok line
    style = [tag for tag in STYLE_TAGS if tag in present]
    stance = [_GUIDE_LINES[tag] for tag in STANCE_TAGS if tag in present] or [_DEFAULT_STANCE]
    lines = [
        *(_GUIDE_LINES[tag] for tag in style),
        *stance,
        *(_GUIDE_LINES[tag] for tag in INTERACTION_TAGS if tag in present),
        _GUIDE_SAFETY,
    ]
    return _GUIDE_HEADER + "".join(f"- {line}\n" for line in lines) + _GUIDE_FOOTER
