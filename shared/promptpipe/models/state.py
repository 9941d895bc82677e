"""Flow state: the contract's DataKeys (docs/behaviour.md#B-STATE-1) and the typed shapes of their string values.

``state_data`` is a ``dict[str, str]`` whose keys are the DataKey names and whose values are plain
strings or JSON, exactly as the original stored them, so an exported state loads unchanged.
``StateData`` is the only code that parses or formats those strings.

Longer than 500 lines because every DataKey and the typed shape of its value are kept in one module:
the one place that reads and writes the stored strings.
"""

# Annotations as objects, not strings: every function imports this module at cold start, and pydantic
# compiles and evaluates each string annotation when a class is defined (as models/api.py).
import json
import logging
import zlib
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any, Self, TypeVar

from pydantic import ConfigDict, Field, TypeAdapter, field_validator

from promptpipe.controller.runtime import RuntimeState
from promptpipe.lazy_model import LazyModel
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.history import (
    COMPRESSED_HISTORY_PREFIX,
    DEFAULT_LLM_HISTORY,
    MAX_HISTORY_BYTES,
    MAX_LLM_HISTORY,
    decode_history,
    encode_history,
)
from promptpipe.models.profile import UserProfile
from promptpipe.models.safety import ConversationHold, HoldReason
from promptpipe.rules.clock import parse_rfc3339, to_rfc3339

logger = logging.getLogger(__name__)

# What a stored value can raise while being read: bad JSON (ValueError, including pydantic's
# ValidationError and UnicodeError), the wrong JSON kind (TypeError, AttributeError), or JSON nested
# beyond the parser's recursion limit (RecursionError).
# The history's compressed form adds zlib.error (base64's errors are ValueErrors).
T = TypeVar("T")
_UNREADABLE = (ValueError, TypeError, AttributeError, RecursionError, zlib.error)
_corrupt_listeners: list[Callable[[str], None]] = []


def on_corrupt_value(listener: Callable[[str], None]) -> Callable[[], None]:
    """Call ``listener(key)`` whenever a stored state value cannot be read (the functions count it as
    a metric, see ``promptpipe.observability``). Returns a function that removes the listener."""
    _corrupt_listeners.append(listener)
    return lambda: _corrupt_listeners.remove(listener)


FLOW_TYPE = "conversation"
STATE_CONVERSATION_ACTIVE = "CONVERSATION_ACTIVE"


class SubState(StrEnum):
    INTAKE = "INTAKE"
    FEEDBACK = "FEEDBACK"


