"""DynamoDB: the single table (docs/architecture.md). Idempotency records live in it too: the flow
state's event records and the sent ledger (``SENT#`` items), so there is no second table."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra import constants as c

_STRING = dynamodb.AttributeType.STRING
_PITR = dynamodb.PointInTimeRecoverySpecification(point_in_time_recovery_enabled=True)


class Storage(Construct):
    """``table``: participants, phone claims, flow state, transcript."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.table = self._build_table()

    def _build_table(self) -> dynamodb.TableV2:
        return dynamodb.TableV2(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name="pk", type=_STRING),
            sort_key=dynamodb.Attribute(name="sk", type=_STRING),
            global_secondary_indexes=[
                dynamodb.GlobalSecondaryIndexPropsV2(
                    index_name=c.PARTICIPANTS_INDEX,
                    partition_key=dynamodb.Attribute(name="gsi1pk", type=_STRING),
                    sort_key=dynamodb.Attribute(name="gsi1sk", type=_STRING),
                    projection_type=dynamodb.ProjectionType.ALL,
                )
            ],
            time_to_live_attribute=c.TTL_ATTRIBUTE,
            billing=dynamodb.Billing.on_demand(),
            encryption=dynamodb.TableEncryptionV2.aws_managed_key(),
            point_in_time_recovery_specification=_PITR,
            # Transcripts are the study's record: a stack deletion must not take them along.
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
