"""A study definition (docs/studies.md): its decision points, its life and its own settings.

A study is stored and validated like a flow: one JSON document per study, under ``prompts/studies/``
locally and in the flows table when deployed. The server, not the model, randomises at each declared
decision point; the model only words the framing of the arm that was drawn.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import ConfigDict, Field, field_validator, model_validator

from promptpipe.lazy_model import LazyModel

# The arms' probabilities must sum to 1 within this tolerance (they are written as decimals).
PROBABILITY_TOLERANCE = 1e-9
ARM_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
HHMM_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
# The line of the prompt generator's instructions that carries the drawn arm's framing (the model
# only words it; the offline coach reads the same line).
FRAMING_LABEL = "Study framing (word today's prompt this way; never mention the study):"


class DecisionPointAt(StrEnum):
    """Where a decision point applies."""

    DAILY_PROMPT = "daily_prompt"
    REMINDER = "reminder"


class Arm(LazyModel):
    """One arm of a decision point. ``framing`` is the instruction the model words; ``None`` means
    no prompt is sent (the no-prompt arm)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=ARM_NAME_PATTERN, description="The arm's name, used in exports as p_<name>")
    probability: float = Field(ge=0.0, le=1.0)
    framing: str | None = Field(
        default=None, max_length=2000, description="How the model is told to word the prompt; None: no prompt"
    )


class Stratum(LazyModel):
    """Optional stratification: participants whose profile field ``field`` equals ``value`` draw
    from these arms' probabilities instead of the decision point's default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str = Field(min_length=1, max_length=64)
    value: str = Field(min_length=1, max_length=128)
    probabilities: dict[str, float]


class DecisionPoint(LazyModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=ARM_NAME_PATTERN)
    at: DecisionPointAt = DecisionPointAt.DAILY_PROMPT
    arms: tuple[Arm, ...] = Field(min_length=2)
    strata: tuple[Stratum, ...] = ()

    @field_validator("arms")
    @classmethod
    def _arms_sum_to_one(cls, arms: tuple[Arm, ...]) -> tuple[Arm, ...]:
        names = [arm.name for arm in arms]
        if len(set(names)) != len(names):
            raise ValueError(f"arm names repeat: {names}")
        total = sum(arm.probability for arm in arms)
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            raise ValueError(f"arm probabilities sum to {total}, not 1")
        return arms

    @model_validator(mode="after")
    def _strata_name_the_arms(self) -> DecisionPoint:
        names = {arm.name for arm in self.arms}
        for stratum in self.strata:
            if set(stratum.probabilities) != names:
                raise ValueError(f"stratum {stratum.field}={stratum.value} must give every arm: {sorted(names)}")
            total = sum(stratum.probabilities.values())
            if abs(total - 1.0) > PROBABILITY_TOLERANCE:
                raise ValueError(f"stratum {stratum.field}={stratum.value} probabilities sum to {total}, not 1")
        return self


class ProximalOutcome(LazyModel):
    """How the proximal outcome is measured, the same way in every arm: an end-of-day check-in sent
    to every available participant at ``check_in_at`` (local time), whose answer is the outcome,
    counted if it comes within ``window_hours`` of the decision."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check_in_at: str = Field(default="20:00", pattern=HHMM_PATTERN)
    check_in_text: str = Field(default="Did you do your habit today? Reply YES or NO.", max_length=320)
    window_hours: int = Field(default=24, ge=1, le=72)


class StudySettings(LazyModel):
    """What a study sets for itself; anything left None falls back to the deployment's settings
    (docs/studies.md, "Per-study settings"). Read through ``study_setting``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The HELP keyword's reply ({study} and {contact} filled in), in every language: the deployment's
    # HELP_TEXTS otherwise.
    help_text: str | None = Field(default=None, max_length=640)
    # The study team's contact (STUDY_CONTACT): the help reply's, and the offline coach's answers.
    contact: str | None = Field(default=None, max_length=200)
    # What the crisis reply and a hold's reply name, for every region and language (SAFETY_RESOURCES).
    safety_resources: str | None = Field(default=None, max_length=640)
    # Not enforced per study: the study-wide daily spend cap is the stack's ``studyDailySpendCapUsd``
    # (docs/safety.md#budgets), and the per-participant budgets below count calls and characters.
    budget_daily_usd: float | None = Field(default=None, ge=0)
    budget_per_participant_daily_usd: float | None = Field(default=None, ge=0)
    prices: dict[str, tuple[float, float]] | None = Field(
        default=None, description="model -> (USD per 1M input tokens, USD per 1M output tokens)"
    )
    # Each participant's model budget (BUDGET_MODEL_CALLS_PER_HOUR, ..._PER_DAY, BUDGET_INPUT_CHARS_PER_DAY).
    budget_model_calls_per_hour: int | None = Field(default=None, ge=0, le=10_000)
    budget_model_calls_per_day: int | None = Field(default=None, ge=0, le=100_000)
    budget_input_chars_per_day: int | None = Field(default=None, ge=0, le=10_000_000)
    # USD per outbound SMS segment in the console's cost estimate (``rules/sms.py``'s list price otherwise).
    sms_segment_usd: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _no_unenforced_budget(self) -> StudySettings:
        if self.budget_daily_usd is not None:
            raise ValueError(
                "budget_daily_usd is not read per study: the study's daily spend cap is the stack's "
                "studyDailySpendCapUsd (docs/safety.md#budgets)"
            )
        if self.budget_per_participant_daily_usd is not None:
            raise ValueError(
                "budget_per_participant_daily_usd is not read per study: set budget_model_calls_per_day "
                "or budget_input_chars_per_day, the per-participant budgets the engine enforces"
            )
        return self


def study_setting(study: StudyDefinition | None, name: str, default: object) -> object:
    """One per-study setting (``StudySettings``): the study's value where it sets one, else the
    deployment's ``default``. The one place such a setting is read."""
    if name not in StudySettings.model_fields:
        raise KeyError(name)
    value = getattr(study.settings, name) if study is not None else None
    return default if value is None else value


class StudyDefinition(LazyModel):
    """One study: ``prompts/studies/<id>.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    name: str = Field(min_length=1, max_length=120)
    duration_days: int = Field(ge=1, le=3650)
    closing_message: str = Field(min_length=1, max_length=640)
    decision_points: tuple[DecisionPoint, ...] = ()
    proximal_outcome: ProximalOutcome = Field(default_factory=ProximalOutcome)
    settings: StudySettings = Field(default_factory=StudySettings)

    @model_validator(mode="after")
    def _unique_decision_points(self) -> StudyDefinition:
        names = [point.name for point in self.decision_points]
        if len(set(names)) != len(names):
            raise ValueError(f"decision point names repeat: {names}")
        places = [point.at.value for point in self.decision_points]
        if len(set(places)) != len(places):  # the engine fires one decision point at each place
            raise ValueError(f"more than one decision point at the same place: {places}")
        return self
