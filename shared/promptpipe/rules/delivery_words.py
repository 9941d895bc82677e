"""What the record's delivery codes mean, in a coordinator's words (docs/console.md, "Every delivery
visible"): the reasons a message was not sent (``DeliveryOutcome.reason`` of a skipped or failed
message). A code such as ``outside_window_no_template`` is never shown raw. The providers' error codes
are ``usecases/delivery_reports.PLAIN_MEANINGS``. Pure data."""

from __future__ import annotations

SKIP_MEANINGS = {
    "outside_window_no_template": (
        "WhatsApp's 24-hour window was closed and no template is set up for this kind of message"
    ),
    "outside_window": "WhatsApp's 24-hour window was closed (a poll is never sent as a template)",
    "undeliverable": "the provider refused it for good",
    "retried": "the provider refused it; the send is retried",
    "participant opted out": "the participant had opted out",
    "participant paused": "the participant was paused",
    "participant withdrawn": "the participant had withdrawn",
    "participant completed": "the participant had completed the study",
    "participant deleted": "the participant was deleted",
    "no consent on record": "no consent is on record",
}


def skip_meaning(reason: str) -> str:
    """``reason`` in plain words (an unknown reason as written, underscores as spaces)."""
    return SKIP_MEANINGS.get(reason) or reason.replace("_", " ")
