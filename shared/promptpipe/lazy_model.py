"""The base of every pydantic model in the code base: its validator and serializer are built at first
use, not when the class is defined.

Building them at import cost each function's cold start about 0.3x the stack's floor (a hundred-odd
models, most of which a given function's first event never touches: the webhook validates an inbound
message and a queue event, not the flow state or the flow definitions); see docs/benchmarks.md,
section 2. A model pays its build once per process, at its first validation or serialization.
tests/unit/test_cold_start.py holds every model of the package to this base.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class LazyModel(BaseModel):
    """``pydantic.BaseModel`` with ``defer_build``; subclasses inherit it alongside their own config."""

    model_config = ConfigDict(defer_build=True)
