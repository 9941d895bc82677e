"""What the webhooks do with inbound traffic that is not a plain text turn.

``receive_inbound`` takes every parsed ``InboundMessage`` (``promptpipe.channels.parsing``):

- text (a reply, a button, an MMS with text): the ordinary path, ``usecases.receive_text``
  (opt-out/in, auto-enrolment, the turn queue); an MMS's attachments are recorded too;
- media with a caption: the attachments are recorded and the caption is the turn's text;
- media without text (photo, voice note, sticker, location, contacts) and types the provider does
  not pass on: recorded; the participant is told "I can only read text messages" at most once a
  participant-local day; no model call;
- reactions, edits and deletions: recorded against the message they refer to; no model call and no
  reply (a reaction to the daily prompt is not taken as an answer: an emoji is not a "Done");
- a number change (WhatsApp ``user_changed_number``): the phone claim moves atomically to the new
  number (``PhoneClaims``); the change, or the conflict when another participant holds the new
  number, is recorded; no coach turn and no reply. Other system notices are recorded.

``record_delivery`` records a provider's report that a message failed (Twilio status callbacks,
Meta ``statuses``) on that message's own outcome and in the participant's transcript
(``usecases/delivery_reports.py``); other statuses change nothing.

Senders we do not know are left alone here: only text may enrol someone (``receive_text``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from promptpipe.channels.parsing import NUMBER_CHANGES
from promptpipe.flow.session import OpContext
from promptpipe.models.messaging import DeliveryStatus, InboundKind, InboundMessage, OutboundKind
from promptpipe.models.state import DataKey
from promptpipe.models.store import Direction
from promptpipe.rules.phone import mask_phone
from promptpipe.rules.timezones import participant_zone_name
from promptpipe.usecases import delivery_reports
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome, InboundDecision
from promptpipe.usecases.receive_text import receive_text
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import Work, run_once

logger = logging.getLogger(__name__)

MEDIA_NOTICE = "Sorry, I can only read text messages. Please write your reply in words."


def receive_inbound(app: AppContext, message: InboundMessage) -> InboundDecision:
    kind = message.kind
    if kind is InboundKind.TEXT:
        if message.attachments:
            _record_attachments(app, message)
        return receive_text(app, message)
    participant_id = app.repo.find_id_by_phone(message.from_phone)
    if participant_id is None:
        logger.info("non-text message from an unknown number ignored", extra={"kind": kind.value})
        return InboundDecision("unknown_sender")
    if kind is InboundKind.MEDIA and message.body.strip():
        _record_attachments(app, message, participant_id)
        return receive_text(app, message)
    if kind in (InboundKind.MEDIA, InboundKind.UNSUPPORTED):
        return _media_without_text(app, participant_id, message)
    if kind is InboundKind.SYSTEM:
        return _system(app, participant_id, message)
    return _record_only(app, participant_id, message)


# Each one write through ``run_once`` (a failed save raises: the provider retries).
def _run(app: AppContext, participant_id: str, event_id: str, work: Work) -> EventOutcome:
    """Record the event once; a redelivery applies what the first delivery left undone."""
    outcome = run_once(app, participant_id, event_id, work, reply_if_unsaved=False, defer_schedules=True)
    apply_effects(app, outcome)
    return outcome


def _media_without_text(app: AppContext, participant_id: str, message: InboundMessage) -> InboundDecision:
    def record(op: OpContext) -> None:
        op.record(Direction.INBOUND, message.kind.value, "", metadata=_metadata(message))
        today = op.now.astimezone(_zone(op.participant.timezone)).date().isoformat()
        if op.data.get(DataKey.LAST_MEDIA_NOTICE_DATE) == today or not op.participant.is_active:
            return
        op.emit(op.message(MEDIA_NOTICE, OutboundKind.NOTICE), metadata={"module": "media_notice"})
        op.data.set(DataKey.LAST_MEDIA_NOTICE_DATE, today)

    # A concurrent first delivery commits first and sends the notice: this one sends none.
    outcome = _run(app, participant_id, message.provider_message_id, _applying("record_media", record))
    noticed = outcome.outbound and not outcome.replayed
    return InboundDecision("media_notice" if noticed else "media_recorded", participant_id)


def _record_only(app: AppContext, participant_id: str, message: InboundMessage) -> InboundDecision:
    _run(
        app,
        participant_id,
        message.provider_message_id,
        _applying(
            f"record_{message.kind.value}",
            lambda op: op.record(Direction.INBOUND, message.kind.value, message.body, metadata=_metadata(message)),
        ),
    )
    return InboundDecision(f"{message.kind.value}_recorded", participant_id)


def _system(app: AppContext, participant_id: str, message: InboundMessage) -> InboundDecision:
    new = message.new_phone
    if message.system_type not in NUMBER_CHANGES or not new:
        return _record_only(app, participant_id, message)
    old = message.from_phone
    outcome = str(app.phone_claims.move(participant_id, old, new))

    def record(op: OpContext) -> None:
        metadata = {
            **_metadata(message),
            "outcome": outcome,
            "old_phone": mask_phone(old),
            "new_phone": mask_phone(new),
        }
        op.record(Direction.SYSTEM, "phone_change", _PHONE_CHANGE_TEXT[outcome], metadata=metadata)
        pending = op.data.daily_prompt_pending()
        if outcome in ("moved", "already") and pending is not None and pending.to == old:
            op.data.set_daily_prompt_pending(pending.model_copy(update={"to": new}))

    _run(app, participant_id, message.provider_message_id, _applying("record_phone_change", record))
    logger.info(
        "participant changed number",
        extra={"participant_id": participant_id, "outcome": outcome, "new_phone": mask_phone(new)},
    )
    return InboundDecision("phone_conflict" if outcome == "conflict" else "phone_changed", participant_id)


def _record_attachments(app: AppContext, message: InboundMessage, participant_id: str | None = None) -> None:
    """The attachments of a message that also has text: their own transcript entry (the text
    goes through the turn)."""
    participant_id = participant_id or app.repo.find_id_by_phone(message.from_phone)
    if participant_id is None:
        return
    _run(
        app,
        participant_id,
        f"{message.provider_message_id}#attachments",
        _applying(
            "record_attachments",
            lambda op: op.record(Direction.INBOUND, "attachments", "", metadata=_metadata(message)),
        ),
    )


def record_delivery(app: AppContext, status: DeliveryStatus) -> InboundDecision:
    """A provider's delivery report: ``usecases/delivery_reports.py`` (the message's own outcome)."""
    return delivery_reports.record_delivery(app, status)


_PHONE_CHANGE_TEXT = {
    "moved": "The participant changed their WhatsApp number; the new number now reaches them.",
    "already": "The participant changed their WhatsApp number (already recorded).",
    "conflict": "The participant changed their WhatsApp number, but the new number belongs to another "
    "participant; nothing was changed.",
    "stale": "A number change was reported for an old number of this participant; nothing was changed.",
}


def _applying(name: str, operation: Callable[[OpContext], object]) -> Work:
    """The work of an event that is one operation on the session."""
    return lambda session, _outcome: session.apply(name, operation)


def _metadata(message: InboundMessage) -> dict[str, Any]:
    metadata: dict[str, Any] = {"provider": message.provider, "provider_message_id": message.provider_message_id}
    if message.attachments:
        metadata["attachments"] = [a.model_dump(exclude_none=True) for a in message.attachments]
    if message.refers_to:
        metadata["refers_to"] = message.refers_to
    if message.system_type:
        metadata["system_type"] = message.system_type
    return metadata


def _zone(name: str) -> ZoneInfo:
    """The participant's day: their zone by the one zone rule (``rules.timezones``)."""
    return ZoneInfo(participant_zone_name(name))
