"""Every delivery visible (docs/console.md, "Every delivery visible"): per outbound message, its
outcome (sent, delivered, failed, skipped, not confirmed) with the code's plain meaning — a code such
as ``outside_window_no_template`` is never shown raw —, the channel, template or free text, and the
SMS segments (``rules/sms.py``); and the participant's cost by local day, for messages (segments at
``SMS_SEGMENT_USD``) and for the model (each call's tokens at ``rules/model_prices.py``'s price, as
the spend cap counts them), or at the study's own prices when the console is given the study
(``CostPrices.of``, docs/studies.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from promptpipe.flow.study_settings import model_prices
from promptpipe.models.store import Direction, TranscriptEntry
from promptpipe.models.study import StudyDefinition, study_setting
from promptpipe.rules.delivery_words import SKIP_MEANINGS, skip_meaning
from promptpipe.rules.model_prices import PRICES, ModelPrice, cost_usd
from promptpipe.rules.sms import SMS_SEGMENT_USD, segments
from promptpipe.usecases.delivery_reports import PLAIN_MEANINGS

CHANNELS = {"sms": "SMS", "whatsapp": "WhatsApp", "local": "local outbox"}
OUTCOMES = {
    "sent": "sent",
    "delivered": "delivered",
    "read": "delivered (read)",
    "failed": "failed",
    "skipped": "skipped",
    "pending": "not confirmed sent",
}


@dataclass(frozen=True)
class Delivery:
    outcome: str  # sent | delivered | failed | skipped | pending (the CSS class, and the words below)
    words: str
    meaning: str
    channel: str
    form: str  # "free text" | "template <name>"
    segments: int | None  # None: not an SMS


def meaning_of(code: str, reason: str = "") -> str:
    """A code's plain meaning: a provider's error code, a skip's code, or the reason recorded."""
    reason = reason.removeprefix("undelivered: ")
    if code in PLAIN_MEANINGS:
        return PLAIN_MEANINGS[code]
    if reason in SKIP_MEANINGS:
        return SKIP_MEANINGS[reason]
    if code and not reason:
        return f"the provider's code {code}; see its error list"
    return skip_meaning(reason)


def channel_of(entry: TranscriptEntry) -> str:
    """The channel recorded at the send; for an older entry, what its provider id says."""
    outcome = entry.delivery
    recorded = outcome.channel if outcome is not None else ""
    if recorded:
        return recorded
    provider_id = outcome.provider_id if outcome is not None else ""
    if provider_id.startswith("wamid."):
        return "whatsapp"
    if provider_id.startswith(("SM", "MM")):
        return "sms"
    if provider_id.startswith("local-"):
        return "local"
    return ""


def delivery_of(entry: TranscriptEntry) -> Delivery | None:
    """The delivery of an outbound entry (None for the participant's own and system entries)."""
    if entry.direction is not Direction.OUTBOUND:
        return None
    outcome = entry.delivery
    status = str(outcome.status) if outcome is not None else "sent"  # older entries meant sent
    meaning = ""
    if outcome is not None and status in ("failed", "skipped"):
        meaning = meaning_of(outcome.code, outcome.reason)
        if outcome.code and outcome.code in PLAIN_MEANINGS:
            meaning += f" (provider code {outcome.code})"
    elif status == "pending":
        meaning = "no outcome was recorded: the send may not have happened"
    channel = channel_of(entry)
    template = outcome.template if outcome is not None else ""
    count: int | None = None
    if channel in ("sms", "local"):
        count = (outcome.segments if outcome is not None and outcome.segments else 0) or segments(entry.content)
    return Delivery(
        outcome={"read": "delivered"}.get(status, status if status in OUTCOMES else "sent"),
        words=OUTCOMES.get(status, status),
        meaning=meaning,
        channel=CHANNELS.get(channel, channel or "—"),
        form=f"template {template}" if template else "free text",
        segments=count,
    )


def deliveries_by_line(lines: list[Any], entries: Iterable[TranscriptEntry]) -> dict[int, Delivery]:
    """Each chat line's delivery, by the line's identity: ``coordinator.summary.chat_lines`` makes
    one line per entry, in the order of (time, seq)."""
    ordered = sorted(entries, key=lambda e: (e.at, e.seq))
    if len(ordered) != len(lines):
        return {}
    found = {}
    for line, entry in zip(lines, ordered, strict=True):
        delivery = delivery_of(entry)
        if delivery is not None:
            found[id(line)] = delivery
    return found


@dataclass
class DayCost:
    day: date
    messages: int = 0
    segments: int = 0
    messages_usd: float = 0.0
    model_calls: int = 0
    model_usd: float = 0.0
    unpriced_calls: int = 0
    models: set[str] = field(default_factory=set)

    @property
    def total_usd(self) -> float:
        return self.messages_usd + self.model_usd


def _model_calls(entry: TranscriptEntry) -> list[dict[str, Any]]:
    calls = entry.metadata.get("llm_calls") if isinstance(entry.metadata, dict) else None
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


@dataclass(frozen=True)
class CostPrices:
    """What the cost estimate prices at: the list prices, or a study's over them."""

    models: Mapping[str, ModelPrice] = field(default_factory=lambda: PRICES)
    sms_segment_usd: float = SMS_SEGMENT_USD

    @classmethod
    def of(cls, study: StudyDefinition | None) -> CostPrices:
        segment = study_setting(study, "sms_segment_usd", SMS_SEGMENT_USD)
        assert isinstance(segment, int | float)  # StudySettings declares it a float
        return cls(model_prices(study) or PRICES, float(segment))


def cost_by_day(entries: Iterable[TranscriptEntry], zone: ZoneInfo, prices: CostPrices | None = None) -> list[DayCost]:
    """The participant's cost per local day: the segments of the messages that went out (sent or
    delivered) and every model call recorded in the turn audits (an unpriced model counted apart)."""
    prices = prices or CostPrices()
    days: dict[date, DayCost] = {}
    for entry in entries:
        day = entry.at.astimezone(zone).date()
        delivery = delivery_of(entry)
        calls = _model_calls(entry)
        if (delivery is None or delivery.outcome not in ("sent", "delivered")) and not calls:
            continue
        cost = days.setdefault(day, DayCost(day))
        if delivery is not None and delivery.outcome in ("sent", "delivered"):
            cost.messages += 1
            if delivery.segments:
                cost.segments += delivery.segments
                cost.messages_usd += delivery.segments * prices.sms_segment_usd
        for call in calls:
            cost.model_calls += 1
            model = str(call.get("model", ""))
            usd = cost_usd(
                model,
                int(call.get("prompt_tokens") or 0),
                int(call.get("completion_tokens") or 0),
                int(call.get("cached_tokens") or 0),
                prices.models,
            )
            if usd is None:
                cost.unpriced_calls += 1
                cost.models.add(model)
            else:
                cost.model_usd += usd
    return [days[d] for d in sorted(days)]


def delivery_context(
    lines: list[Any], entries: Sequence[TranscriptEntry], zone: ZoneInfo, prices: CostPrices | None = None
) -> dict[str, Any]:
    """What ``participant.html`` shows of the deliveries: each line's (``delivery_for``), the costs."""
    by_line = deliveries_by_line(lines, entries)
    prices = prices or CostPrices()
    return {
        "delivery_for": lambda line: by_line.get(id(line)),
        "costs": cost_by_day(entries, zone, prices),
        "segment_price": prices.sms_segment_usd,
    }
