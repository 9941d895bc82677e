"""A function's cold start defines the models of these modules (the flow state, the settings, what the
repository and the effects read and write, in every function; the last five in one or two): their
annotations are objects, not strings, because pydantic compiles and evaluates each string annotation
(``from __future__ import annotations``) when it defines a class, at every cold start
(scripts.bench.asset_callgrind: 36-39 M instructions of each function's, all these modules together).
The participants API's own model modules are held to the same (about 10 M of its cold start for
models/api.py alone)."""

from __future__ import annotations

import importlib

import pytest
from pydantic import BaseModel

from tests.unit.test_participants_api_cold_start import API_MODEL_MODULES

EVERY_FUNCTION_MODEL_MODULES = (
    "promptpipe.models.state",
    "promptpipe.settings",
    "promptpipe.controller.runtime",
    "promptpipe.models.decision",
    "promptpipe.models.effects",
    "promptpipe.models.events",
    "promptpipe.models.llm_routes",
    "promptpipe.models.messaging",
    "promptpipe.models.participant",
    "promptpipe.models.participant_rows",
    "promptpipe.models.profile",
    "promptpipe.models.safety",
    "promptpipe.models.store",
    "promptpipe.rules.scheduling",
    "promptpipe.rules.tone",
    "promptpipe.channels.http_event",  # the webhook's
    "promptpipe.models.provider_payload",  # the webhook's
    "promptpipe.models.llm",  # the worker's and the scheduled prompt's
    "promptpipe.flow.questions",  # the scheduled prompt's
    "promptpipe.models.sweeps",  # the timers'
)


@pytest.mark.parametrize("module", EVERY_FUNCTION_MODEL_MODULES + API_MODEL_MODULES)
def test_the_models_every_function_defines_have_annotations_as_objects(module: str) -> None:
    loaded = importlib.import_module(module)
    models = [
        value
        for value in vars(loaded).values()
        if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == module
    ]
    assert models
    strings = {
        f"{model.__name__}.{name}": annotation
        for model in models
        for name, annotation in vars(model).get("__annotations__", {}).items()
        if isinstance(annotation, str)
    }
    assert strings == {}
