"""The end of a study rehearsal (``promptpipe simulate --study FILE --export DIR``; docs/studies.md,
"A rehearsal"): the report of the decisions (arm shares, share available, each arm's effect against
the no-prompt arm) and the de-identified export of the simulated study into DIR.

The simulation itself (the engine's draws, the reply model per arm) is ``local/simulate.py``'s; this
module takes what it leaves, the local stack still open, the study and its decision records.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.deidentified_export import (
    DeidentifiedCounts,
    DeidentifyOptions,
    is_test_participant,
    write_deidentified_export,
)
from promptpipe.coordinator.study_report import report_lines, study_report
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.local.environment import LocalEnvironment
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.study import StudyDefinition

# The rehearsal's participants are fictional: without EXPORT_PSEUDONYM_SALT its export uses this
# salt (a real export refuses to run without one).
REHEARSAL_SALT = "promptpipe-rehearsal-salt-not-for-real-studies"


def rehearsal_lines(study: StudyDefinition, records: Sequence[DecisionRecord]) -> list[str]:
    """What the rehearsal prints about its decisions."""
    return report_lines(study_report(study, records))


def finish_rehearsal(
    env: LocalEnvironment,
    study: StudyDefinition,
    records: Sequence[DecisionRecord],
    export_dir: Path | None,
    *,
    salt: str | None = None,
) -> tuple[list[str], DeidentifiedCounts | None]:
    """The report's lines and, with ``export_dir``, the de-identified export written there (through
    the stack's own API, as ``promptpipe export`` reads a deployed one)."""
    client = CoordinatorClient(InProcessTransport(env))
    test_ids = {p.id for p in client.iter_participants() if is_test_participant(p)}
    kept = [record for record in records if record.participant_id not in test_ids]
    counts = None
    if export_dir is not None:
        options = DeidentifyOptions(
            salt=salt or env.settings.export_pseudonym_salt or REHEARSAL_SALT,
            region=env.settings.default_phone_region,
        )
        counts = write_deidentified_export(client, export_dir, options, study=study, decisions=kept)
    lines = rehearsal_lines(study, kept)
    if counts is not None and export_dir is not None:
        lines.append(
            f"wrote the de-identified export to {export_dir}: {counts.participants} participants, "
            f"{counts.decisions} decisions, {counts.prompts} prompts, {counts.messages} messages"
        )
    return lines, counts
