"""DynamoDB: the single table (docs/architecture.md). Idempotency records live in it too: the flow
state's event records and the sent ledger (``SENT#`` items), so there is no second table.

Its shape (keys, indexes, TTL, stream) is ``promptpipe.adapters.dynamodb_table.TABLE``, the same
declaration the local stack creates its table from; here it only becomes CDK constructs."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from promptpipe.adapters.dynamodb_table import TABLE, Index, KeyAttribute

_ATTRIBUTE_TYPES = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}
_PROJECTIONS = {"ALL": dynamodb.ProjectionType.ALL, "KEYS_ONLY": dynamodb.ProjectionType.KEYS_ONLY}
_PITR = dynamodb.PointInTimeRecoverySpecification(point_in_time_recovery_enabled=True)


class Storage(Construct):
    """``table``: participants, phone claims, flow state, transcript."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.table = self._build_table()

    def _build_table(self) -> dynamodb.TableV2:
        shape = TABLE
        return dynamodb.TableV2(
            self,
            "Table",
            partition_key=_attribute(shape.partition_key),
            sort_key=_attribute(shape.sort_key) if shape.sort_key else None,
            global_secondary_indexes=[_index(index) for index in shape.indexes],
            time_to_live_attribute=shape.ttl_attribute,
            dynamo_stream=dynamodb.StreamViewType(shape.stream) if shape.stream else None,
            billing=dynamodb.Billing.on_demand(),
            encryption=dynamodb.TableEncryptionV2.aws_managed_key(),
            point_in_time_recovery_specification=_PITR,
            # Transcripts are the study's record: a stack deletion must not take them along.
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )


def _attribute(key: KeyAttribute) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=key.name, type=_ATTRIBUTE_TYPES[key.type])


def _index(index: Index) -> dynamodb.GlobalSecondaryIndexPropsV2:
    return dynamodb.GlobalSecondaryIndexPropsV2(
        index_name=index.name,
        partition_key=_attribute(index.partition_key),
        sort_key=_attribute(index.sort_key) if index.sort_key else None,
        projection_type=_PROJECTIONS[index.projection],
    )
