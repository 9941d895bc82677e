"""The original's ``conversationHistory`` as transcript entries, marked as imported (``promptpipe import``).

The original kept a participant's conversation only in their flow state (``conversationHistory``, its
last messages) and their counts in the profile (``total_prompts``, ``success_count``). The import
copies each message into the transcript as an entry of kind ``imported`` and adds one ``import``
entry that carries what the original counted (``metadata``: ``messages``, ``prompts``, ``done``), so
the transcript, the console and the export show the history and count its prompts
(docs/export.md). Entries have fixed seqs (``import-0000``…), so an interrupted import that is run
again writes only the entries still missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from promptpipe.models.state import ConversationMessage, StateData
from promptpipe.models.store import IMPORT_KIND, IMPORTED_KIND, Direction, StateCommit, TranscriptEntry
from promptpipe.usecases.context import AppContext

_EVENT_ID = "import"
_CHUNK = 80  # entries per commit: a transaction holds at most 100 items
_PAGE = 500
_DIRECTIONS = {"user": Direction.INBOUND, "assistant": Direction.OUTBOUND}


@dataclass(frozen=True)
class ImportedHistory:
    """What the original knew of a participant's conversation."""

    messages: list[ConversationMessage]
    prompts: int  # the profile's ``total_prompts``: daily prompts the original delivered
    done: int  # the profile's ``success_count``: prompts answered "Done"

    def describe(self) -> str:
        return f"history: {len(self.messages)} messages, {self.prompts} prompts, {self.done} done"


def read_history(data: StateData) -> ImportedHistory:
    """The history and counts of a state as the import adapted it (an unreadable history or
    profile reads as empty, as the coach itself reads it)."""
    messages = data.history()
    profile = data.profile()
    return ImportedHistory(messages=messages, prompts=profile.total_prompts, done=profile.success_count)


def history_entries(participant_id: str, history: ImportedHistory, imported_at: datetime) -> list[TranscriptEntry]:
    entries = [
        TranscriptEntry(
            participant_id=participant_id,
            at=message.timestamp,
            seq=f"import-{index:04d}",
            direction=_DIRECTIONS.get(message.role, Direction.SYSTEM),
            kind=IMPORTED_KIND,
            content=message.content,
            event_id=_EVENT_ID,
            metadata={"imported": True, "role": message.role},
        )
        for index, message in enumerate(history.messages)
    ]
    entries.append(
        TranscriptEntry(
            participant_id=participant_id,
            at=imported_at,
            seq="import-done",
            direction=Direction.SYSTEM,
            kind=IMPORT_KIND,
            content=(
                f"Imported from the original PromptPipe: {len(history.messages)} messages of its history; "
                f"it had delivered {history.prompts} daily prompts, {history.done} answered Done"
            ),
            event_id=_EVENT_ID,
            metadata={
                "imported": True,
                "messages": len(history.messages),
                "prompts": history.prompts,
                "done": history.done,
            },
        )
    )
    return entries


def write_history(app: AppContext, participant_id: str, history: ImportedHistory) -> int:
    """Append the entries not yet in the transcript, ``import-done`` last (so its presence means the
    history is complete). Returns the entries written."""
    present = _import_seqs(app, participant_id)
    if "import-done" in present:
        return 0
    missing = [e for e in history_entries(participant_id, history, app.clock.now()) if e.seq not in present]
    for start in range(0, len(missing), _CHUNK):
        loaded = app.store.load(participant_id)
        flow = loaded.flow.model_copy(update={"version": loaded.flow.version + 1})
        app.store.commit(
            StateCommit(
                participant_id=participant_id,
                expected_version=loaded.flow.version,
                flow=flow,
                transcript=missing[start : start + _CHUNK],
            )
        )
    return len(missing)


def _import_seqs(app: AppContext, participant_id: str) -> set[str]:
    seqs: set[str] = set()
    token: str | None = None
    while True:
        entries, token = app.store.list_transcript(participant_id, limit=_PAGE, next_token=token)
        seqs.update(e.seq for e in entries if e.event_id == _EVENT_ID)
        if not token:
            return seqs