class DataKey(StrEnum):
    """The 18 keys of docs/behaviour.md#B-STATE-1, plus our documented extensions at the end."""

    CONVERSATION_HISTORY = "conversationHistory"
    SYSTEM_PROMPT = "systemPrompt"
    PARTICIPANT_BACKGROUND = "participantBackground"
    USER_PROFILE = "userProfile"
    LAST_HABIT_PROMPT = "lastHabitPrompt"
    FEEDBACK_STATE = "feedbackState"
    FEEDBACK_TIMER_ID = "feedbackTimerID"
    FEEDBACK_FOLLOWUP_TIMER_ID = "feedbackFollowupTimerID"
    SCHEDULE_REGISTRY = "scheduleRegistry"
    CONVERSATION_STATE = "conversationState"
    STATE_TRANSITION_TIMER_ID = "stateTransitionTimerID"
    LAST_PROMPT_SENT_AT = "lastPromptSentAt"
    AUTO_FEEDBACK_TIMER_ID = "autoFeedbackTimerID"
    DAILY_PROMPT_PENDING = "dailyPromptPending"
    DAILY_PROMPT_REMINDER_TIMER_ID = "dailyPromptReminderTimerID"
    DAILY_PROMPT_REMINDER_SENT_AT = "dailyPromptReminderSentAt"
    DAILY_PROMPT_RESPONDED_AT = "dailyPromptRespondedAt"
    LAST_INTENSITY_PROMPT_DATE = "lastIntensityPromptDate"
    # --- extensions (not in the original; see docs/architecture.md, "State keys") ---
    # RFC3339 ``lastPromptSentAt`` of the prompt whose "Done" was counted (docs/behaviour.md#B-DONE-2: once per prompt).
    DONE_COUNTED_FOR_PROMPT = "doneCountedForPrompt"
    # JSON ``PendingTransition``: the target and due time of a delayed transition (guards its timer).
    PENDING_TRANSITION = "pendingTransition"
    # JSON {"intensity_asked", "intensity_combined", "intensity", "done"}: the lastPromptSentAt each
    # fixed-answer question was asked (alone or combined) or answered for, so a short reply is read as
    # an answer only while it is open.
    ANSWERED_QUESTIONS = "answeredQuestions"
    # JSON {name: ScheduleSpec}: the one-shot schedules (reminder, auto-feedback, feedback timers,
    # delayed transition, random-window delivery) that should be live, so effects and reconcile can
    # create them from the state alone.
    PENDING_TIMERS = "pendingTimers"
    # Participant-local date (YYYY-MM-DD) of the last "I can only read text messages" notice: at
    # most one a day however many photos, voice notes or stickers arrive.
    LAST_MEDIA_NOTICE_DATE = "lastMediaNoticeDate"
    # JSON ``RuntimeState`` of the flow controller (docs/controller.md): facts, states, gates,
    # attempts/executions per node, the pinned flow id + version, the bounded turn log.
    CONTROLLER_STATE = "controllerState"
    # JSON ``BudgetUsage`` (models/budget.py): the participant's model calls and input characters in
    # the current hour/day windows, and the messages held while over budget (docs/safety.md#budgets).
    MODEL_BUDGET = "modelBudget"
    # JSON ``ConversationHold``: the one hold (docs/safety.md, "The hold"): the conversation waits
    # for a person (a safety flag, the controller's hand-off, a staff member), in any sub-state.
    HOLD = "hold"
    # JSON ``SchedulePause``: the daily schedules a pause took out of the registry and when they come
    # back (flow/schedule_pause.py); the one-shot ``{participant}-resume`` brings them back then.
    SCHEDULE_PAUSE = "schedulePause"
    # JSON ``StudyProgress`` (flow/study.py, docs/studies.md): the last decision per decision point
    # (its study day and arm), the open end-of-day check-in, whether the study's end was handled.
    STUDY = "study"


class FeedbackState(StrEnum):
    WAITING_INITIAL = "waiting_initial"
    WAITING_FOLLOWUP = "waiting_followup"
    FOLLOWUP_SENT = "followup_sent"
    COMPLETED = "completed"


class ConversationMessage(LazyModel):
    model_config = ConfigDict(extra="ignore")

    role: str
    content: str
    timestamp: datetime

    @field_validator("timestamp", mode="before")
    @classmethod
    def _parse_ts(cls, value: Any) -> Any:
        return parse_rfc3339(value) if isinstance(value, str) else value

    def to_json_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content, "timestamp": to_rfc3339(self.timestamp)}


class DailyPromptPending(LazyModel):
    """``dailyPromptPending``: the delivered prompt still awaiting a reply."""

    sent_at: datetime
    to: str = ""
    reminder_due_at: datetime | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"sent_at": to_rfc3339(self.sent_at), "to": self.to}
        if self.reminder_due_at is not None:
            data["reminder_due_at"] = to_rfc3339(self.reminder_due_at)
        return data


class ScheduleType(StrEnum):
    FIXED = "fixed"
    RANDOM = "random"


class ScheduleInfo(LazyModel):
    """One entry of ``scheduleRegistry``. ``timer_id`` is the EventBridge schedule name."""

    model_config = ConfigDict(extra="ignore")

    id: str
    type: ScheduleType
    fixed_time: str = ""
    random_start_time: str = ""
    random_end_time: str = ""
    timezone: str = ""
    created_at: datetime
    timer_id: str = ""

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type.value,
            "fixed_time": self.fixed_time,
            "random_start_time": self.random_start_time,
            "random_end_time": self.random_end_time,
            "timezone": self.timezone,
            "created_at": to_rfc3339(self.created_at),
            "timer_id": self.timer_id,
        }

    def same_timing(self, other: Self) -> bool:
        """Same type, zone and times; ``9:00`` and ``09:00`` are the same time."""
        return (
            self.type == other.type
            and _hhmm_key(self.fixed_time) == _hhmm_key(other.fixed_time)
            and _hhmm_key(self.random_start_time) == _hhmm_key(other.random_start_time)
            and _hhmm_key(self.random_end_time) == _hhmm_key(other.random_end_time)
            and self.timezone == other.timezone
        )


