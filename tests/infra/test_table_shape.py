"""The synthesized table has exactly the shape the one declaration states
(``promptpipe.adapters.dynamodb_table.TABLE``), which the local stack creates too
(tests/integration/test_dynamodb_store.py checks that side)."""

from __future__ import annotations

from promptpipe.adapters.dynamodb_table import PARTICIPANTS_INDEX, TABLE
from tests.infra.synth import Synth
from tests.support.table_shape import shape_of


def test_the_synthesized_table_has_the_declared_shape(synth: Synth) -> None:
    # Given the stack's one DynamoDB table
    (table,) = synth.of_type("AWS::DynamoDB::GlobalTable").values()
    properties = table["Properties"]
    ttl = properties.get("TimeToLiveSpecification", {})

    # Then its keys, attribute types, indexes (keys and projection), TTL attribute and stream are the
    # declaration's
    shape = shape_of(properties, ttl_attribute=ttl.get("AttributeName") if ttl.get("Enabled") else None)
    assert shape == TABLE.canonical()
    assert not synth.of_type("AWS::DynamoDB::Table")


def test_the_functions_query_the_declared_participants_index(synth: Synth) -> None:
    # The enrollment function lists participants through the index: its name in the environment and
    # the IAM grant are the declaration's
    assert (
        synth.function("enrollment")["Environment"]["Variables"]["PARTICIPANTS_INDEX_NAME"] == PARTICIPANTS_INDEX.name
    )
    resources = [
        str(s["Resource"])
        for s in synth.statements(synth.role_id("enrollment"))
        if "dynamodb:Query" in str(s["Action"])
    ]
    assert any(f"/index/{PARTICIPANTS_INDEX.name}" in r for r in resources)
