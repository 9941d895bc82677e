"""What the messengers learn from the participant's state: last inbound time and the emoji tone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from promptpipe.channels.context import allows_emoji, last_inbound_at, with_channel_context
from promptpipe.models.messaging import NEVER_WROTE, OutboundKind, OutboundMessage
from promptpipe.models.profile import UserProfile
from promptpipe.models.state import ConversationMessage, DataKey, StateData, new_state_data

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _data(*messages: tuple[str, datetime], tags: list[str] | None = None) -> StateData:
    data = StateData(new_state_data())
    data.set_history([ConversationMessage(role=role, content="x", timestamp=at) for role, at in messages])
    if tags is not None:
        profile = UserProfile.from_json_dict({})
        profile.tone.tags = tags
        data.set_profile(profile)
    return data


def test_last_inbound_is_the_newest_user_message() -> None:
    data = _data(
        ("user", T0),
        ("assistant", T0 + timedelta(hours=1)),
        ("user", T0 + timedelta(hours=2)),
        ("assistant", T0 + timedelta(days=2)),
    )
    assert last_inbound_at(data) == T0 + timedelta(hours=2)


def test_last_inbound_counts_the_daily_prompt_answer_and_defaults_to_never() -> None:
    data = _data(("assistant", T0))
    assert last_inbound_at(data) == NEVER_WROTE
    data.set_time(DataKey.DAILY_PROMPT_RESPONDED_AT, T0 + timedelta(hours=3))
    assert last_inbound_at(data) == T0 + timedelta(hours=3)


def test_emoji_follow_the_tone_tags() -> None:
    assert not allows_emoji(_data())
    assert allows_emoji(_data(tags=["emojis_ok"]))
    assert not allows_emoji(_data(tags=["no_emojis"]))
    corrupt = _data()
    corrupt.set(DataKey.USER_PROFILE, "{not json")
    assert not allows_emoji(corrupt)


def test_with_channel_context_fills_what_the_caller_left_open() -> None:
    data = _data(("user", T0), tags=["emojis_ok"])
    message = OutboundMessage(participant_id="p", to="+14155550100", body="hi", kind=OutboundKind.DAILY_PROMPT)
    filled = with_channel_context(message, data)
    assert (filled.last_inbound_at, filled.allow_emoji) == (T0, True)
    explicit = message.model_copy(update={"last_inbound_at": T0 + timedelta(days=1)})
    assert with_channel_context(explicit, data).last_inbound_at == T0 + timedelta(days=1)
