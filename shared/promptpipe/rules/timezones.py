"""One time-zone rule for the whole code base: IANA zone names only.

Enrollment, participant updates, the scheduler tool and the EventBridge adapter all call
``validate_iana_zone`` (the API models through the ``IanaTimeZone`` types), so a zone a participant
enrols with can always be scheduled. The names are the ``tzdata`` package's list (a dependency, so
the same on every machine and in Lambda), without the files of a zone database that are not zones
(``localtime``, ``posixrules``, ``posix/…``, ``right/…``) and without ``Factory`` (a placeholder
zone whose abbreviation is "-00"). Names are case-sensitive, as EventBridge Scheduler reads them.
"""

from __future__ import annotations

import functools
import importlib.resources
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from promptpipe.errors import PromptPipeError

# The zone of a participant enrolled without one (or with a name the zone database no longer knows):
# the original PromptPipe's zone for daily prompts (docs/behaviour.md#B-SCHED-3). The one zone rule:
# the participant's stored zone, else this default, in the prompts, the console, the transcript and
# the export alike, each saying that the default was applied.
DEFAULT_PARTICIPANT_ZONE = "America/Toronto"
DEFAULT_ZONE_NOTE = "default: enrolled without a time zone"
_NOT_ZONES = frozenset({"localtime", "posixrules", "Factory"})
_NOT_ZONE_DIRS = ("posix/", "right/")
EXAMPLE = "America/Toronto"


class InvalidTimeZone(PromptPipeError, ValueError):
    """``name`` is not an IANA time zone name."""


@functools.cache
def iana_zone_names() -> frozenset[str]:
    """Every accepted zone name (about 600, links such as ``US/Eastern`` included)."""
    listed = importlib.resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
    return frozenset(n for n in listed if n not in _NOT_ZONES and not n.startswith(_NOT_ZONE_DIRS))


def validate_iana_zone(name: Any) -> str:
    """``name`` when it is an IANA zone name; ``InvalidTimeZone`` (a ``ValueError``) otherwise."""
    if isinstance(name, str) and name in iana_zone_names():
        return name
    shown = repr(name[:60]) if isinstance(name, str) else type(name).__name__
    raise InvalidTimeZone(f"invalid timezone: {shown} is not an IANA time zone name (e.g. {EXAMPLE})")


def zone_or_utc(*names: str | None) -> ZoneInfo:
    """The first of ``names`` that names a zone, else UTC: the one reading of a stored zone, which may
    be empty (none given) or a name the zone database does not know."""
    for name in names:
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError, OSError):  # unknown; malformed; a folder such as "America"
                continue
    return ZoneInfo("UTC")


def zone_is_default(stored: str | None) -> bool:
    """Whether the participant's stored zone names no zone, so ``DEFAULT_PARTICIPANT_ZONE`` applies."""
    if not stored:
        return True
    try:
        ZoneInfo(stored)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return True
    return False


def participant_zone_name(stored: str | None) -> str:
    """The one zone rule: the participant's stored zone, else ``DEFAULT_PARTICIPANT_ZONE``."""
    return DEFAULT_PARTICIPANT_ZONE if zone_is_default(stored) else str(stored)


def participant_zone_label(stored: str | None) -> str:
    """The zone as shown to a coordinator: ``America/Toronto (default: enrolled without a time zone)``
    when the default applies, else the stored name."""
    name = participant_zone_name(stored)
    return f"{name} ({DEFAULT_ZONE_NOTE})" if zone_is_default(stored) else name


def _pydantic_zone(name: str) -> str:
    try:
        return validate_iana_zone(name)
    except InvalidTimeZone as exc:
        raise PydanticCustomError("iana_time_zone", str(exc)) from None


def _pydantic_zone_or_empty(name: str) -> str:
    return name if name == "" else _pydantic_zone(name)


_DESCRIPTION = f"An IANA time zone name such as {EXAMPLE} (case-sensitive)."

# A required zone, and a zone where "" means none (the participant's own zone at enrollment).
IanaTimeZone = Annotated[str, AfterValidator(_pydantic_zone), Field(description=_DESCRIPTION)]
IanaTimeZoneOrEmpty = Annotated[
    str, AfterValidator(_pydantic_zone_or_empty), Field(description=_DESCRIPTION + ' "" means none.')
]
