"""The participants API's routers: a wrong method is told from a missing route by the routes the
routers declared (``answers.allowed_methods``, the one shim), and each file stays small."""

from __future__ import annotations

from pathlib import Path

import pytest

from functions.enrollment import handler  # the resolver with every router included (and the collector resumed)
from functions.enrollment.answers import BASE, FLOWS, allowed_methods

ENROLLMENT = Path(handler.__file__).parent


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        (BASE, ["GET", "POST"]),
        (f"{BASE}/", ["GET", "POST"]),
        (f"{BASE}/p_1", ["GET", "PUT", "DELETE"]),
        (f"{BASE}/p_1/history", ["GET"]),
        (f"{BASE}/p_1/state", ["GET", "POST"]),
        (f"{BASE}/p_1/reconcile", ["POST"]),
        ("/conversation/reconcile", ["POST"]),
        ("/conversation/participant-rows", ["GET"]),
        ("/conversation/studies/example-mrt/decisions", ["GET"]),
        (f"{FLOWS}/validate", ["POST"]),  # the literal route, not the flow named "validate"
        (f"{FLOWS}/intake", ["GET", "PUT"]),
        (f"{FLOWS}/intake/versions", ["GET"]),
        (f"{BASE}/p_1/history/more", []),
        ("/elsewhere", []),
        (f"{BASE}x", []),
    ],
)
def test_the_allowed_methods_of_a_path_are_those_its_routes_declare(path: str, allowed: list[str]) -> None:
    assert allowed_methods(path) == allowed


def test_each_file_of_the_enrollment_function_is_under_200_lines() -> None:
    lengths = {path.name: len(path.read_text().splitlines()) for path in ENROLLMENT.glob("*.py")}
    assert len(lengths) >= 6
    assert {name: n for name, n in lengths.items() if n >= 200} == {}