def _hhmm_key(value: str) -> str:
    """``H:MM``/``HH:MM`` zero-padded; anything else as it is."""
    hours, sep, minutes = value.strip().partition(":")
    if sep and hours.isdigit() and minutes.isdigit():
        return f"{int(hours):02d}:{int(minutes):02d}"
    return value


class PendingTransition(LazyModel):
    target_state: SubState
    due_at: datetime
    reason: str = ""

    def to_json_dict(self) -> dict[str, Any]:
        return {"target_state": self.target_state.value, "due_at": to_rfc3339(self.due_at), "reason": self.reason}


class SchedulePause(LazyModel):
    """Daily schedules paused until ``until`` (then resumed by the engine)."""

    schedules: list[ScheduleInfo] = Field(default_factory=list)
    until: datetime

    def to_json(self) -> str:
        return json.dumps({"schedules": [s.to_json_dict() for s in self.schedules], "until": to_rfc3339(self.until)})


class FlowState(LazyModel):
    """The persisted record of one participant's conversation flow."""

    participant_id: str
    flow_type: str = FLOW_TYPE
    current_state: str = STATE_CONVERSATION_ACTIVE
    state_data: dict[str, str] = Field(default_factory=dict)
    version: int = 0
    updated_at: datetime | None = None
    # Set while the participant is withdrawn and a retention is configured: when their items expire
    # (the store stamps it on what it writes; docs/retention.md). None: kept.
    expires_at: datetime | None = None


