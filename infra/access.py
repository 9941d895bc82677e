"""What each function's code calls in AWS: the one table its execution role is built from.

``tests/infra/test_iam_derived.py`` runs every handler under moto, records each AWS call, maps it to
the IAM action, resource and DynamoDB partition-key prefix it needs, and fails when a synthesized
role allows more or less than that (plus a short, reasoned list of platform needs). When the code
starts or stops calling something, change this table; the test says what to add or remove.

DynamoDB actions name the partition-key prefixes they touch; the role allows them only on items
whose partition key starts so (``dynamodb:LeadingKeys``). A ``TransactWriteItems`` call needs the
action of each item in it (``PutItem``, ``UpdateItem``, ``DeleteItem``, ``ConditionCheckItem``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from infra import constants as c

PARTICIPANT = "PARTICIPANT#"  # META, flow state, transcript (MSG#) of one participant
PHONE = "PHONE#"  # the claim that maps a phone number to its participant
FLOW = "FLOW#"  # stored flow definitions (the flow controller), one partition per flow
AUDIT = "AUDIT#"  # the coordinators' audit records, one partition (docs/console.md, "Accountability")

# Creating is create-or-update by name (UpdateSchedule when the name exists: a retried event).
SCHEDULE_UPSERT = ("scheduler:CreateSchedule", "scheduler:UpdateSchedule")
SCHEDULE_WRITE = (*SCHEDULE_UPSERT, "scheduler:DeleteSchedule")


@dataclass(frozen=True)
class Access:
    """One function's rights. Every field lists IAM actions; empty means none."""

    # DynamoDB action -> the partition-key prefixes it is allowed on (the single table).
    table: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    participants_index: tuple[str, ...] = ()  # on the gsi1 index only (listing participants)
    inbound_queue: tuple[str, ...] = ()
    inbound_dead_letters: tuple[str, ...] = ()  # on the inbound queue's dead-letter queue
    schedules: tuple[str, ...] = ()  # on schedules of this stack's group
    list_schedules: bool = False  # scheduler:ListSchedules, which takes no resource ARN (on "*")
    pass_scheduler_role: bool = False  # CreateSchedule/UpdateSchedule hand the scheduler its role
    secrets: tuple[str, ...] = ()  # "openai", "channel": GetSecretValue on those secrets
    prompt_parameters: tuple[str, ...] = ()  # on the SSM parameters under the prompt store's prefix
    endpoint_secrets: bool = False  # GetSecretValue on the key secret of each model endpoint (llmEndpoints)
    spend_cap_parameter: tuple[str, ...] = ()  # on the spend-cap alarm's state parameter (docs/safety.md#budgets)
    team_alerts: tuple[str, ...] = ()  # on the study team's safety alert topic (docs/safety.md)


# Every cold start builds the messenger, which reads the channel secret; the functions that call the
# model also read the OpenAI secret (both read by one ``load_secrets``).
_FLOW = {
    "dynamodb:Query": (PARTICIPANT,),  # load: META + flow state in one Query
    "dynamodb:PutItem": (PARTICIPANT,),  # commit: flow state, META, transcript entries; the sent
    # record of an event whose effects failed part-way (SENT#)
    "dynamodb:ConditionCheckItem": (PARTICIPANT,),  # commit: META must still exist
    "dynamodb:GetItem": (PARTICIPANT,),  # a redelivered event: its sent record
    "dynamodb:BatchGetItem": (PARTICIPANT,),  # a redelivered event: its messages, from the transcript
    # the delivery outcomes on the transcript entries (one UpdateItem, or one TransactWriteItems of
    # updates for an event with several messages)
    "dynamodb:UpdateItem": (PARTICIPANT,),
}
# The turns that steer intake read the flow definition (through a cache); while none is stored they
# use the bundled one from their own code. Only the flows API (enrollment) stores definitions.
_STEERING = {
    "dynamodb:GetItem": (PARTICIPANT, FLOW),
}


def access_for(config: c.Config) -> dict[str, Access]:
    """Each function's rights under ``config``: the webhook's depend on auto-enrolment; with the SSM
    prompt store, the model-calling functions read its parameters (the prompt library's fetch); with
    model endpoints (``llmEndpoints``), they read each endpoint's key secret; with a study spend cap
    (``studyDailySpendCapUsd``, on by default), they read its state parameter."""
    access = {**ACCESS, c.WEBHOOK.key: _webhook(auto_enroll=config.auto_enroll_new_users)}
    if config.prompt_store == "ssm":
        for key in (c.WORKER.key, c.SCHEDULED_PROMPT.key):
            access[key] = replace(access[key], prompt_parameters=("ssm:GetParameter",))
    if config.endpoints():  # the model-calling functions read each endpoint's key, nobody else
        for key in (c.WORKER.key, c.SCHEDULED_PROMPT.key):
            access[key] = replace(access[key], endpoint_secrets=True)
    if config.study_daily_spend_cap_usd:  # the model-calling functions read whether it is reached
        for key in (c.WORKER.key, c.SCHEDULED_PROMPT.key):
            access[key] = replace(access[key], spend_cap_parameter=("ssm:GetParameter",))
    return access


