"""One synth of the default app per test process, shared by the infrastructure test modules."""

from __future__ import annotations

import pytest

from tests.infra.synth import Synth, synthesize


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    return synthesize(tmp_path_factory.mktemp("cdk.out"))
