"""SQS: the inbound FIFO queue with its FIFO dead-letter queue, and the scheduler's dead-letter queue."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c


class Queues(Construct):
    """``inbound`` (one ordered line per participant), ``inbound_dlq`` and ``scheduler_dlq``."""

    def __init__(self, scope: Construct, construct_id: str, *, prefix: str) -> None:
        super().__init__(scope, construct_id)
        self.inbound_dlq = self._build_inbound_dlq(prefix)
        self.inbound = self._build_inbound(prefix)
        self.scheduler_dlq = self._build_scheduler_dlq(prefix)

    def _build_inbound_dlq(self, prefix: str) -> sqs.Queue:
        return sqs.Queue(
            self,
            "InboundDlq",
            queue_name=f"{prefix}-inbound-dlq.fifo",
            fifo=True,
            retention_period=cdk.Duration.days(c.DLQ_RETENTION_DAYS),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )

    def _build_inbound(self, prefix: str) -> sqs.Queue:
        return sqs.Queue(
            self,
            "Inbound",
            queue_name=f"{prefix}-inbound.fifo",
            fifo=True,
            # The webhook sets explicit dedup ids (provider message ids).
            content_based_deduplication=False,
            # High-throughput FIFO: groups are participants, so order per participant is all we need.
            deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
            fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            visibility_timeout=cdk.Duration.seconds(c.VISIBILITY_TIMEOUT_FACTOR * c.WORKER.timeout_s),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.inbound_dlq, max_receive_count=c.INBOUND_MAX_RECEIVE_COUNT
            ),
        )

    def _build_scheduler_dlq(self, prefix: str) -> sqs.Queue:
        # Standard queue: the scheduler's dead-letter target cannot be FIFO. It also receives the
        # scheduler targets' failed async invocations (see Functions), so both carry the same payload.
        return sqs.Queue(
            self,
            "SchedulerDlq",
            queue_name=f"{prefix}-scheduler-dlq",
            retention_period=cdk.Duration.days(c.DLQ_RETENTION_DAYS),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )

    @property
    def dead_letter_queues(self) -> dict[str, sqs.Queue]:
        """Every dead-letter queue, by a short name (alarms and dashboard)."""
        return {"InboundDlq": self.inbound_dlq, "SchedulerDlq": self.scheduler_dlq}
