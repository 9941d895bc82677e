"""What the webhooks do with inbound traffic that is not a plain text turn.

``InboundEvents.handle`` takes every parsed ``InboundMessage`` (``promptpipe.inbound``):

- text (a reply, a button, an MMS with text): the ordinary path, ``PromptPipe.receive_inbound``
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
Meta ``statuses``) in the participant's transcript; other statuses change nothing.

Senders we do not know are left alone here: only text may enrol someone (``receive_inbound``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.inbound import NUMBER_CHANGES
from promptpipe.models.messaging import DeliveryStatus, InboundKind, InboundMessage, OutboundKind, OutboundMessage
from promptpipe.models.state import DataKey
from promptpipe.models.store import Direction
from promptpipe.phone import mask_phone
from promptpipe.ports import PhoneClaims
from promptpipe.services import InboundDecision, PromptPipe, outcome_of_effects
from promptpipe.timezones import zone_or_utc

logger = logging.getLogger(__name__)

MEDIA_NOTICE = "Sorry, I can only read text messages. Please write your reply in words."


@dataclass
class InboundEvents:
    app: PromptPipe
    claims: PhoneClaims | None = None

    def handle(self, message: InboundMessage) -> InboundDecision:
        kind = message.kind
        if kind is InboundKind.TEXT:
            if message.attachments:
                self._record_attachments(message)
            return self.app.receive_inbound(message)
        participant_id = self.app.repo.find_id_by_phone(message.from_phone)
        if participant_id is None:
            logger.info("non-text message from an unknown number ignored", extra={"kind": kind.value})
            return InboundDecision("unknown_sender")
        if kind is InboundKind.MEDIA and message.body.strip():
            self._record_attachments(message, participant_id)
            return self.app.receive_inbound(message)
        if kind in (InboundKind.MEDIA, InboundKind.UNSUPPORTED):
            return self._media_without_text(participant_id, message)
        if kind is InboundKind.SYSTEM:
            return self._system(participant_id, message)
        return self._record_only(participant_id, message)

    # -- use cases --------------------------------------------------------------------------
    def _media_without_text(self, participant_id: str, message: InboundMessage) -> InboundDecision:
        session = self.app.sessions.open(participant_id, message.provider_message_id)
        record_of = session.already_processed()
        if record_of is not None:  # redelivered: finish what the first delivery left undone
            self.app.finish(outcome_of_effects(self.app.resume(session, record_of), replayed=True))
            return InboundDecision("media_recorded", participant_id)

        def record(op: OpContext) -> None:
            op.record(Direction.INBOUND, message.kind.value, "", metadata=_metadata(message))
            today = op.now.astimezone(zone_or_utc(op.participant.timezone)).date().isoformat()
            if op.data.get(DataKey.LAST_MEDIA_NOTICE_DATE) == today or not op.participant.is_active:
                return
            op.emit(
                OutboundMessage(
                    participant_id=op.participant.id,
                    to=op.participant.phone_number,
                    body=MEDIA_NOTICE,
                    kind=OutboundKind.NOTICE,
                ),
                metadata={"module": "media_notice"},
            )
            op.data.set(DataKey.LAST_MEDIA_NOTICE_DATE, today)

        session.apply("record_media", record)
        effects = session.commit()  # a concurrent first delivery returns none: it sends the notice
        self.app.finish(outcome_of_effects(effects, replayed=False))
        return InboundDecision("media_notice" if effects.messages else "media_recorded", participant_id)

    def _record_only(self, participant_id: str, message: InboundMessage) -> InboundDecision:
        session = self.app.sessions.open(participant_id, message.provider_message_id)
        if not self._replayed(session):
            session.apply(
                f"record_{message.kind.value}",
                lambda op: op.record(Direction.INBOUND, message.kind.value, message.body, metadata=_metadata(message)),
            )
            session.commit()
        return InboundDecision(f"{message.kind.value}_recorded", participant_id)

    def _system(self, participant_id: str, message: InboundMessage) -> InboundDecision:
        new = message.new_phone
        if message.system_type not in NUMBER_CHANGES or not new or self.claims is None:
            return self._record_only(participant_id, message)
        old = message.from_phone
        outcome = str(self.claims.move(participant_id, old, new))
        session = self.app.sessions.open(participant_id, message.provider_message_id)
        if not self._replayed(session):

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

            session.apply("record_phone_change", record)
            session.commit()
        logger.info(
            "participant changed number",
            extra={"participant_id": participant_id, "outcome": outcome, "new_phone": mask_phone(new)},
        )
        return InboundDecision("phone_conflict" if outcome == "conflict" else "phone_changed", participant_id)

    def _record_attachments(self, message: InboundMessage, participant_id: str | None = None) -> None:
        """The attachments of a message that also has text: their own transcript entry (the text
        goes through the turn)."""
        participant_id = participant_id or self.app.repo.find_id_by_phone(message.from_phone)
        if participant_id is None:
            return
        session = self.app.sessions.open(participant_id, f"{message.provider_message_id}#attachments")
        if self._replayed(session):
            return
        session.apply(
            "record_attachments",
            lambda op: op.record(Direction.INBOUND, "attachments", "", metadata=_metadata(message)),
        )
        session.commit()

    @staticmethod
    def _replayed(session: ConversationSession) -> bool:
        return session.already_processed() is not None

    # -- delivery reports -------------------------------------------------------------------
    def record_delivery(self, status: DeliveryStatus) -> InboundDecision:
        if not status.failed:
            return InboundDecision("status_ignored")
        participant_id = self.app.repo.find_id_by_phone(status.recipient) if status.recipient else None
        if participant_id is None:
            logger.warning("delivery failure for an unknown recipient", extra={"error_code": status.error_code})
            return InboundDecision("delivery_failed")
        session = self.app.sessions.open(participant_id, f"status:{status.provider_message_id}:{status.status}")
        if not self._replayed(session):
            metadata: dict[str, Any] = {
                "provider": status.provider,
                "provider_message_id": status.provider_message_id,
                "status": status.status,
                "error_code": status.error_code,
                "error_title": status.error_title,
            }
            session.apply(
                "record_delivery_failure",
                lambda op: op.record(Direction.SYSTEM, "delivery_failed", "", metadata=metadata),
            )
            session.commit()
        logger.warning(
            "message not delivered",
            extra={"participant_id": participant_id, "error_code": status.error_code, "status": status.status},
        )
        return InboundDecision("delivery_failed", participant_id)


_PHONE_CHANGE_TEXT = {
    "moved": "The participant changed their WhatsApp number; the new number now reaches them.",
    "already": "The participant changed their WhatsApp number (already recorded).",
    "conflict": "The participant changed their WhatsApp number, but the new number belongs to another "
    "participant; nothing was changed.",
    "stale": "A number change was reported for an old number of this participant; nothing was changed.",
}


def _metadata(message: InboundMessage) -> dict[str, Any]:
    metadata: dict[str, Any] = {"provider": message.provider, "provider_message_id": message.provider_message_id}
    if message.attachments:
        metadata["attachments"] = [a.model_dump(exclude_none=True) for a in message.attachments]
    if message.refers_to:
        metadata["refers_to"] = message.refers_to
    if message.system_type:
        metadata["system_type"] = message.system_type
    return metadata
