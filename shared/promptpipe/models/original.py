"""A participant as the original PromptPipe stored it (read by ``adapters/original_db.py``, written
here by ``promptpipe.usecases.import_participants``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class OriginalParticipant:
    id: str
    phone_number: str
    name: str = ""
    gender: str = ""
    ethnicity: str = ""
    background: str = ""
    timezone: str = ""
    status: str = "active"
    enrolled_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    current_state: str = ""
    # The flow state's data as stored; ``None`` when the participant has no conversation state.
    state_data: dict[str, str] | None = None
    # Why the stored state could not be read (it is then imported empty).
    state_error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # What the reader left out of the stored state, one line each (a value nested too deeply).
    state_warnings: list[str] = field(default_factory=list)
