"""What the de-identified export does to a value (docs/studies.md, "The de-identified export"):
a participant id becomes a salted pseudonym, an instant becomes a study day and a local time of day,
and free text (only with ``--include-text``) has its phone numbers, emails and the participant's
names masked. Pure functions; the salt comes from the caller (Secrets Manager or the settings)."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

import phonenumbers

from promptpipe.errors import PromptPipeError

# A salt shorter than this is refused: the pseudonyms would be guessable from the ids.
MIN_SALT_LENGTH = 16
PSEUDONYM_PREFIX = "ps_"
PSEUDONYM_HEX = 20  # 80 bits: no two participants of any study share one
PHONE_MASK, EMAIL_MASK, NAME_MASK = "[phone]", "[email]", "[name]"
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.UNICODE)
# What the phone matcher may not read as a number in the region (a foreign number without its +,
# digits run together): any run of 7 or more digits, spaces, dots, dashes or brackets.
DIGIT_RUN = re.compile(r"\+?\(?\d(?:[\d\s().-]{5,}\d)")
MIN_DIGITS_IN_RUN = 7
NAME_TOKEN = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
MIN_NAME_PART = 2  # an initial is not masked (it would mask every "I" and "A")


class MissingSalt(PromptPipeError, ValueError):
    """No pseudonym salt is set (``EXPORT_PSEUDONYM_SALT`` or in the secret), or it is too short."""


def check_salt(salt: str | None) -> str:
    if not salt:
        raise MissingSalt(
            "no pseudonym salt: set EXPORT_PSEUDONYM_SALT (or export_pseudonym_salt in the OpenAI or channel "
            "secret) to a random string kept for the study's life"
        )
    if len(salt) < MIN_SALT_LENGTH:
        raise MissingSalt(f"the pseudonym salt is {len(salt)} characters; it needs at least {MIN_SALT_LENGTH}")
    return salt


def pseudonym(participant_id: str, salt: str) -> str:
    """``ps_`` + the first 20 hex digits of HMAC-SHA256(salt, participant id): the same participant
    gets the same pseudonym in every export made with the same salt; without the salt it cannot be
    linked back to the id."""
    digest = hmac.new(check_salt(salt).encode(), participant_id.encode(), hashlib.sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:PSEUDONYM_HEX]


@dataclass(frozen=True)
class StudyClock:
    """One participant's calendar: study day 1 is the local date of enrolment."""

    zone: ZoneInfo
    enrolled_on: date

    @classmethod
    def of(cls, enrolled_at: datetime, zone: ZoneInfo) -> StudyClock:
        return cls(zone, enrolled_at.astimezone(zone).date())

    def study_day(self, instant: datetime) -> int:
        return (instant.astimezone(self.zone).date() - self.enrolled_on).days + 1

    def cell(self, instant: datetime | None, *, calendar_dates: bool = False) -> str:
        """``"3 08:15"``: study day 3 at 08:15 local; with ``calendar_dates`` the local ISO-8601 time
        with its offset; empty for no instant."""
        if instant is None:
            return ""
        local = instant.astimezone(self.zone)
        if calendar_dates:
            return local.isoformat(timespec="seconds")
        return f"{self.study_day(instant)} {local:%H:%M}"


def name_parts(*names: str) -> list[str]:
    """The words of a participant's names worth masking, longest first (so "Anna-Lena" goes before "Anna")."""
    parts = {token for name in names for token in NAME_TOKEN.findall(name) if len(token) >= MIN_NAME_PART}
    return sorted(parts, key=lambda part: (-len(part), part))


def mask_text(text: str, *, names: Iterable[str] = (), region: str = "US") -> str:
    """The text with phone numbers, emails and the given name words replaced by ``[phone]``,
    ``[email]`` and ``[name]``."""
    masked = EMAIL.sub(EMAIL_MASK, text)
    spans = [
        (match.start, match.end)
        for match in phonenumbers.PhoneNumberMatcher(masked, region, leniency=phonenumbers.Leniency.POSSIBLE)
    ]
    for start, end in reversed(spans):
        masked = masked[:start] + PHONE_MASK + masked[end:]
    masked = DIGIT_RUN.sub(_phone_like, masked)
    for part in name_parts(*names):
        masked = re.sub(rf"(?<!\w){re.escape(part)}(?!\w)", NAME_MASK, masked, flags=re.IGNORECASE)
    return masked


def _phone_like(match: re.Match[str]) -> str:
    digits = sum(ch.isdigit() for ch in match.group())
    return PHONE_MASK if digits >= MIN_DIGITS_IN_RUN else match.group()
