"""System prompts: from a prompt store (hot reload, TTL cache), else the ``prompts/`` files, else the
built-in fallbacks. Each prompt carries a version (a hash of its text, with its source) that the
audit records for every model call."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from promptpipe.settings import Settings

logger = logging.getLogger(__name__)


@cache
def _coach_fallbacks() -> dict[str, str]:
    """The built-in intake and feedback prompts, which name the coach's tools. Built when a prompt
    file is missing (rare: the files ship with every function), so that the functions that read a
    prompt and offer no tool (the scheduled prompt) do not load the tool table."""
    from promptpipe.controller.tool_table import HABIT_PROMPT, PROFILE, SCHEDULER, TRANSITION

    return {
        "intake": (
            "You are a friendly habit coach talking with a participant by text message. Learn their habit "
            "domain, what motivates them, a preferred daily time (HH:MM) and an existing routine to anchor "
            f"the habit to. Save each fact with {PROFILE.name}, offer a first one-minute habit with "
            f"{HABIT_PROMPT.name}, set up the daily schedule with {SCHEDULER.name}, then call {TRANSITION.name} "
            "with target_state FEEDBACK. Keep replies short and ask one question at a time."
        ),
        "feedback": (
            "You are a friendly habit coach following up on a habit prompt sent to the participant. Ask how "
            f"it went, save what helped or got in the way with {PROFILE.name}, encourage briefly and suggest "
            f"one small tweak when useful. If the profile needs repair, call {TRANSITION.name} with INTAKE."
        ),
    }


FALLBACK_GENERATOR = (
    "You write one short, personalised habit prompt (under 30 words) for a participant, anchored to "
    "their routine. Output only the prompt text."
)
FALLBACK_CONVERSATION = "You are a warm, concise habit coach talking with a participant by text message."
FALLBACK_CLASSIFIER = (
    "Classify the participant's latest message for a habit-coaching chat. Answer with one JSON "
    'object: {"intent": "<small_talk|profile|schedule|change_habit|prompt_now|report|other>", '
    '"tools": [<names from the list below the turn may need>]}. Tools: '
)
FALLBACK_SYNTHESIS = (
    "The tools of this turn have run; their outcomes are in the notes above. Write the reply to the "
    "participant now, in plain text, from what actually happened. Do not claim anything a note does "
    "not confirm, and never show internal ids."
)

PROMPT_NAMES = ("intake", "feedback", "generator", "conversation", "classifier", "synthesis")
FILE_NAMES = {"classifier": "classifier_system.txt", "synthesis": "synthesis_system.txt"}
_FALLBACKS = {
    "generator": FALLBACK_GENERATOR,
    "conversation": FALLBACK_CONVERSATION,
    "classifier": FALLBACK_CLASSIFIER,
    "synthesis": FALLBACK_SYNTHESIS,
}


def text_version(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class PromptText:
    name: str
    text: str
    source: str  # "store", "file" or "builtin"

    @property
    def version(self) -> str:
        return f"{self.source}:{text_version(self.text)}"


class PromptStore(Protocol):
    """Where edited prompts live (SSM Parameter Store in AWS); ``None`` when a prompt is not there."""

    def fetch(self, name: str) -> str | None: ...

    def push(self, name: str, text: str) -> str: ...


@cache
def _read(path: str) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None


def prompt_files(settings: Settings) -> dict[str, Path]:
    directory = settings.intake_bot_prompt_file.parent
    return {
        "intake": settings.intake_bot_prompt_file,
        "feedback": settings.feedback_tracker_prompt_file,
        "generator": settings.prompt_generator_prompt_file,
        "conversation": settings.conversation_fallback_prompt_file,
        **{name: directory / file for name, file in FILE_NAMES.items()},
    }


class PromptLibrary:
    """The system prompts. With a store, each is read from it at most once per ``ttl`` seconds (an
    edit shows within that time, no deploy); a store failure or a missing entry falls back to the
    file, then to the built-in text."""

    def __init__(
        self,
        files: dict[str, Path],
        *,
        store: PromptStore | None = None,
        ttl: float = 300.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.files, self.store, self.ttl, self._now = files, store, ttl, now
        self._cache: dict[str, tuple[float, PromptText]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, store: PromptStore | None = None) -> PromptLibrary:
        return cls(prompt_files(settings), store=store, ttl=float(settings.prompt_cache_seconds))

    def local(self, name: str) -> PromptText:
        """The file's text, else the built-in fallback (no store)."""
        path = self.files.get(name)
        text = _read(str(path)) if path is not None else None
        if text is None:
            logger.warning("prompt file missing or empty; using built-in fallback", extra={"prompt": name})
            return PromptText(name, _FALLBACKS.get(name) or _coach_fallbacks()[name], "builtin")
        return PromptText(name, text, "file")

    def get(self, name: str) -> PromptText:
        if self.store is None:
            return self.local(name)
        with self._lock:
            hit = self._cache.get(name)
            if hit is not None and self._now() - hit[0] < self.ttl:
                return hit[1]
        try:
            stored = self.store.fetch(name)
        except Exception:  # a store outage must not stop the conversation
            logger.warning("prompt store unavailable; using the local prompt", extra={"prompt": name})
            stored = None
        prompt = PromptText(name, stored.strip(), "store") if stored and stored.strip() else self.local(name)
        with self._lock:
            self._cache[name] = (self._now(), prompt)
        return prompt
