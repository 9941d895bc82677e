"""What the flow engine needs from the outside world, wired once by the composition root."""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from promptpipe.config import CoreConfig
from promptpipe.ports import LLM, Timers
from promptpipe.rules.clock import Clock

if TYPE_CHECKING:
    from promptpipe.controller.catalog import FlowCatalog
    from promptpipe.flow.prompts import PromptLibrary
    from promptpipe.models.study import StudyDefinition


class IdGenerator:
    """Unguessable ids (docs/behaviour.md#B-API-4); a seeded variant keeps tests and the demo deterministic."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng

    def _hex(self, nbytes: int) -> str:
        if self._rng is None:
            return secrets.token_hex(nbytes)
        return self._rng.getrandbits(nbytes * 8).to_bytes(nbytes, "big").hex()

    def participant_id(self) -> str:
        return "p_" + self._hex(16)


@dataclass
class FlowDeps:
    config: CoreConfig
    llm: LLM
    timers: Timers
    clock: Clock
    prompts: PromptLibrary
    ids: IdGenerator = field(default_factory=IdGenerator)
    # The flow controller's definitions (docs/controller.md); None: intake runs unsteered.
    flows: FlowCatalog | None = None
    # The deployment's one active study (docs/studies.md, ``STUDY_ID``); None: no study.
    study: StudyDefinition | None = None
