"""What each transcript entry was, in a coordinator's words: a photo, a reaction, an edit of an
earlier message, a deletion, a platform notice, a delivery failure the provider reported
(docs/architecture.md, "Inbound traffic that is not text"). Text entries read as their text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptpipe.models.store import TranscriptEntry

# The attachment types the webhooks record (promptpipe.channels.parsing), as a reader names them.
ATTACHMENT_WORDS = {
    "image": "a photo",
    "audio": "a voice message or audio",
    "video": "a video",
    "document": "a document",
    "sticker": "a sticker",
    "location": "a location",
    "contacts": "a contact card",
    "media": "an attachment",
}
# The mark each kind carries in the text transcript, the console and the export.
KIND_MARKS = {
    "media": "media",
    "attachments": "attachment",
    "unsupported": "unsupported message",
    "reaction": "reaction",
    "edit": "edit",
    "revoke": "deleted",
    "system": "system notice",
    "phone_change": "system notice",
    "delivery_failed": "delivery failed",
}
_QUOTE_CHARS = 60
# Entries whose provider id names another message, never themselves.
_REFERRING = ("edit", "revoke", "reaction", "delivery_failed")


def provider_ids(entries: list[TranscriptEntry]) -> dict[str, TranscriptEntry]:
    """Each entry by the provider's id of its message, for edits, deletions and reactions to find
    the message they refer to."""
    found: dict[str, TranscriptEntry] = {}
    for entry in entries:
        if entry.kind in _REFERRING:
            continue
        provider_id = entry.metadata.get("provider_message_id")
        if entry.delivery is not None and entry.delivery.provider_id:
            provider_id = entry.delivery.provider_id
        if isinstance(provider_id, str) and provider_id:
            found.setdefault(provider_id, entry)
    return found


def shown(entry: TranscriptEntry, earlier: Mapping[str, TranscriptEntry]) -> tuple[str, str]:
    """(text, mark) for a non-text entry; the entry's own content and no mark for any other."""
    metadata = entry.metadata
    kind = entry.kind
    if kind in ("media", "attachments"):
        things = _attachments(metadata)
        caption = f": {entry.content}" if entry.content else ""
        return f"Sent {things}{caption}", KIND_MARKS[kind]
    if kind == "unsupported":
        return "Sent a message of a type the provider does not pass on", KIND_MARKS[kind]
    if kind == "reaction":
        target = _quote(earlier, metadata.get("refers_to"))
        if entry.content:
            return f"Reacted {entry.content} to {target}", KIND_MARKS[kind]
        return f"Removed their reaction to {target}", "reaction removed"
    if kind == "edit":
        return f"Edited {_quote(earlier, metadata.get('refers_to'))} to: {entry.content}", KIND_MARKS[kind]
    if kind == "revoke":
        return f"Deleted {_quote(earlier, metadata.get('refers_to'))}", KIND_MARKS[kind]
    if kind == "system":
        notice = str(metadata.get("system_type") or "notice").replace("_", " ")
        body = f": {entry.content}" if entry.content else ""
        return f"WhatsApp notice ({notice}){body}", KIND_MARKS[kind]
    if kind == "staff":  # a person of the study team wrote it (docs/console.md)
        return entry.content, f"study team: {metadata.get('staff') or 'staff'}"
    if kind == "phone_change":
        return entry.content, KIND_MARKS[kind]
    if kind == "delivery_failed":
        code = metadata.get("error_code") or "none"
        title = f", {metadata['error_title']}" if metadata.get("error_title") else ""
        status = metadata.get("status") or "failed"
        target = _quote(earlier, metadata.get("provider_message_id"), "a message")
        return f"The provider reported {target} {status} (code {code}{title})", KIND_MARKS[kind]
    return entry.content, ""


def _attachments(metadata: Mapping[str, Any]) -> str:
    raw = metadata.get("attachments")
    types = [str(a.get("type") or "media") for a in raw if isinstance(a, dict)] if isinstance(raw, list) else []
    words = [ATTACHMENT_WORDS.get(kind, f"an attachment ({kind})") for kind in types] or [ATTACHMENT_WORDS["media"]]
    return ", ".join(words)


def _quote(earlier: Mapping[str, TranscriptEntry], refers_to: object, unknown: str = "an earlier message") -> str:
    """The earlier message, quoted briefly, or what is known of it."""
    target = earlier.get(refers_to) if isinstance(refers_to, str) else None
    if target is None:
        return unknown
    if target.kind in ("media", "attachments"):
        return f"{unknown} ({_attachments(target.metadata)})"
    text = " ".join(target.content.split())
    if not text:
        return unknown
    quoted = text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1] + "…"
    owner = "their" if target.direction.value == "inbound" else "the coach's"
    return f'{owner} message "{quoted}"'
