"""Domain errors. Adapters translate provider errors into these (``raise ... from exc``)."""

from __future__ import annotations


class PromptPipeError(Exception):
    """Base class of every error this package raises on purpose."""


class ValidationFailed(PromptPipeError):
    """Input from a client or a model failed validation; the message says which field and why."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InvalidPhoneNumber(ValidationFailed):
    """A phone number could not be canonicalised to E.164."""


class ParticipantNotFound(PromptPipeError):
    """No participant has the given id (or phone number)."""


class ParticipantAlreadyEnrolled(PromptPipeError):
    """The phone number is already claimed by another participant. ``participant_id`` and
    ``enrollment`` (the fingerprint of the enrolment request that created it) are what the claim
    says, when the store could tell (docs/behaviour.md, "Participants API": a retried enrolment)."""

    def __init__(self, message: str, *, participant_id: str | None = None, enrollment: str | None = None) -> None:
        super().__init__(message)
        self.participant_id = participant_id
        self.enrollment = enrollment


class StateConflict(PromptPipeError):
    """A conditional write lost against a concurrent commit (the version moved)."""


class EventAlreadyCommitted(PromptPipeError):
    """A commit claimed an event id that an earlier commit already claimed (its event-id item
    exists): the event was answered before, however long ago; nothing of this commit was written."""


class QueueError(PromptPipeError):
    """The queue refused or failed to take a turn (after botocore's own retries)."""


class StoreError(PromptPipeError):
    """The participant and state store (DynamoDB) failed an operation for a reason that is not a
    domain outcome: throttled past the client's retries, timed out, unreachable, refused the request
    (a validation error, access denied) or failed inside. The provider's error is chained
    (``__cause__``). A lost condition is never this: it is ``StateConflict``, ``ParticipantNotFound``,
    ``ParticipantAlreadyEnrolled`` …; and a bug (a ``TypeError`` while building an item) is not
    translated at all.

    ``operation`` names the adapter method that failed (``DynamoStateStore.commit``); ``code`` is the
    AWS error code (``ProvisionedThroughputExceededException``), or the botocore exception's name
    when AWS never answered (``ReadTimeoutError``, ``EndpointConnectionError``).
    """

    def __init__(self, message: str, *, operation: str, code: str) -> None:
        super().__init__(message)
        self.operation = operation
        self.code = code


class StateConflictRetriesExhausted(PromptPipeError):
    """A unit of work kept conflicting after its bounded number of replays."""


class TimerError(PromptPipeError):
    """The timer service (EventBridge Scheduler) refused or failed an operation."""


class EffectsPending(TimerError):
    """Schedule changes failed after their state was committed; the participant's pending-effects
    marker is written, so the next event for them or the periodic sweep re-applies them."""


class InvalidScheduleExpression(TimerError):
    """A schedule name, expression or time zone is not valid for EventBridge Scheduler."""


class LLMError(PromptPipeError):
    """The language model call failed after the adapter's own retries."""

    def __init__(self, message: str, *, status_code: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = retryable


class MessagingError(PromptPipeError):
    """The messaging provider refused or failed to send a message."""

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        retryable: bool = True,
        undeliverable: bool = False,
        accepted_parts: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.retryable = retryable
        # The provider refused this message for its recipient for good (unsubscribed, not a valid
        # number, WhatsApp's window closed with no template): sending it again would be refused too.
        self.undeliverable = undeliverable
        # A split SMS refused part-way: the provider ids of the parts accepted before the refusal
        # (a retry sends only the rest: ``OutboundMessage.parts_accepted``).
        self.accepted_parts = list(accepted_parts or [])


class ConfigurationError(PromptPipeError):
    """A required setting is missing or inconsistent."""


class ResourceUnavailable(PromptPipeError):
    """A resource outside the system (a database to import from) cannot be reached."""


class FlowNotFound(PromptPipeError):
    """No flow definition (or no such version of it) is stored."""


class FlowPushConflict(PromptPipeError):
    """Other pushes of the same flow kept storing a version first; ``latest_version`` is the one
    that won (the caller reads it and pushes again)."""

    def __init__(self, flow_id: str, latest_version: int) -> None:
        super().__init__(f"flow {flow_id!r} changed while pushing: version {latest_version} is the latest")
        self.flow_id = flow_id
        self.latest_version = latest_version


def error_body(message: str) -> dict[str, str]:
    """The body of every error answer (``models.api.ErrorEnvelope``): the participants API, the
    webhooks, the answers a function gives before its resolver runs, and the local server's own."""
    return {"status": "error", "message": message}
