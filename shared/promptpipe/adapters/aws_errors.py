"""AWS errors, read and translated in one place.

``error_code`` is the one reading of a ``ClientError``'s code for every adapter, ``condition_held``
the one reading of a conditional write's lost condition. ``store_operation``
wraps each public method of the DynamoDB adapters: a method first maps the failures that are domain
outcomes (a lost condition: ``StateConflict``, ``ParticipantNotFound`` …) and lets every other
botocore error out; the wrapper turns those into ``StoreError`` (``raise … from exc``), so nothing
above the adapters sees a botocore exception. Bugs stay bugs: a ``TypeError`` or ``KeyError`` while
building an item, or botocore refusing a malformed request before sending it
(``ParamValidationError`` and its kin), propagate untranslated.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    OperationNotPageableError,
    ParamValidationError,
    StubResponseError,
    UnknownClientMethodError,
)
from botocore.exceptions import ValidationError as RequestValidationError

from promptpipe.errors import StoreError

TRANSACTION_CANCELED = "TransactionCanceledException"
CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailedException"
# Per-action cancellation reasons of a TransactWriteItems.
CONDITION_FAILED = "ConditionalCheckFailed"
TRANSACTION_CONFLICT = "TransactionConflict"

_REASONS_IN_MESSAGE = re.compile(r"reasons \[([^\]]*)\]")

# botocore refusing a request before it is sent (wrong parameter names or types, an unknown method):
# the adapter's bug, not the store's failure.
_REQUEST_BUGS = (
    ParamValidationError,
    RequestValidationError,
    UnknownClientMethodError,
    OperationNotPageableError,
    StubResponseError,
)

P = ParamSpec("P")
R = TypeVar("R")


def error_code(exc: ClientError) -> str:
    """The AWS error code of ``exc`` (``""`` when the response carries none)."""
    return str(exc.response.get("Error", {}).get("Code", ""))


def condition_held(write: Callable[..., object], **request: Any) -> bool:
    """One conditional write (``client.put_item``, ``update_item``, ``delete_item``) of ``request``:
    True when it landed, False when its condition failed (``ConditionalCheckFailedException``, an
    outcome the caller decides on); every other failure goes on to ``store_operation``."""
    try:
        write(**request)
    except ClientError as exc:
        if error_code(exc) != CONDITIONAL_CHECK_FAILED:
            raise
        return False
    return True


def cancellation_codes(exc: ClientError) -> list[str]:
    """Per-action reason codes of a ``TransactionCanceledException`` ("None" where it passed)."""
    reasons = exc.response.get("CancellationReasons")
    if reasons:
        return [str(reason.get("Code") or "None") for reason in reasons]
    # Fallback: the message says "... reasons [None, ConditionalCheckFailed, None]".
    match = _REASONS_IN_MESSAGE.search(str(exc.response.get("Error", {}).get("Message", "")))
    return [code.strip() for code in match.group(1).split(",")] if match else []


def is_cancellation(exc: ClientError) -> bool:
    return error_code(exc) == TRANSACTION_CANCELED


def condition_failed(codes: list[str], index: int) -> bool:
    """Whether action ``index`` of a cancelled transaction failed its condition."""
    return index < len(codes) and codes[index] == CONDITION_FAILED


def store_error(operation: str, exc: ClientError | BotoCoreError) -> StoreError:
    """``exc`` as the domain's ``StoreError`` (the caller chains it: ``raise … from exc``)."""
    if isinstance(exc, ClientError):
        code = error_code(exc) or "Unknown"
        message = exc.response.get("Error", {}).get("Message") or str(exc)
        return StoreError(f"{operation}: {exc.operation_name} {code}: {message}", operation=operation, code=code)
    code = type(exc).__name__
    return StoreError(f"{operation}: {code}: {exc}", operation=operation, code=code)


def store_operation(method: Callable[P, R]) -> Callable[P, R]:
    """Run ``method`` with every botocore failure it lets out translated into ``StoreError`` (its
    ``operation`` is the method's qualified name, ``DynamoStateStore.commit``)."""
    operation = method.__qualname__

    @functools.wraps(method)
    def translated(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except ClientError as exc:
            raise store_error(operation, exc) from exc
        except _REQUEST_BUGS:
            raise
        except BotoCoreError as exc:  # no answer: timeouts, connection errors, credentials
            raise store_error(operation, exc) from exc

    return translated