class StateData:
    """Typed reads and writes over a ``state_data`` dict. Writes of "" delete the key."""

    def __init__(self, raw: dict[str, str], *, history_messages: int = DEFAULT_LLM_HISTORY) -> None:
        """``history_messages``: how many messages ``set_history`` keeps (``stored_history_messages``
        of the configured window; the session passes it)."""
        if not 1 <= history_messages <= MAX_LLM_HISTORY:
            raise ValueError(f"history_messages must be 1..{MAX_LLM_HISTORY}, not {history_messages}")
        self.raw = raw
        self.history_messages = history_messages
        self._reported: set[str] = set()

    @property
    def unreadable_keys(self) -> frozenset[str]:
        """The keys read so far whose stored value was corrupt (and read as empty)."""
        return frozenset(self._reported)

    def read_record(self, key: DataKey, parse: Callable[[str], T], empty: T) -> T:
        """The value under ``key`` read by ``parse``; ``empty`` when there is none, and when it cannot
        be read (reported: ``_unreadable``)."""
        text = self.get(key)
        if not text:
            return empty
        try:
            return parse(text)
        except _UNREADABLE as exc:
            self._unreadable(key, exc)
            return empty

    def _unreadable(self, key: DataKey, exc: BaseException) -> None:
        """A corrupt value reads as empty: never stop a participant's prompts over it. Logged once per
        key and read state, with the error's type only (never the value: it may hold what they wrote)."""
        if key.value in self._reported:
            return
        self._reported.add(key.value)
        logger.warning(
            "unreadable %s in the stored state; read as empty",
            key.value,
            extra={"state_key": key.value, "error_type": type(exc).__name__},
        )
        for listener in list(_corrupt_listeners):
            try:
                listener(key.value)
            except Exception:  # a metrics failure must not fail the read
                logger.exception("corrupt-value listener failed")

    # -- plain strings ----------------------------------------------------------------------
    def get(self, key: DataKey) -> str:
        return self.raw.get(key.value, "")

    def set(self, key: DataKey, value: str) -> None:
        if value:
            self.raw[key.value] = value
        else:
            self.raw.pop(key.value, None)

    def clear(self, key: DataKey) -> None:
        self.raw.pop(key.value, None)

    def get_time(self, key: DataKey) -> datetime | None:
        return self.read_record(key, parse_rfc3339, None)

    def set_time(self, key: DataKey, value: datetime | None) -> None:
        self.set(key, to_rfc3339(value) if value else "")

    # -- sub-state --------------------------------------------------------------------------
    @property
    def sub_state_raw(self) -> str:
        return self.get(DataKey.CONVERSATION_STATE)

    @property
    def sub_state(self) -> SubState:
        """The contract's routing key; empty or unknown (e.g. legacy ``PROMPT_GENERATOR``) is INTAKE."""
        raw = self.sub_state_raw
        return SubState(raw) if raw in SubState.__members__ else SubState.INTAKE

    # -- history ----------------------------------------------------------------------------
    def history(self) -> list[ConversationMessage]:
        # Unreadable history reads as empty, as in the original (docs/behaviour.md#B-HIST-1).
        return self.read_record(DataKey.CONVERSATION_HISTORY, _history_messages, [])

    def set_history(self, messages: list[ConversationMessage]) -> None:
        """Keep the last ``history_messages`` (what the model can be shown: docs/behaviour.md#B-HIST-1)
        and at most ``MAX_HISTORY_BYTES`` (B-HIST-3)."""
        self._store_history([m.to_json_dict() for m in messages[-self.history_messages :]])

    def _store_history(self, kept: list[Any]) -> None:
        # The byte budget: DynamoDB items stop at 400 KB, and a state that cannot be saved would
        # lose every later turn (the full record is in the transcript anyway).
        text = json.dumps({"messages": kept}, ensure_ascii=False)
        while len(text.encode()) > MAX_HISTORY_BYTES and len(kept) > 1:
            kept = kept[1:]
            text = json.dumps({"messages": kept}, ensure_ascii=False)
        self.raw[DataKey.CONVERSATION_HISTORY.value] = encode_history(text)

    def bound_history(self) -> bool:
        """Bring a history written by an earlier version (the original's plain JSON, 50 messages)
        or under a wider window to the stored form: the last ``history_messages``, compressed; the
        messages kept are left as they were. Returns whether the stored value changed. An unreadable
        history is left alone (it reads as empty, and the next reply replaces it)."""
        text = self.get(DataKey.CONVERSATION_HISTORY)
        if not text:
            return False
        try:
            stored = json.loads(decode_history(text)).get("messages") or []
        except _UNREADABLE:
            return False
        if not isinstance(stored, list):
            return False
        compressed = text.startswith(COMPRESSED_HISTORY_PREFIX)
        if compressed and len(stored) <= self.history_messages:
            return False
        self._store_history(stored[-self.history_messages :])
        return True

    def append_history(self, *messages: ConversationMessage) -> None:
        self.set_history([*self.history(), *messages])

    # -- profile ----------------------------------------------------------------------------
    def has_profile(self) -> bool:
        return bool(self.get(DataKey.USER_PROFILE))

    def profile(self) -> UserProfile:
        """The stored profile or a new one (intensity "normal"). A corrupt profile reads as a new one,
        with a warning and a metric (see ``_unreadable``): deliveries and answers go on, and the next
        save replaces it."""
        text = self.get(DataKey.USER_PROFILE)
        if text:
            try:
                return UserProfile.from_json_dict(json.loads(text))
            except _UNREADABLE as exc:
                self._unreadable(DataKey.USER_PROFILE, exc)
        return UserProfile.from_json_dict({})

    def set_profile(self, profile: UserProfile) -> None:
        self.raw[DataKey.USER_PROFILE.value] = json.dumps(profile.to_json_dict(), ensure_ascii=False)

    # -- JSON records -----------------------------------------------------------------------
    def daily_prompt_pending(self) -> DailyPromptPending | None:
        return self.read_record(DataKey.DAILY_PROMPT_PENDING, DailyPromptPending.model_validate_json, None)

    def set_daily_prompt_pending(self, pending: DailyPromptPending | None) -> None:
        self.set(DataKey.DAILY_PROMPT_PENDING, json.dumps(pending.to_json_dict()) if pending else "")

    def schedules(self) -> list[ScheduleInfo]:
        return self.read_record(DataKey.SCHEDULE_REGISTRY, _schedule_list, [])

    def set_schedules(self, schedules: list[ScheduleInfo]) -> None:
        self.raw[DataKey.SCHEDULE_REGISTRY.value] = json.dumps([s.to_json_dict() for s in schedules])

    def answered_questions(self) -> dict[str, str]:
        return self.read_record(DataKey.ANSWERED_QUESTIONS, _answer_marks, {})

    def mark_question(self, name: str, prompt_sent_at: str) -> None:
        marks = self.answered_questions()
        marks[name] = prompt_sent_at
        self.set(DataKey.ANSWERED_QUESTIONS, json.dumps(marks, sort_keys=True))

    def pending_transition(self) -> PendingTransition | None:
        return self.read_record(DataKey.PENDING_TRANSITION, PendingTransition.model_validate_json, None)

    def set_pending_transition(self, pending: PendingTransition | None) -> None:
        self.set(DataKey.PENDING_TRANSITION, json.dumps(pending.to_json_dict()) if pending else "")

    def pending_timers(self) -> dict[str, ScheduleSpec]:
        return self.read_record(DataKey.PENDING_TIMERS, _PENDING_TIMERS.validate_json, {})

    def set_pending_timers(self, timers: dict[str, ScheduleSpec]) -> None:
        if not timers:
            self.clear(DataKey.PENDING_TIMERS)
            return
        self.set(DataKey.PENDING_TIMERS, _PENDING_TIMERS.dump_json(timers, exclude_none=True).decode())

    def controller_state(self) -> RuntimeState | None:
        return self.read_record(DataKey.CONTROLLER_STATE, RuntimeState.from_json, None)  # unreadable: starts afresh

    def set_controller_state(self, runtime: RuntimeState | None) -> None:
        self.set(DataKey.CONTROLLER_STATE, runtime.to_json() if runtime else "")

    def hold(self) -> ConversationHold | None:
        text = self.get(DataKey.HOLD)
        if not text:
            return None
        try:
            return ConversationHold.model_validate_json(text)
        except _UNREADABLE as exc:
            # Unreadable, it still holds: a person looks (and releases) rather than the coach resuming.
            self._unreadable(DataKey.HOLD, exc)
            return ConversationHold(reason=HoldReason.STAFF, since=parse_rfc3339("1970-01-01T00:00:00Z"), set_by="?")

    def set_hold(self, hold: ConversationHold | None) -> None:
        self.set(DataKey.HOLD, hold.to_json() if hold else "")

    def schedule_pause(self) -> SchedulePause | None:
        return self.read_record(DataKey.SCHEDULE_PAUSE, SchedulePause.model_validate_json, None)

    def set_schedule_pause(self, pause: SchedulePause | None) -> None:
        self.set(DataKey.SCHEDULE_PAUSE, pause.to_json() if pause else "")


_PENDING_TIMERS = TypeAdapter(dict[str, ScheduleSpec], config=ConfigDict(defer_build=True))


def _history_messages(text: str) -> list[ConversationMessage]:
    data = json.loads(decode_history(text))
    return [ConversationMessage.model_validate(m) for m in data.get("messages") or []]


def _schedule_list(text: str) -> list[ScheduleInfo]:
    value = json.loads(text)
    if value is None:  # an empty Go slice
        return []
    if not isinstance(value, list):
        raise TypeError(f"a list was expected, not {type(value).__name__}")
    return [ScheduleInfo.model_validate(s) for s in value]


def _answer_marks(text: str) -> dict[str, str]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise TypeError(f"an object was expected, not {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}


def new_state_data(background: str = "") -> dict[str, str]:
    """The state of a freshly enrolled participant (docs/behaviour.md#B-API-5)."""
    data = StateData({})
    data.set_history([])
    if background:
        data.set(DataKey.PARTICIPANT_BACKGROUND, background)
    return data.raw
