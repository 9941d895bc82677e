"""Every function's cold start defines the flow state's models (``models/state.py``) and the settings
(``settings.py``): their annotations are objects, not strings, because pydantic compiles and evaluates
each string annotation (``from __future__ import annotations``) when it defines a class, about 11 M
instructions of every function's cold start for these two modules (scripts.bench.asset_callgrind)."""

from __future__ import annotations

import importlib

import pytest
from pydantic import BaseModel

EVERY_FUNCTION_MODEL_MODULES = ("promptpipe.models.state", "promptpipe.settings")


@pytest.mark.parametrize("module", EVERY_FUNCTION_MODEL_MODULES)
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
