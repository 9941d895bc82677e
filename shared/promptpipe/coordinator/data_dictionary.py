"""``data_dictionary.json`` of the de-identified export: a Frictionless Data Package whose every
resource (file) carries a Table Schema: each column's type, unit, allowed values and meaning
(docs/studies.md, "The de-identified export").

The fields are written here by hand, apart from the writer: ``schema_for`` refuses a column it does
not describe, so a column added to a file without its meaning fails the export's tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from promptpipe.errors import PromptPipeError
from promptpipe.models.decision import DecisionDelivery, ProximalOutcomeValue, UnavailableReason
from promptpipe.models.participant import ParticipantStatus

STUDY_TIME_PATTERN = r"^[0-9]+ ([01][0-9]|2[0-3]):[0-5][0-9]$"
BOOLEAN = {"trueValues": ["true"], "falseValues": ["false"]}


def _time(meaning: str) -> dict[str, Any]:
    # the type and format are set per export (study time or calendar dates): see _with_dates
    return {"kind": "instant", "description": meaning}


def _text(meaning: str) -> dict[str, Any]:
    return {
        "type": "string",
        "description": meaning + " Free text, only with --include-text; phone numbers, emails and the participant's "
        "names are replaced by [phone], [email] and [name].",
    }


def _enum(meaning: str, values: Sequence[str], *, required: bool = True) -> dict[str, Any]:
    allowed = list(values) if required else ["", *values]
    return {"type": "string", "description": meaning, "constraints": {"enum": allowed}}


def _count(meaning: str, unit: str) -> dict[str, Any]:
    return {"type": "integer", "description": meaning, "unit": unit, "constraints": {"minimum": 0}}


def _bool(meaning: str) -> dict[str, Any]:
    return {"type": "boolean", "description": meaning, **BOOLEAN}


PARTICIPANT = {
    "type": "string",
    "description": "The participant's pseudonym: ps_ + 20 hex digits of HMAC-SHA256 of their id with the study's "
    "salt. The same in every export made with the same salt; not linkable to the id without it.",
    "constraints": {"pattern": r"^ps_[0-9a-f]{20}$", "required": True},
}
TIMEZONE = {"type": "string", "description": "The participant's IANA time zone; local times are in it."}

FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "participants.csv": {
        "participant": PARTICIPANT,
        "timezone": TIMEZONE,
        "enrolled_at": _time("When the participant was enrolled (study day 1 is its local date)."),
        "status": _enum(
            "The participant's status at export.", [*(status.value for status in ParticipantStatus), "deleted"]
        ),
        "opted_out": _bool("Paused by the participant's own STOP."),
        "sub_state": {"type": "string", "description": "Where the participant stands in the conversation flow."},
        "habit_domain": _text("The habit the participant chose, in their words."),
        "motivational_frame": _text("Why the participant wants the habit, in their words."),
        "preferred_time": _text("When the participant said the prompt suits them, in their words."),
        "prompt_anchor": _text("The routine the participant anchors the habit to, in their words."),
        "intensity": {"type": "string", "description": "The prompt intensity the participant is on."},
        "prompts_sent": _count("Daily prompts delivered.", "prompts"),
        "answered": _count("Daily prompts answered.", "prompts"),
        "done": _count("Daily prompts answered done.", "prompts"),
        "next_time": _count("Daily prompts answered next time.", "prompts"),
        "done_rate": {
            "type": "number",
            "description": "done / prompts_sent; empty before the first prompt.",
            "unit": "proportion",
            "constraints": {"minimum": 0, "maximum": 1},
        },
        "reminders": _count("Reminders delivered.", "messages"),
        "handoffs": _count("Times the conversation was handed to a person.", "events"),
        "last_reply_at": _time("The participant's last message."),
        "undelivered": _count("Outbound messages decided but not delivered.", "messages"),
        "consent_at": _time("When consent was recorded."),
        "consent_version": {"type": "string", "description": "The consent text's version."},
        "consent_method": {"type": "string", "description": "How consent was given (e.g. sms, paper)."},
        "withdrawal_at": _time("When the withdrawal of consent was recorded."),
        "withdrawal_version": {"type": "string", "description": "The consent text's version at withdrawal."},
        "withdrawal_method": {"type": "string", "description": "How consent was withdrawn."},
        "timezone_default": _bool("The time zone is the deployment's default, not one the participant gave."),
    },
    "prompts.csv": {
        "participant": PARTICIPANT,
        "sent_at": _time("When the daily prompt was sent."),
        "timezone": TIMEZONE,
        "prompt": _text("The prompt as sent."),
        "answered_at": _time("The first answer to the prompt's question."),
        "latency_minutes": {
            "type": "number",
            "description": "answered_at - sent_at.",
            "unit": "minutes",
            "constraints": {"minimum": 0},
        },
        "answer": _enum("The answer to 'Did you do it?'.", ("Done", "Next time"), required=False),
        "intensity": _enum(
            "The answer to the intensity poll.", ("Decrease", "Keep current", "Increase"), required=False
        ),
        "reminder_sent": _bool("A reminder followed the prompt."),
        "first_reply": _text("The participant's first reply after the prompt."),
    },
    "messages.jsonl": {
        "participant": PARTICIPANT,
        "at": _time("When the message was sent or received."),
        "direction": _enum("Who wrote it.", ("inbound", "outbound", "system")),
        "kind": {"type": "string", "description": "What the message is: message, reply, daily_prompt, reminder, ..."},
        "delivered": _bool("Inbound and system entries are; an outbound one when the provider accepted it."),
        "text": _text("The message."),
    },
    "adherence.csv": {
        "day": {
            "type": "integer",
            "description": "Study day (1 = enrolment).",
            "unit": "days",
            "constraints": {"minimum": 1},
        },
        "participants": _count("Participants in the study on that day.", "participants"),
        "prompted": _count("Participants prompted that day.", "participants"),
        "answered": _count("Of those prompted, who answered.", "participants"),
        "done": _count("Of those prompted, who answered done.", "participants"),
        "answered_share": {"type": "number", "description": "answered / prompted.", "unit": "proportion"},
        "done_share": {"type": "number", "description": "done / prompted.", "unit": "proportion"},
        "median_latency_minutes": {"type": "number", "description": "Median time to answer.", "unit": "minutes"},
        "quiet_hours_delays": _count("Nudges quiet hours moved or dropped that day.", "messages"),
    },
    "decisions.csv": {
        "participant": PARTICIPANT,
        "decision_point": {"type": "string", "description": "The study's decision point (its name)."},
        "decided_at": _time("When the decision was made (the decision point fired)."),
        "available": _bool("The participant was available: not paused, opted out, on hold or past the study's end."),
        "unavailable_reason": _enum(
            "Why the participant was not available; empty when available.",
            [reason.value for reason in UnavailableReason],
            required=False,
        ),
        "arm": {"type": "string", "description": "The arm drawn; empty when not available."},
        "probability": {
            "type": "number",
            "description": "The drawn arm's probability; empty when not available.",
            "unit": "probability",
            "constraints": {"minimum": 0, "maximum": 1},
        },
        "intended_send_at": _time("When the arm's message was to be sent; empty for none."),
        "sent_at": _time("When the message was sent; empty for none."),
        "delivery": _enum("What became of the message.", [value.value for value in DecisionDelivery]),
        "outcome": _enum(
            "The proximal outcome: done; replied within the study's window but not done; none (the window "
            "closed with no reply); empty while the window is open.",
            [value.value for value in ProximalOutcomeValue],
            required=False,
        ),
    },
}
ARM_PROBABILITY_PREFIX = "p_"
PRIMARY_KEYS = {"participants.csv": ["participant"], "decisions.csv": ["participant", "decision_point", "decided_at"]}


class UndescribedColumn(PromptPipeError, KeyError):
    """A column written without its entry in the data dictionary."""


def field_for(file: str, column: str, *, calendar_dates: bool, arms: Sequence[str] = ()) -> dict[str, Any]:
    """The Table Schema field of one column of one file."""
    if file == "decisions.csv" and column.startswith(ARM_PROBABILITY_PREFIX):
        arm = column.removeprefix(ARM_PROBABILITY_PREFIX)
        if arm in arms:
            return {
                "name": column,
                "type": "number",
                "description": f"The probability of arm {arm} at this decision (the p_ columns sum to 1).",
                "unit": "probability",
                "constraints": {"minimum": 0, "maximum": 1},
            }
    spec = FIELDS.get(file, {}).get(column)
    if spec is None:
        raise UndescribedColumn(f"{file}: column {column!r} is not in the data dictionary")
    field = {"name": column, **spec}
    if file == "decisions.csv" and column == "arm" and arms:
        field["constraints"] = {"enum": ["", *arms]}
    if field.pop("kind", None) == "instant":
        if calendar_dates:
            field.update(type="datetime", format="any", unit="local time with its UTC offset (ISO 8601)")
        else:
            field.update(
                type="string",
                unit="study day and local time (HH:MM)",
                constraints={"pattern": STUDY_TIME_PATTERN},
            )
            field["description"] += " '<study day> <HH:MM>': study day 1 is the local date of enrolment."
    return field


def schema_for(file: str, columns: Sequence[str], *, calendar_dates: bool, arms: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "fields": [field_for(file, column, calendar_dates=calendar_dates, arms=arms) for column in columns],
        "missingValues": [""],
    }
    if file in PRIMARY_KEYS:
        schema["primaryKey"] = PRIMARY_KEYS[file]
    return schema


def data_package(
    files: Mapping[str, Sequence[str]], *, calendar_dates: bool, include_text: bool, arms: Sequence[str] = ()
) -> dict[str, Any]:
    """The whole dictionary: one resource per file written, with the columns it holds."""
    return {
        "name": "promptpipe-deidentified-export",
        "description": "De-identified PromptPipe export (docs/studies.md): participants keyed by a salted pseudonym, "
        + ("calendar dates in local time" if calendar_dates else "times as study day and local time of day")
        + ("; free text included with phone numbers, emails and names masked" if include_text else "; no free text"),
        "resources": [
            {
                "name": file.rsplit(".", 1)[0],
                "path": file,
                "format": file.rsplit(".", 1)[1],
                "schema": schema_for(file, columns, calendar_dates=calendar_dates, arms=arms),
            }
            for file, columns in files.items()
        ],
    }
