"""What the providers' webhook payload models share (``meta_webhook``, ``twilio_form``).

A payload model ignores fields nobody reads (a provider adding fields changes nothing), is
immutable, and builds its schema at its first validation rather than at import: the webhook
function imports these at cold start. ``promptpipe.channels.parsing`` imports each provider's module only
when a payload of that provider arrives.

A required field that is missing is read as ``None`` (``required()``), so it fails as "must be a
string" / "must be an object", the way an explicit ``null`` does. Optional information is read
leniently (``LenientStr``, ``LenientText``, ``object_or_empty``): a malformed value reads as absent.
"""

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, StrictStr
from pydantic_core import PydanticCustomError

from promptpipe.lazy_model import LazyModel

# Error types raised by the models (beside pydantic's own); promptpipe.channels.parsing turns them into its errors.
WRONG_OBJECT = "wrong_object"
BLANK = "blank"
SENDER_WITHOUT_PHONE = "sender_without_phone"


class Payload(LazyModel):
    """A provider payload: unknown fields ignored, schema built at first validation, immutable."""

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)


def _non_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError(BLANK, "must not be empty")
    return value


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def object_or_empty(value: Any) -> Any:
    """A lenient object: anything but a dict reads as an empty one."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: Any) -> Any:
    """A lenient list: anything but a list reads as an empty one."""
    return value if isinstance(value, list) else []


# A required string with something in it (whitespace alone is empty).
NonBlank = Annotated[StrictStr, AfterValidator(_non_blank)]
# Optional text: anything but a string reads as absent (None) or as "".
LenientStr = Annotated[str | None, BeforeValidator(_str_or_none)]
LenientText = Annotated[str, BeforeValidator(_str_or_empty)]


def required() -> Any:
    """The default of a required field: missing reads as None, which then fails its type. A new
    ``FieldInfo`` per field: older pydantic releases merge a field's metadata into a shared one."""
    return Field(default=None, validate_default=True)
