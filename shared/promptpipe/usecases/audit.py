"""The coordinators' audit (docs/console.md, "Accountability"): every action a coordinator takes on a
participant through the API (and so through the console, which calls it) is recorded with who and
why, after the action has landed; the export is recorded by the caller that makes it.

The record is written after the action it records committed: an action whose record then failed to
write is logged (``audit record not written``) and answered as an error, so the caller knows the
record is missing; an action that failed leaves no record.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterable

from promptpipe.models.audit import Actor, AuditAction, AuditRecord
from promptpipe.usecases.context import AppContext

logger = logging.getLogger(__name__)

# Who may be recorded by the ``POST /conversation/audit`` route: the actions no use case records itself.
RECORDED_BY_CALLER = frozenset({AuditAction.EXPORT})


def record(
    app: AppContext,
    actor: Actor | None,
    action: AuditAction,
    participant_id: str = "",
    *,
    reason: str = "",
    fields: Iterable[str] = (),
) -> AuditRecord | None:
    """Append the record of ``action`` by ``actor``; ``None`` (nothing recorded) without an actor:
    a use case run by the system itself (an opt-out, the sweep), not by a coordinator."""
    if actor is None:
        return None
    entry = AuditRecord(
        # Sorts after the records written before it at the same clock time (a fixed test clock).
        record_id=f"{time.time_ns():020d}-{secrets.token_hex(4)}",
        at=app.clock.now(),
        action=action,
        participant_id=participant_id,
        by=actor.principal,
        named=actor.named,
        reason=reason.strip(),
        fields=sorted(set(fields)),
    )
    try:
        app.audit.append(entry)
    except Exception:
        logger.exception("audit record not written", extra={"participant_id": participant_id, "action": action.value})
        raise
    logger.info(
        "coordinator action recorded",
        extra={"participant_id": participant_id, "action": action.value, "by": actor.principal},
    )
    return entry


def trail(app: AppContext, participant_id: str | None = None) -> list[AuditRecord]:
    """A participant's records, oldest first (every record for ``None``)."""
    return app.audit.records(participant_id)
