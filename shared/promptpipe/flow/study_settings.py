"""A study's own settings over the deployment's (docs/studies.md, "Per-study settings"): the help
text and contact, the safety resources, each participant's model budget. ``config_for`` is what the
engine reads them through, for the participant a reply or a budget is for; ``model_prices`` gives
the prices the cost figures use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from promptpipe.config import CoreConfig
from promptpipe.models.participant import ConversationParticipant
from promptpipe.rules.opt_words import DEFAULT_HELP_TEXTS, FALLBACK_LANGUAGE

if TYPE_CHECKING:
    from promptpipe.models.study import StudyDefinition
    from promptpipe.rules.model_prices import ModelPrice

# The region key of safety resources that apply to every region (``flow/hold.py::resources``).
ANY_REGION = "*"


def config_for(config: CoreConfig, study: StudyDefinition | None, participant: ConversationParticipant) -> CoreConfig:
    """The deployment's settings as they apply to ``participant``: for a participant in the study
    (not a test participant), each setting the study sets (``StudySettings``, read through
    ``study_setting``) in place of the deployment's; otherwise the deployment's as they are."""
    if study is None or participant.test_participant:  # as ``flow/study.py::in_study``
        return config
    # Here, not at import: a study's definition has loaded models.study already, and a function of a
    # deployment without a study never loads it (tests/unit/test_cold_start.py).
    from promptpipe.models.study import study_setting

    help_text = study_setting(study, "help_text", None)
    resources = study_setting(study, "safety_resources", None)
    languages = {FALLBACK_LANGUAGE, *DEFAULT_HELP_TEXTS, *config.help_texts}
    return replace(
        config,
        help_texts={language: str(help_text) for language in languages} if help_text else config.help_texts,
        study_contact=str(study_setting(study, "contact", config.study_contact)),
        safety_resources={ANY_REGION: {FALLBACK_LANGUAGE: str(resources)}} if resources else config.safety_resources,
        budget_model_calls_per_hour=_int(
            study_setting(study, "budget_model_calls_per_hour", config.budget_model_calls_per_hour)
        ),
        budget_model_calls_per_day=_int(
            study_setting(study, "budget_model_calls_per_day", config.budget_model_calls_per_day)
        ),
        budget_input_chars_per_day=_int(
            study_setting(study, "budget_input_chars_per_day", config.budget_input_chars_per_day)
        ),
    )


def _int(value: object) -> int:
    assert isinstance(value, int)  # StudySettings and CoreConfig both declare these as int
    return value


def model_prices(study: StudyDefinition | None) -> Mapping[str, ModelPrice] | None:
    """The prices of the cost figures (``ModelCostUSD``, docs/safety.md#budgets) when the study sets
    its own: the list prices (``rules/model_prices.py``) with each model the study prices at its
    own (USD per 1M input and output tokens; cached input at half the input price, as
    ``custom_price`` takes a price). ``None``: the list prices."""
    if study is None:
        return None
    from promptpipe.models.study import study_setting  # as in ``config_for``

    own = study_setting(study, "prices", None)
    if not isinstance(own, dict) or not own:
        return None
    from promptpipe.rules.model_prices import PRICES, custom_price  # as outcome_metrics: not at import

    return {**PRICES, **{model.strip().lower(): custom_price(inp, out) for model, (inp, out) in own.items()}}