def _webhook(*, auto_enroll: bool) -> Access:
    return Access(
        table={
            "dynamodb:GetItem": (PHONE, PARTICIPANT),  # who sent this? (and a redelivery's sent record)
            "dynamodb:BatchGetItem": (PARTICIPANT,),  # a redelivered STOP / START: its messages
            "dynamodb:Query": (PARTICIPANT,),  # STOP / START open the participant's state
            "dynamodb:UpdateItem": (PARTICIPANT,),  # the confirmation's delivery outcome
            # STOP / START commit the participant's state; auto-enrolment also claims the number,
            # so without it the public function cannot write a phone claim at all.
            "dynamodb:PutItem": (PARTICIPANT, PHONE) if auto_enroll else (PARTICIPANT,),
        },
        # messages for the worker, and the schedule changes of STOP / START: the public function
        # changes no schedule itself (docs/architecture.md#the-stack-rights-and-alarms)
        inbound_queue=("sqs:SendMessage",),
        secrets=("channel",),  # signature secrets
        team_alerts=("sns:Publish",),  # a crisis inside an opt-out (docs/safety.md)
    )


# With the default deployment settings (autoEnrollNewUsers off); see ``access_for``.
ACCESS: dict[str, Access] = {
    c.ENROLLMENT.key: Access(
        table={
            "dynamodb:GetItem": (PARTICIPANT, FLOW),  # read a participant; a stored flow
            # state, history, transcript erasure; flow versions; the audit (read, and an erasure's redaction)
            "dynamodb:Query": (PARTICIPANT, FLOW, AUDIT),
            # the participants list's rows: a page's flow states; the held participants' records (/queue)
            "dynamodb:BatchGetItem": (PARTICIPANT,),
            # enrol (participant + claim + state), update; push a flow version (+ its latest pointer)
            # the bundled flow as version 1 before a push; an audit record of each coordinator action
            "dynamodb:PutItem": (PARTICIPANT, PHONE, FLOW, AUDIT),
            "dynamodb:ConditionCheckItem": (PARTICIPANT,),
            "dynamodb:DeleteItem": (PARTICIPANT, PHONE),  # delete participant, claim, state
            "dynamodb:BatchWriteItem": (PARTICIPANT,),  # erase the transcript (keep_transcript=false)
        },
        participants_index=("dynamodb:Query",),
        inbound_queue=("sqs:SendMessage",),  # the greeting turn
        # pause / resume / delete; reconcile reads each live schedule (GetSchedule) to find drift
        schedules=(*SCHEDULE_WRITE, "scheduler:GetSchedule"),
        # delete: every live schedule named for the participant goes too; reconcile lists them
        list_schedules=True,
        pass_scheduler_role=True,
        secrets=("channel",),
    ),
    c.WEBHOOK.key: _webhook(auto_enroll=False),
    c.WORKER.key: Access(
        # a turn's commit removes its message's accepted entry (docs/reliability.md, "The record
        # under faults"), in the same transaction
        table={**_FLOW, **_STEERING, "dynamodb:DeleteItem": (PARTICIPANT,)},
        # The event source mapping polls the queue with the function's role; the unanswered-turns
        # sweep puts dead-lettered turns back on it.
        inbound_queue=("sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"),
        # the sweep: how many wait, take each, delete it once re-sent
        inbound_dead_letters=("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"),
        schedules=SCHEDULE_WRITE,  # the scheduler tool, state transitions, STOP / START's schedules
        pass_scheduler_role=True,
        secrets=("openai", "channel"),
        team_alerts=("sns:Publish",),  # a safety flag (docs/safety.md)
    ),
    c.SCHEDULED_PROMPT.key: Access(
        table=dict(_FLOW),
        # arms the reminder, auto-feedback and feedback one-shots; deletes a schedule that fires
        # although the state no longer wants it (an orphan removes itself on its first firing)
        schedules=SCHEDULE_WRITE,
        pass_scheduler_role=True,
        secrets=("openai", "channel"),
        # the alert of an announced hold a daily firing places: published after its commit, as the
        # worker's are, not only logged (docs/safety.md)
        team_alerts=("sns:Publish",),
    ),
    c.TIMERS.key: Access(
        table={
            **_FLOW,
            # the sweep: reconcile a marked participant, then clear the marker
            "dynamodb:DeleteItem": (PARTICIPANT,),
        },
        # the sweep: list the pending-effects markers and the needs-a-person markers
        participants_index=("dynamodb:Query",),
        schedules=SCHEDULE_WRITE,
        list_schedules=True,  # the sweep: reconcile compares with the live schedules
        pass_scheduler_role=True,
        secrets=("channel",),
        team_alerts=("sns:Publish",),  # the sweep: the hold alerts left pending (docs/safety.md)
    ),
}
